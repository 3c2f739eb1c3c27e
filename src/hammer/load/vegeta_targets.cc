#include "hammer/load/vegeta_targets.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "hammer/base/strings.h"
#include "hammer/load/target_line.h"

namespace hammer::load {
namespace {

// "GET http://..." as opposed to a header line: the first word is a method and whitespace
// follows. A header name cannot contain whitespace, so the two never overlap.
bool IsRequestLine(std::string_view line) {
  size_t space = line.find_first_of(" \t");
  return space != std::string_view::npos && LooksLikeMethod(line.substr(0, space));
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

Result<VegetaTargetReader> VegetaTargetReader::Open(const std::string& path,
                                                    const VegetaTargetOptions& options) {
  LineReader::Options line_options = LineReader::WholeLines(options.max_line_bytes);
  line_options.interrupt = options.interrupt;
  Result<LineReader> lines = LineReader::Open(path, line_options);
  if (!lines.ok()) return lines.status();
  return VegetaTargetReader(std::move(lines).value(), path == "-" ? "." : DirectoryOf(path),
                            options);
}

VegetaTargetReader VegetaTargetReader::FromString(std::string text, std::string name,
                                                  std::string body_dir,
                                                  const VegetaTargetOptions& options) {
  return VegetaTargetReader(LineReader::FromString(std::move(text), std::move(name),
                                                   LineReader::WholeLines(options.max_line_bytes)),
                            std::move(body_dir), options);
}

VegetaTargetReader::VegetaTargetReader(LineReader lines, std::string body_dir,
                                       const VegetaTargetOptions& options)
    : lines_(std::move(lines)), body_dir_(std::move(body_dir)), options_(options) {}

Status VegetaTargetReader::Fail(const std::string& message) {
  failed_ = true;
  return Status::Error(lines_.name() + ":" + std::to_string(line_) + ": " + message);
}

Result<bool> VegetaTargetReader::NextLine(std::string_view* line) {
  if (has_pending_) {
    has_pending_ = false;
    line_ = pending_line_;
    *line = pending_;
    return true;
  }
  Result<bool> more = lines_.Next(line);
  if (!more.ok()) {
    failed_ = true;
    return more.status();
  }
  line_ = lines_.line_number();
  return *more;
}

Status VegetaTargetReader::ReadBody(std::string_view path, std::string* body) const {
  std::string full(path);
  if (path.front() != '/') full = body_dir_ + "/" + full;
  std::string what = "body file " + QuoteInput(path) + ": ";
  // O_NONBLOCK: opening a FIFO must not hang the reader; only regular files are read.
  int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::Error(what + Status::FromErrno("open " + full, errno).message());
  struct stat info;
  Status status;
  if (::fstat(fd, &info) != 0) {
    status = Status::Error(what + Status::FromErrno("stat " + full, errno).message());
  } else if (!S_ISREG(info.st_mode)) {
    status = Status::Error(what + full + " is not a regular file");
  } else if (static_cast<uint64_t>(info.st_size) > options_.max_body_bytes) {
    status =
        Status::Error(what + "larger than " + std::to_string(options_.max_body_bytes) + " bytes");
  } else {
    body->resize(static_cast<size_t>(info.st_size));
    size_t done = 0;
    while (done < body->size()) {
      ssize_t n = ::read(fd, body->data() + done, body->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        status = Status::Error(what + Status::FromErrno("read " + full, errno).message());
        break;
      }
      if (n == 0) break;  // shrank while reading: send what is there
      done += static_cast<size_t>(n);
    }
    body->resize(done);
  }
  ::close(fd);
  return status;
}

Result<bool> VegetaTargetReader::Next(RequestSpec* out) {
  if (failed_) return false;
  std::string_view line;
  // The request line: blank lines and comments before it are skipped.
  while (true) {
    Result<bool> more = NextLine(&line);
    if (!more.ok()) return more.status();
    if (!*more) return false;
    line = TrimOws(line);
    if (!line.empty() && line.front() != '#') break;
  }
  if (!IsRequestLine(line)) {
    return Fail("expected 'METHOD URL', got " + QuoteInput(line));
  }
  size_t space = line.find_first_of(" \t");
  *out = RequestSpec();
  out->method = std::string(line.substr(0, space));
  std::string_view url = TrimOws(line.substr(space));
  if (Status ok = CheckUrl(url); !ok.ok()) return Fail(ok.message());
  out->url = std::string(url);
  out->where = lines_.name() + ":" + std::to_string(line_);

  // Headers, up to a blank line, a body line, the next request line or the end.
  while (true) {
    Result<bool> more = NextLine(&line);
    if (!more.ok()) return more.status();
    if (!*more) break;
    line = TrimOws(line);
    if (line.empty()) break;
    if (line.front() == '#') continue;
    if (line.front() == '@') {
      std::string_view path = TrimOws(line.substr(1));
      if (path.empty()) return Fail("'@' without a body file name");
      if (Status ok = ReadBody(path, &out->body); !ok.ok()) return Fail(ok.message());
      break;
    }
    if (IsRequestLine(line)) {
      pending_ = std::string(line);
      pending_line_ = line_;
      has_pending_ = true;
      break;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      return Fail("expected 'Name: value' or '@body-file', got " + QuoteInput(line));
    }
    std::string_view name = TrimOws(line.substr(0, colon));
    std::string_view value = TrimOws(line.substr(colon + 1));
    if (Status ok = CheckHeader(name, value); !ok.ok()) return Fail(ok.message());
    out->headers.emplace_back(name, value);
  }
  return true;
}

}  // namespace hammer::load
