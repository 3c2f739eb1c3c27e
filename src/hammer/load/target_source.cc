#include "hammer/load/target_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <utility>

namespace hammer::load {

namespace {

LineReader::Options ReaderOptions(const SourceOptions& options) {
  LineReader::Options reader;
  reader.max_line_bytes = options.max_line_bytes;
  reader.block_bytes = TargetSource::kBlockBytes;
  return reader;  // a CR is the parser's business; an overlong line is cut and marked
}

}  // namespace

void SourceLine::Parse() {
  TargetLine parsed = ParseTargetLine(text);
  request_ = parsed.kind == TargetLine::Kind::kRequest;
  method_at_ = method_size_ = url_at_ = url_size_ = 0;
  if (!request_) return;
  // The method is a view into `text` unless the line names none (then it is "GET").
  const char* begin = text.data();
  if (parsed.method.data() >= begin && parsed.method.data() < begin + text.size()) {
    method_at_ = static_cast<size_t>(parsed.method.data() - begin);
    method_size_ = parsed.method.size();
  }
  url_at_ = static_cast<size_t>(parsed.url.data() - begin);
  url_size_ = parsed.url.size();
}

TargetLine SourceLine::target() const {
  TargetLine parsed;
  if (!request_) return parsed;
  parsed.kind = TargetLine::Kind::kRequest;
  parsed.method = method_size_ > 0 ? std::string_view(text).substr(method_at_, method_size_)
                                   : std::string_view("GET");
  parsed.url = std::string_view(text).substr(url_at_, url_size_);
  return parsed;
}

Result<std::unique_ptr<TargetSource>> TargetSource::Open(const std::string& path,
                                                         const SourceOptions& options) {
  int fd = path == "-" ? dup(STDIN_FILENO) : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("cannot open '" + path + "'", errno);
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    return Status::Error("'" + path + "' is a directory, not a URL list");
  }
  LineReader reader = LineReader::FromFd(
      fd, /*owns_fd=*/true, path == "-" ? "standard input" : path, ReaderOptions(options));
  // With --loop the first pass keeps what it reads: a short list cycled millions of times must
  // not cost a read and an lseek per pass, and a pipe can only be read once.
  if (options.loop) reader.KeepCopy(kMaxReplayBytes);
  return std::unique_ptr<TargetSource>(new TargetSource(std::move(reader), options));
}

std::unique_ptr<TargetSource> TargetSource::FromText(std::string text,
                                                     const SourceOptions& options) {
  return std::unique_ptr<TargetSource>(new TargetSource(
      LineReader::FromString(std::move(text), "text", ReaderOptions(options)), options));
}

TargetSource::TargetSource(LineReader reader, const SourceOptions& options)
    : reader_(std::move(reader)), options_(options), rng_(options.seed) {}

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
    LineReader::Line raw;
    Result<bool> more = reader_.Next(&raw);
    if (more.ok() && *more) {
      line.text.assign(raw.text);
      line.oversized = raw.overlong;
      line.Parse();
      ++lines_read_;
      // Comments and blank lines are handed out too (the worker skips them) but do not count:
      // they can never become a request.
      if (line.oversized || line.request()) ++requests_this_pass_;
      return true;
    }
    // End of this pass (a read error ends the input too). A pass without any request line
    // (empty, or only comments) would make --loop spin: stop instead.
    if (!options_.loop || requests_this_pass_ == 0 || !Rewind()) return false;
    requests_this_pass_ = 0;
  }
}

bool TargetSource::Rewind() {
  // Inputs up to kMaxReplayBytes are replayed from the copy the first pass kept; larger files
  // are read again.
  if (!replaying_) {
    if (std::optional<std::string> copy = reader_.TakeCopy()) {
      std::string name = reader_.name();
      reader_ = LineReader::FromString(std::move(*copy), std::move(name), ReaderOptions(options_));
      replaying_ = true;
      return true;
    }
  }
  if (reader_.Rewind()) return true;
  warning_ = "--loop: " + reader_.name() + " is larger than 256 MiB and cannot be replayed; " +
             "stopped at its end (use a regular file)";
  return false;
}

}  // namespace hammer::load
