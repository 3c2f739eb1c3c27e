// VegetaTargetReader: reads vegeta's http targets format, one target at a time.
//
// The format (vegeta README, "HTTP format"; lib/targets.go) is a list of targets:
//
//   GET http://127.0.0.1:8080/users/1          request line: METHOD URL
//   X-Account-ID: 8675309                      header lines: Name: value (repeatable)
//   Authorization: Bearer abc
//
//   POST http://127.0.0.1:8080/users           the next target
//   Content-Type: application/json
//   @bodies/user.json                          the body file (read when the target is read)
//
//   # a comment
//
// Rules, as vegeta's own reader applies them and a little more:
//   - Lines are trimmed of spaces and tabs; blank lines separate targets and may repeat.
//   - Lines starting with '#' are comments, anywhere.
//   - A request line is a METHOD (1-16 upper-case letters, as vegeta's `^[A-Z]+\s`) and an
//     absolute http(s) URL (ParseUrl must accept it), separated by whitespace.
//   - A header line is "Name: value": the name a token, the value without control characters
//     (empty values are allowed; vegeta rejects them). Names keep their case, repeats are kept.
//   - "@path" names the body file and ends the target; a relative path is taken from the
//     directory of the targets file (vegeta takes it from the working directory), or from the
//     working directory for standard input. The file must be a regular file of at most
//     max_body_bytes; it is read when its target is returned.
//   - A request line where a header is expected starts the next target (no blank line needed).
//
// Errors name the file and line and stop the reader: "targets.txt:12: expected 'METHOD URL',
// got 'Host: x'", "targets.txt:14: body file 'b.json': open ./b.json: No such file or
// directory". Memory is bounded by max_line_bytes plus the largest body. Movable; not
// thread-safe (one reader feeds one producer).
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

#include "hammer/base/line_reader.h"
#include "hammer/base/status.h"
#include "hammer/load/request_spec.h"

namespace hammer::load {

struct VegetaTargetOptions {
  size_t max_line_bytes = 1 << 20;
  size_t max_body_bytes = 256u << 20;
  // When set and true, a read waiting on an idle pipe or terminal ends with the error "read
  // <name>: interrupted" (LineReader::Options::interrupt). Not owned.
  const std::atomic<bool>* interrupt = nullptr;
};

class VegetaTargetReader {
 public:
  // `path` "-" reads standard input. Errors: the file cannot be opened.
  static Result<VegetaTargetReader> Open(const std::string& path,
                                         const VegetaTargetOptions& options = {});
  // Reads `text` as if it were the file `name`; relative body paths are taken from body_dir.
  static VegetaTargetReader FromString(std::string text, std::string name, std::string body_dir,
                                       const VegetaTargetOptions& options = {});

  // Fills *out with the next target and returns true; false at the end of the input. After an
  // error, further calls return false.
  Result<bool> Next(RequestSpec* out);

  // Once Next has returned false: empty, or why the input ended early (LineReader::cut_short).
  std::string cut_short() const { return lines_.cut_short(); }

 private:
  VegetaTargetReader(LineReader lines, std::string body_dir, const VegetaTargetOptions& options);
  Result<bool> NextLine(std::string_view* line);  // the pending line first, then the stream
  Status ReadBody(std::string_view path, std::string* body) const;
  Status Fail(const std::string& message);  // "name:line: message"; ends the reader

  LineReader lines_;
  std::string body_dir_;
  VegetaTargetOptions options_;
  std::string pending_;  // a request line read while looking for headers
  uint64_t pending_line_ = 0;
  bool has_pending_ = false;
  uint64_t line_ = 0;  // number of the line being parsed
  bool failed_ = false;
};

}  // namespace hammer::load
