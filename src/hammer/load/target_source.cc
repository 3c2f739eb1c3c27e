#include "hammer/load/target_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "hammer/load/target_line.h"

namespace hammer::load {

namespace {
constexpr size_t kBlockBytes = 64 * 1024;
}

Result<std::unique_ptr<TargetSource>> TargetSource::Open(const std::string& path,
                                                         const SourceOptions& options) {
  net::Fd fd;
  if (path == "-") {
    fd = net::Fd(dup(STDIN_FILENO));
  } else {
    fd = net::Fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  }
  if (!fd.valid()) return Status::FromErrno("cannot open '" + path + "'", errno);
  struct stat st {};
  if (fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Status::Error("'" + path + "' is a directory, not a URL list");
  }
  auto source = std::unique_ptr<TargetSource>(
      new TargetSource(std::move(fd), path == "-" ? "standard input" : path, options));
  source->seekable_ = S_ISREG(st.st_mode);
  return source;
}

std::unique_ptr<TargetSource> TargetSource::FromText(std::string text,
                                                     const SourceOptions& options) {
  auto source = std::unique_ptr<TargetSource>(new TargetSource(net::Fd(), "text", options));
  source->buffer_ = std::move(text);
  if (source->buffer_.empty() || source->buffer_.back() != '\n') source->buffer_.push_back('\n');
  source->buffer_end_ = source->buffer_.size();
  source->eof_ = true;
  source->replay_ = source->buffer_;
  return source;
}

TargetSource::TargetSource(net::Fd fd, std::string name, const SourceOptions& options)
    : fd_(std::move(fd)), name_(std::move(name)), options_(options), rng_(options.seed) {}

uint64_t TargetSource::lines_read() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lines_read_;
}

std::string TargetSource::warning() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return warning_;
}

bool TargetSource::NextBatch(std::vector<SourceLine>& out, size_t max) {
  std::lock_guard<std::mutex> lock(mutex_);
  out.resize(max);
  size_t n = 0;
  while (n < max) {
    if (!options_.shuffle) {
      if (!ReadLine(out[n])) break;
      ++n;
      continue;
    }
    while (window_.size() < options_.shuffle_window) {
      SourceLine line;
      if (!ReadLine(line)) break;
      window_.push_back(std::move(line));
    }
    if (window_.empty()) break;
    size_t pick = std::uniform_int_distribution<size_t>(0, window_.size() - 1)(rng_);
    std::swap(window_[pick], window_.back());
    out[n++] = std::move(window_.back());
    window_.pop_back();
  }
  out.resize(n);
  return n > 0;
}

bool TargetSource::ReadLine(SourceLine& line) {
  while (true) {
    if (ReadRawLine(line)) {
      ++lines_read_;
      // Comments and blank lines are handed out too (the worker skips them) but do not count:
      // they can never become a request.
      if (line.oversized || ParseTargetLine(line.text).kind == TargetLine::Kind::kRequest) {
        ++requests_this_pass_;
      }
      return true;
    }
    // End of this pass. A pass without any request line (empty, or only comments) would make
    // --loop spin: stop instead.
    if (!options_.loop || requests_this_pass_ == 0 || !Rewind()) return false;
    requests_this_pass_ = 0;
  }
}

bool TargetSource::Rewind() {
  // Inputs up to kMaxReplayBytes are replayed from memory (a short list cycled millions of
  // times must not cost a read and an lseek per pass); larger files are read again.
  if (!replay_overflow_) {
    replaying_ = true;
    replay_offset_ = 0;
    return true;
  }
  if (fd_.valid() && seekable_ && lseek(fd_.get(), 0, SEEK_SET) == 0) {
    eof_ = false;
    buffer_start_ = buffer_end_ = 0;
    skipping_rest_of_line_ = false;
    return true;
  }
  warning_ = "--loop: " + name_ + " is larger than 256 MiB and cannot be replayed; " +
             "stopped at its end (use a regular file)";
  return false;
}

bool TargetSource::FillBuffer() {
  if (eof_ || !fd_.valid()) return false;
  if (buffer_start_ > 0) {
    std::copy(buffer_.begin() + static_cast<std::ptrdiff_t>(buffer_start_),
              buffer_.begin() + static_cast<std::ptrdiff_t>(buffer_end_), buffer_.begin());
    buffer_end_ -= buffer_start_;
    buffer_start_ = 0;
  }
  // buffer_ only grows (a long line), never shrinks: no zero-filling per read.
  if (buffer_.size() < buffer_end_ + kBlockBytes) buffer_.resize(buffer_end_ + kBlockBytes);
  while (true) {
    ssize_t n = read(fd_.get(), buffer_.data() + buffer_end_, kBlockBytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    if (options_.loop && !replay_overflow_ && !replaying_) {
      if (replay_.size() + static_cast<size_t>(n) > kMaxReplayBytes) {
        replay_overflow_ = true;
        std::string().swap(replay_);
      } else {
        replay_.append(buffer_.data() + buffer_end_, static_cast<size_t>(n));
      }
    }
    buffer_end_ += static_cast<size_t>(n);
    return true;
  }
}

bool TargetSource::ReadRawLine(SourceLine& line) {
  if (replaying_) {
    if (replay_offset_ >= replay_.size()) return false;
    size_t end = replay_.find('\n', replay_offset_);
    if (end == std::string::npos) end = replay_.size();
    size_t len = end - replay_offset_;
    line.oversized = len > options_.max_line_bytes;
    line.text.assign(replay_, replay_offset_, std::min(len, options_.max_line_bytes));
    replay_offset_ = end + 1;
    return true;
  }
  while (true) {
    std::string_view pending(buffer_.data() + buffer_start_, buffer_end_ - buffer_start_);
    size_t newline = pending.find('\n');
    if (skipping_rest_of_line_) {
      if (newline == std::string_view::npos) {
        buffer_start_ = buffer_end_;
        if (!FillBuffer()) {
          skipping_rest_of_line_ = false;
          return false;
        }
        continue;
      }
      buffer_start_ += newline + 1;
      skipping_rest_of_line_ = false;
      continue;
    }
    if (newline != std::string_view::npos) {
      line.oversized = newline > options_.max_line_bytes;
      line.text.assign(pending.substr(0, std::min(newline, options_.max_line_bytes)));
      buffer_start_ += newline + 1;
      return true;
    }
    if (pending.size() > options_.max_line_bytes) {
      // Cut here and drop the rest of the line: memory stays bounded.
      line.oversized = true;
      line.text.assign(pending.substr(0, options_.max_line_bytes));
      buffer_start_ = buffer_end_;
      skipping_rest_of_line_ = true;
      return true;
    }
    if (!FillBuffer()) {
      // FillBuffer compacts and resizes buffer_: `pending` may point into freed memory.
      std::string_view rest(buffer_.data() + buffer_start_, buffer_end_ - buffer_start_);
      if (rest.empty()) return false;
      line.oversized = false;  // last line without a newline
      line.text.assign(rest);
      buffer_start_ = buffer_end_;
      return true;
    }
  }
}

}  // namespace hammer::load
