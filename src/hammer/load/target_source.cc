#include "hammer/load/target_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <optional>
#include <utility>

namespace hammer::load {

namespace {

LineReader::Options ReaderOptions(const SourceOptions& options,
                                  const std::atomic<bool>* interrupt = nullptr) {
  LineReader::Options reader;
  reader.max_line_bytes = options.max_line_bytes;
  reader.block_bytes = TargetSource::kBlockBytes;
  reader.interrupt = interrupt;
  return reader;  // a CR is the parser's business; an overlong line is cut and marked
}

// "127.0.0.1:8080/", "localhost:8080", "api.internal:443/v1": HOST:PORT[/PATH], a URL whose
// scheme was left out (curl guesses http://; hammer says so instead).
bool LooksLikeUrlWithoutScheme(const std::string& path) {
  const size_t colon = path.find(':');
  if (colon == 0 || colon == std::string::npos || path.find('/') < colon) return false;
  size_t end = colon + 1;
  while (end < path.size() && path[end] >= '0' && path[end] <= '9')
    ++end;
  return end > colon + 1 && (end == path.size() || path[end] == '/');
}

Result<int> OpenInputFd(const std::string& path) {
  int fd = path == "-" ? dup(STDIN_FILENO) : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && LooksLikeUrlWithoutScheme(path)) {
    return Status::Error(
        "'" + path + "' is neither a file nor a URL: a URL needs its scheme (http://" + path + ")");
  }
  if (fd < 0) return Status::FromErrno("cannot open '" + path + "'", errno);
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    return Status::Error("'" + path + "' is a directory, not a URL list");
  }
  return fd;
}

std::string InputName(const std::string& path) {
  return path == "-" ? "standard input" : path;
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
  Result<int> fd = OpenInputFd(path);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<TargetSource> source(
      new TargetSource(LineReader::FromString(std::string(), "", ReaderOptions(options)), options));
  source->reader_ = LineReader::FromFd(*fd, /*owns_fd=*/true, InputName(path),
                                       ReaderOptions(options, &source->interrupted_));
  // With --loop the first pass keeps what it reads: a short list cycled millions of times must
  // not cost a read and an lseek per pass, and a pipe can only be read once.
  if (options.loop) source->reader_.KeepCopy(kMaxReplayBytes);
  return source;
}

bool TargetSource::IsUrl(const std::string& input) {
  // SCHEME "://" something (RFC 3986 scheme characters): an unsupported scheme is then sent as
  // a URL and counted as invalid_url, not looked for as a file.
  const size_t colon = input.find("://");
  if (colon == 0 || colon == std::string::npos || colon + 3 >= input.size()) return false;
  if (!std::isalpha(static_cast<unsigned char>(input[0]))) return false;
  for (size_t i = 1; i < colon; ++i) {
    const unsigned char c = static_cast<unsigned char>(input[i]);
    if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

Result<std::unique_ptr<TargetSource>> TargetSource::Open(const std::vector<std::string>& inputs,
                                                         const SourceOptions& options) {
  if (inputs.empty()) return Open("-", options);
  std::vector<Part> parts;
  for (const std::string& input : inputs) {
    if (IsUrl(input)) {
      // Consecutive URLs make one part; a URL is one line, never a line break smuggled in.
      if (input.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
        return Status::Error("a URL argument may not contain CR, LF or NUL");
      }
      if (parts.empty() || !parts.back().path.empty()) parts.emplace_back();
      parts.back().text.append(input).append("\n");
      continue;
    }
    if (input == "-" && inputs.size() > 1 && options.loop) {
      return Status::Error(
          "standard input can be replayed (--loop, --duration) only as the sole input");
    }
    Result<int> fd = OpenInputFd(input);  // a missing file is an error now, not mid-run
    if (!fd.ok()) return fd.status();
    close(*fd);
    parts.push_back(Part{input, ""});
  }
  if (parts.size() == 1 && !parts[0].path.empty()) return Open(parts[0].path, options);
  std::unique_ptr<TargetSource> source(
      new TargetSource(LineReader::FromString(std::string(), "", ReaderOptions(options)), options));
  source->parts_ = std::move(parts);
  if (!source->OpenPart(0)) return Status::Error(source->warning_);
  return source;
}

std::unique_ptr<TargetSource> TargetSource::FromText(std::string text,
                                                     const SourceOptions& options) {
  return std::unique_ptr<TargetSource>(new TargetSource(
      LineReader::FromString(std::move(text), "text", ReaderOptions(options)), options));
}

TargetSource::TargetSource(LineReader reader, const SourceOptions& options)
    : reader_(std::move(reader)), options_(options), rng_(options.seed) {}

bool TargetSource::OpenPart(size_t index) {
  part_ = index;
  const Part& part = parts_[index];
  if (part.path.empty()) {
    reader_ = LineReader::FromString(part.text, "arguments", ReaderOptions(options_));
    return true;
  }
  Result<int> fd = OpenInputFd(part.path);
  if (!fd.ok()) {
    warning_ = fd.status().message() + "; the inputs after it were not read";
    return false;
  }
  reader_ = LineReader::FromFd(*fd, /*owns_fd=*/true, InputName(part.path),
                               ReaderOptions(options_, &interrupted_));
  return true;
}

uint64_t TargetSource::lines_read() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lines_read_;
}

std::string TargetSource::warning() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return warning_;
}

TargetSource::Batch TargetSource::NextBatch(std::vector<SourceLine>& out, size_t max) {
  std::lock_guard<std::mutex> lock(mutex_);
  out.resize(max);
  size_t n = 0;
  LineReader::Poll last = LineReader::Poll::kLine;
  while (n < max) {
    if (!options_.shuffle) {
      if ((last = ReadLine(out[n])) != LineReader::Poll::kLine) break;
      ++n;
      continue;
    }
    while (window_.size() < options_.shuffle_window) {
      SourceLine line;
      if ((last = ReadLine(line)) != LineReader::Poll::kLine) break;
      window_.push_back(std::move(line));
    }
    if (window_.empty()) break;
    size_t pick = std::uniform_int_distribution<size_t>(0, window_.size() - 1)(rng_);
    std::swap(window_[pick], window_.back());
    out[n++] = std::move(window_.back());
    window_.pop_back();
  }
  out.resize(n);
  if (n > 0) {
    if (waiting_since_ != 0) waited_ += MonoNow() - waiting_since_;
    waiting_since_ = 0;
    return Batch::kLines;
  }
  if (last != LineReader::Poll::kNotYet) return Batch::kEnd;
  if (waiting_since_ == 0) waiting_since_ = MonoNow();
  return Batch::kNotYet;
}

void TargetSource::AwaitInput(int timeout_millis) const {
  std::lock_guard<std::mutex> lock(mutex_);
  reader_.AwaitInput(timeout_millis);
}

Nanos TargetSource::waited(MonoNanos now) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waited_ + (waiting_since_ != 0 ? std::max<Nanos>(0, now - waiting_since_) : 0);
}

LineReader::Poll TargetSource::ReadLine(SourceLine& line) {
  while (true) {
    LineReader::Line raw;
    Result<LineReader::Poll> got = reader_.TryNext(&raw);
    if (got.ok() && *got == LineReader::Poll::kNotYet) {
      return interrupted_.load() ? LineReader::Poll::kEnd : LineReader::Poll::kNotYet;
    }
    if (got.ok() && *got == LineReader::Poll::kLine) {
      line.text.assign(raw.text);
      line.oversized = raw.overlong;
      line.Parse();
      ++lines_read_;
      // Comments and blank lines are handed out too (the worker skips them) but do not count:
      // they can never become a request.
      if (line.oversized || line.request()) ++requests_this_pass_;
      return LineReader::Poll::kLine;
    }
    if (interrupted_.load()) return LineReader::Poll::kEnd;
    if (std::string cut = reader_.cut_short(); !cut.empty() && warning_.empty()) {
      warning_ = std::move(cut);
    }
    // The next of several inputs.
    if (part_ + 1 < parts_.size()) {
      if (!OpenPart(part_ + 1)) return LineReader::Poll::kEnd;
      continue;
    }
    // End of this pass (a read error ends the input too). A pass without any request line
    // (empty, or only comments) would make --loop spin: stop instead.
    if (!options_.loop || requests_this_pass_ == 0 || !Rewind()) return LineReader::Poll::kEnd;
    requests_this_pass_ = 0;
  }
}

bool TargetSource::Rewind() {
  if (!parts_.empty()) return OpenPart(0);  // several inputs: read them all again
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
