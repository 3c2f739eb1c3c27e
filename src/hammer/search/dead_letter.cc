#include "hammer/search/dead_letter.h"

#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "hammer/search/json_text.h"

namespace hammer::search {
namespace {

bool IsJson(std::string_view text) {
  // A parser per thread: dead letters come from the reader thread and from the event loop.
  thread_local simdjson::dom::parser parser;
  thread_local std::string padded;
  padded.assign(text);
  padded.append(simdjson::SIMDJSON_PADDING, ' ');
  simdjson::dom::element root;
  return parser.parse(padded.data(), text.size(), false).get(root) == simdjson::SUCCESS;
}

void AppendLine(std::string* out, std::string_view line) {
  if (IsJson(line)) {
    out->append(line);
  } else {
    AppendJsonString(out, line);
  }
}

}  // namespace

std::string FormatDeadLetter(const DeadLetter& letter) {
  std::string out = "{\"reason\":";
  AppendJsonString(&out, letter.reason);
  out.append(",\"status\":");
  out.append(std::to_string(letter.status));
  out.append(",\"error_type\":");
  AppendJsonString(&out, letter.error_type);
  out.append(",\"action\":");
  AppendLine(&out, letter.action);
  out.append(",\"source\":");
  if (letter.has_source) {
    AppendLine(&out, letter.source);
  } else {
    out.append("null");
  }
  out.append(",\"line\":");
  out.append(std::to_string(letter.line));
  out.append("}\n");
  return out;
}

std::string ExpandDeadLetterPath(std::string_view path, long pid) {
  constexpr std::string_view kPid = "{pid}";
  std::string out;
  while (true) {
    const size_t at = path.find(kPid);
    out.append(path.substr(0, at));
    if (at == std::string_view::npos) return out;
    out.append(std::to_string(pid));
    path.remove_prefix(at + kPid.size());
  }
}

Result<std::unique_ptr<DeadLetterWriter>> DeadLetterWriter::Open(const std::string& path_pattern,
                                                                 std::string label) {
  const std::string path = ExpandDeadLetterPath(path_pattern, static_cast<long>(getpid()));
  std::optional<OutputFile> file;
  if (!path.empty() && path != "-") {
    Result<OutputFile> opened = OutputFile::Open("--dead-letter", path);
    if (!opened.ok()) return opened.status();
    file.emplace(std::move(*opened));
  }
  return std::unique_ptr<DeadLetterWriter>(
      new DeadLetterWriter(std::move(file), path == "-", path, std::move(label)));
}

DeadLetterWriter::DeadLetterWriter(std::optional<OutputFile> file, bool to_stderr, std::string path,
                                   std::string label)
    : file_(std::move(file)),
      to_stderr_(to_stderr),
      path_(std::move(path)),
      label_(std::move(label)) {}

DeadLetterWriter::~DeadLetterWriter() {
  (void)Close();
}

void DeadLetterWriter::Write(const DeadLetter& letter) {
  constexpr uint64_t kSummarised = 10;
  if (path_.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (++written_ <= kSummarised) {
      std::fprintf(stderr, "%s: dead letter (line %llu): %.*s%s\n", label_.c_str(),
                   static_cast<unsigned long long>(letter.line),
                   static_cast<int>(std::min<size_t>(letter.reason.size(), 300)),
                   letter.reason.data(),
                   written_ == kSummarised ? " (further dead letters are only counted; use "
                                             "--dead-letter FILE)"
                                           : "");
    }
    return;
  }
  constexpr size_t kFlushBytes = 64 * 1024;
  const std::string line = FormatDeadLetter(letter);
  std::lock_guard<std::mutex> lock(mutex_);
  ++written_;
  if (!error_.ok() || (!file_ && !to_stderr_)) return;
  buffer_ += line;
  // Standard error is written line by line, as a log; a file in blocks.
  if (to_stderr_ || buffer_.size() >= kFlushBytes) FlushLocked();
}

void DeadLetterWriter::FlushLocked() {
  if (buffer_.empty()) return;
  if (file_) {
    error_ = file_->Write(buffer_);
  } else if (std::fwrite(buffer_.data(), 1, buffer_.size(), stderr) != buffer_.size()) {
    error_ = Status::FromErrno("--dead-letter: cannot write to standard error", errno);
  }
  buffer_.clear();
}

uint64_t DeadLetterWriter::written() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return written_;
}

Status DeadLetterWriter::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_.ok()) FlushLocked();
  if (file_) {
    Status committed = file_->Commit();
    if (error_.ok()) error_ = committed;
    file_.reset();
  }
  to_stderr_ = false;
  return error_;
}

}  // namespace hammer::search
