#include "hammer/base/line_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <utility>

#include "hammer/base/zstd_frames.h"

namespace hammer {

Result<LineReader> LineReader::Open(const std::string& path, const Options& options) {
  if (path == "-") return LineReader(STDIN_FILENO, false, "stdin", options);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("open " + path, errno);
  return LineReader(fd, true, path, options);
}

LineReader LineReader::FromFd(int fd, bool owns_fd, std::string name, const Options& options) {
  return LineReader(fd, owns_fd, std::move(name), options);
}

LineReader LineReader::FromString(std::string text, std::string name, const Options& options) {
  LineReader reader(-1, false, std::move(name), options);
  reader.in_memory_ = true;
  reader.encoding_ = Encoding::kPlain;
  reader.end_ = text.size();
  reader.buffer_ = std::move(text);
  if (const void* last = memrchr(reader.buffer_.data(), '\n', reader.end_); last != nullptr) {
    reader.complete_ = static_cast<size_t>(static_cast<const char*>(last) - reader.buffer_.data());
    ++reader.complete_;
  }
  reader.eof_ = true;
  return reader;
}

LineReader::LineReader(int fd, bool owns_fd, std::string name, const Options& options)
    : fd_(fd), owns_fd_(owns_fd), name_(std::move(name)), options_(options) {
  struct stat st {};
  seekable_ = fd_ >= 0 && fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
}

LineReader::LineReader(LineReader&& other) noexcept {
  *this = std::move(other);
}

LineReader& LineReader::operator=(LineReader&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = std::exchange(other.fd_, -1);
    owns_fd_ = std::exchange(other.owns_fd_, false);
    seekable_ = std::exchange(other.seekable_, false);
    in_memory_ = std::exchange(other.in_memory_, false);
    name_ = std::move(other.name_);
    options_ = other.options_;
    buffer_ = std::move(other.buffer_);
    begin_ = std::exchange(other.begin_, 0);
    scanned_ = std::exchange(other.scanned_, 0);
    end_ = std::exchange(other.end_, 0);
    complete_ = std::exchange(other.complete_, 0);
    eof_ = std::exchange(other.eof_, true);
    skipping_ = std::exchange(other.skipping_, false);
    line_number_ = other.line_number_;
    last_unterminated_ = std::exchange(other.last_unterminated_, false);
    error_ = std::move(other.error_);
    keep_copy_ = std::exchange(other.keep_copy_, false);
    copy_limit_ = other.copy_limit_;
    copy_ = std::move(other.copy_);
    encoding_ = std::exchange(other.encoding_, Encoding::kSniffing);
    raw_ = std::move(other.raw_);
    raw_begin_ = std::exchange(other.raw_begin_, 0);
    zstd_ = std::move(other.zstd_);
    decoder_full_ = std::exchange(other.decoder_full_, false);
    cut_short_ = std::exchange(other.cut_short_, false);
  }
  return *this;
}

LineReader::~LineReader() {
  Close();
}

void LineReader::Close() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  fd_ = -1;
  owns_fd_ = false;
}

void LineReader::KeepCopy(size_t max_bytes) {
  keep_copy_ = true;
  copy_limit_ = max_bytes;
  copy_.emplace();
}

std::optional<std::string> LineReader::TakeCopy() {
  keep_copy_ = false;
  return std::exchange(copy_, std::nullopt);
}

bool LineReader::Rewind() {
  if (!in_memory_) {
    if (!seekable_ || lseek(fd_, 0, SEEK_SET) != 0) return false;
    buffer_.clear();
    end_ = complete_ = 0;
    eof_ = false;
    encoding_ = Encoding::kSniffing;
    raw_.clear();
    raw_begin_ = 0;
    if (zstd_) zstd_->Reset();
    decoder_full_ = false;
    cut_short_ = false;
  }
  begin_ = scanned_ = 0;
  skipping_ = false;
  line_number_ = 0;
  last_unterminated_ = false;
  error_ = Status::Ok();
  return true;
}

bool LineReader::WaitReadable() const {
  constexpr int kSliceMillis = 50;  // how late an interrupt may be noticed
  while (!options_.interrupt->load(std::memory_order_relaxed)) {
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, kSliceMillis);
    if (ready > 0 || (ready < 0 && errno != EINTR)) return true;  // read(2) tells what it is
  }
  return false;
}

Status LineReader::Fill() {
  if (in_memory_) {
    eof_ = true;
    return Status::Ok();
  }
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    scanned_ -= begin_;
    complete_ = complete_ > begin_ ? complete_ - begin_ : 0;
    begin_ = 0;
  }
  // buffer_ only grows (to at most max_line_bytes + block_bytes + 2 + the few bytes of a
  // sniffed beginning): no zero-filling per read.
  if (buffer_.size() < end_ + options_.block_bytes) buffer_.resize(end_ + options_.block_bytes);
  while (true) {
    if (encoding_ == Encoding::kZstd) {
      std::string_view input(raw_.data() + raw_begin_, raw_.size() - raw_begin_);
      Result<size_t> decoded = zstd_->Decode(&input, buffer_.data() + end_, buffer_.size() - end_);
      if (!decoded.ok()) {
        return Failed(Status::Error("read " + name_ + ": " + decoded.status().message()));
      }
      raw_begin_ = raw_.size() - input.size();
      decoder_full_ = *decoded == buffer_.size() - end_;
      if (*decoded > 0) {
        Took(*decoded);
        return Status::Ok();
      }
      raw_.erase(0, raw_begin_);  // what is left is the beginning of a block
      raw_begin_ = 0;
    }
    if (options_.interrupt != nullptr && !WaitReadable()) {
      return Failed(Status::Error("read " + name_ + ": interrupted"));
    }
    // Plain bytes are read where the lines are; others (and the first few, until the input's
    // encoding is known) beside them.
    const bool plain = encoding_ == Encoding::kPlain;
    char* into = plain ? buffer_.data() + end_ : nullptr;
    size_t room = plain ? buffer_.size() - end_ : options_.block_bytes;
    if (!plain) {
      const size_t had = raw_.size();
      raw_.resize(had + room);
      into = raw_.data() + had;
    }
    const ssize_t n = ::read(fd_, into, room);
    const int read_error = errno;
    if (!plain) raw_.resize(raw_.size() - room + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n > 0 && plain) {
      Took(static_cast<size_t>(n));
      return Status::Ok();
    }
    if (n > 0 || (n == 0 && encoding_ == Encoding::kSniffing)) {
      if (encoding_ == Encoding::kSniffing) {
        const std::string_view start(raw_.data(), std::min(raw_.size(), kZstdMagic.size()));
        const bool may_be_zstd = kZstdMagic.starts_with(start);
        if (may_be_zstd && start.size() < kZstdMagic.size() && n > 0) continue;  // read on
        if (may_be_zstd && start.size() == kZstdMagic.size()) {
          encoding_ = Encoding::kZstd;
          if (!zstd_) zstd_ = std::make_unique<ZstdStreamDecoder>();
          continue;
        }
        // Plain text: what was read to find out is the first of its bytes.
        encoding_ = Encoding::kPlain;
        if (buffer_.size() < end_ + raw_.size()) buffer_.resize(end_ + raw_.size());
        std::memcpy(buffer_.data() + end_, raw_.data(), raw_.size());
        const size_t sniffed = raw_.size();
        raw_.clear();
        if (n == 0) eof_ = true;
        Took(sniffed);
        return Status::Ok();
      }
      continue;  // compressed bytes: decoded at the top
    }
    if (n == 0) {
      eof_ = true;
      if (encoding_ == Encoding::kZstd && zstd_->inside_frame()) {
        // Cut inside a frame (a writer killed mid-write): the lines end at the last '\n'.
        cut_short_ = true;
        end_ = std::max(begin_, complete_);
        scanned_ = std::min(scanned_, end_);
      }
      return Status::Ok();
    }
    if (read_error != EINTR) return Failed(Status::FromErrno("read " + name_, read_error));
  }
}

void LineReader::Took(size_t n) {
  const char* data = buffer_.data() + end_;
  if (keep_copy_) {
    if (copy_ && copy_->size() + n <= copy_limit_) {
      copy_->append(data, n);
    } else {
      copy_.reset();
    }
  }
  if (const void* last = memrchr(data, '\n', n); last != nullptr) {
    complete_ = static_cast<size_t>(static_cast<const char*>(last) - buffer_.data()) + 1;
  }
  end_ += n;
}

Status LineReader::Failed(Status error) {
  eof_ = true;
  begin_ = scanned_ = end_ = complete_ = 0;
  skipping_ = false;
  return error;
}

std::string LineReader::cut_short() const {
  if (!cut_short_) return "";
  return name_ +
         " ends inside a zstd frame (cut short, as by a kill while it was written): "
         "read up to its last complete line";
}

bool LineReader::ReadableNow() const {
  if (in_memory_ || decoder_full_) return true;
  pollfd p{fd_, POLLIN, 0};
  int ready = ::poll(&p, 1, 0);
  return ready > 0 || (ready < 0 && errno != EINTR);  // read(2) tells what an error is
}

void LineReader::AwaitInput(int timeout_millis) const {
  if (in_memory_ || eof_) return;
  pollfd p{fd_, POLLIN, 0};
  ::poll(&p, 1, timeout_millis);  // an error or EINTR: the caller's next TryNext finds out
}

LineReader::Step LineReader::NextLine(Line* line, bool wait) {
  const size_t max = options_.max_line_bytes;
  while (true) {
    const char* data = buffer_.data();
    const void* found = std::memchr(data + scanned_, '\n', end_ - scanned_);
    if (skipping_) {
      if (found != nullptr) {
        skipping_ = false;
        begin_ = scanned_ = static_cast<size_t>(static_cast<const char*>(found) - data) + 1;
        continue;
      }
      begin_ = scanned_ = end_;
    } else if (found != nullptr || (eof_ && begin_ < end_)) {
      const size_t line_end =
          found != nullptr ? static_cast<size_t>(static_cast<const char*>(found) - data) : end_;
      size_t length = line_end - begin_;
      if (options_.strip_cr && length > 0 && data[line_end - 1] == '\r') --length;
      ++line_number_;
      line->text = std::string_view(data + begin_, std::min(length, max));
      line->overlong = length > max;
      last_unterminated_ = found == nullptr;
      begin_ = scanned_ = found != nullptr ? line_end + 1 : end_;
      break;
    } else if (end_ - begin_ > max + (options_.strip_cr ? 1 : 0)) {
      // Longer than allowed before its end has arrived: hand out its beginning, skip the rest.
      ++line_number_;
      line->text = std::string_view(data + begin_, max);
      line->overlong = true;
      last_unterminated_ = false;
      begin_ = scanned_ = end_;
      skipping_ = true;
      break;
    } else {
      scanned_ = end_;
    }
    if (eof_) return Step::kEnd;
    if (!wait && !ReadableNow()) return Step::kNotYet;
    if (Status read = Fill(); !read.ok()) {
      error_ = std::move(read);
      return Step::kError;
    }
  }
  if (line->overlong && options_.overlong_is_error) {
    eof_ = true;
    begin_ = scanned_ = end_ = complete_ = 0;
    skipping_ = false;
    error_ = Status::Error(name_ + ":" + std::to_string(line_number_) + ": line longer than " +
                           std::to_string(max) + " bytes");
    return Step::kError;
  }
  return Step::kLine;
}

Result<bool> LineReader::Next(Line* line) {
  switch (NextLine(line)) {
    case Step::kLine:
      return true;
    case Step::kNotYet:  // never when waiting
    case Step::kEnd:
      return false;
    case Step::kError:
      break;
  }
  return error_;
}

Result<LineReader::Poll> LineReader::TryNext(Line* line) {
  switch (NextLine(line, /*wait=*/false)) {
    case Step::kLine:
      return Poll::kLine;
    case Step::kNotYet:
      return Poll::kNotYet;
    case Step::kEnd:
      return Poll::kEnd;
    case Step::kError:
      break;
  }
  return error_;
}

Result<bool> LineReader::Next(std::string_view* line) {
  Line whole;
  Result<bool> more = Next(&whole);
  if (more.ok() && *more) *line = whole.text;
  return more;
}

Status LineReader::ReadAll(LineHandler& handler) {
  Line line;
  while (true) {
    if (!skipping_ && scanned_ == begin_ && complete_ > begin_) {
      size_t taken = handler.OnLines(std::string_view(buffer_.data() + begin_, complete_ - begin_));
      assert(taken <= complete_ - begin_ && (taken == 0 || buffer_[begin_ + taken - 1] == '\n'));
      begin_ = scanned_ = begin_ + taken;
    }
    switch (NextLine(&line)) {
      case Step::kLine:
        if (line.overlong) {
          handler.OnOverlongLine();
        } else {
          handler.OnLine(line.text);
        }
        continue;
      case Step::kNotYet:  // never when waiting
      case Step::kEnd:
        return Status::Ok();
      case Step::kError:
        return error_;
    }
  }
}

}  // namespace hammer
