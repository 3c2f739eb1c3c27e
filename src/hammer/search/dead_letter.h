// Dead letters: the documents `hammer bulk` and `hammer route` give up on, one JSON object per
// line, so nothing read is ever silently lost (documents read = indexed + dead-lettered).
//
// Line format (keys in this order):
//   {"reason":"…","status":N,"error_type":"…","action":A,"source":S,"line":L}
//  * reason: why, for a human ("mapper_parsing_exception: failed to parse field [n] …",
//    "invalid JSON: …", "retries exhausted after 8 retries: …").
//  * status: the item's HTTP status from the server (for retries exhausted, the last one, e.g.
//    429), 0 when no server answered for it (invalid input, outcome unknown, interrupted, a
//    transport failure).
//  * error_type: the server's error.type, or hammer's own: "invalid_input",
//    "retries_exhausted", "outcome_unknown", "http_error", "interrupted".
//  * action, source: the lines as read. Each is embedded as JSON when it is valid JSON (so
//    `jq -c '.action, .source' dead.jsonl` rebuilds a _bulk body of the valid ones), otherwise
//    as a JSON string holding the line; source is null when there was none (delete, or a lone
//    invalid line).
//  * line: the input line number of the document's first line.
//
// The file is an OutputFile (hammer/base/output_file.h): it is written beside its path and
// appears there when the writer is closed, so a run that was killed leaves no dead-letter file
// that looks complete. Errors: Open() fails when the file cannot be created; Write() remembers
// the first write error, which Close() returns (the path is then left as it was). Threads: Write()
// may be called from any thread (a mutex; dead letters are rare). FormatDeadLetter is reentrant.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "hammer/base/output_file.h"
#include "hammer/base/status.h"

namespace hammer::search {

struct DeadLetter {
  std::string_view reason;
  int status = 0;
  std::string_view error_type;
  std::string_view action;
  std::string_view source;
  bool has_source = false;
  uint64_t line = 0;
};

inline constexpr std::string_view kInvalidInputType = "invalid_input";
inline constexpr std::string_view kRetriesExhaustedType = "retries_exhausted";
inline constexpr std::string_view kOutcomeUnknownType = "outcome_unknown";
inline constexpr std::string_view kHttpErrorType = "http_error";
inline constexpr std::string_view kInterruptedType = "interrupted";

// One dead-letter line, with its '\n'.
std::string FormatDeadLetter(const DeadLetter& letter);

// `path` with every "{pid}" replaced by `pid`, so that the processes of one Spark pipe() or
// Hadoop job, which all run the same command line, each write a file of their own.
std::string ExpandDeadLetterPath(std::string_view path, long pid);

class DeadLetterWriter {
 public:
  // "-" is standard error. "{pid}" in the path is this process's id (ExpandDeadLetterPath).
  // The file replaces any earlier one when closed. "" writes no file: the first few letters
  // are summarised on standard error as "<label>: dead letter (line N): <reason>", the rest
  // only counted.
  static Result<std::unique_ptr<DeadLetterWriter>> Open(const std::string& path,
                                                        std::string label = "hammer");
  ~DeadLetterWriter();
  DeadLetterWriter(const DeadLetterWriter&) = delete;
  DeadLetterWriter& operator=(const DeadLetterWriter&) = delete;

  void Write(const DeadLetter& letter);
  uint64_t written() const;
  // Writes what is buffered and commits the file (also done by the destructor); the first error
  // seen, if any. Later letters are only counted.
  Status Close();

 private:
  DeadLetterWriter(std::optional<OutputFile> file, bool to_stderr, std::string path,
                   std::string label);
  void FlushLocked();

  mutable std::mutex mutex_;
  std::optional<OutputFile> file_;  // a path: written beside it until Close
  bool to_stderr_;                  // "-"
  std::string path_;
  std::string label_;
  std::string buffer_;  // lines not yet written to file_ or standard error
  uint64_t written_ = 0;
  Status error_;
};

}  // namespace hammer::search
