// JsonTargetReader: reads vegeta's JSON targets format, one target at a time.
//
// One JSON object per line (vegeta README, "JSON format"; lib/target.schema.json):
//
//   {"method":"POST","url":"http://127.0.0.1:8080/users","header":{"Content-Type":
//    ["application/json"]},"body":"eyJuYW1lIjoiYWRhIn0="}
//
//   method  string, required: an HTTP token (RFC 9110 §5.6.2)
//   url     string, required: an absolute http(s) URL that ParseUrl accepts
//   header  object of arrays of strings, optional: each value is sent as its own header line,
//           in order; names keep their case
//   body    string, optional: the body in standard base64 with padding (how Go's
//           encoding/json writes []byte); decoded strictly (see base64.h)
//   ts      integer, optional: when the request arrived, Unix microseconds (`hammer dark
//           --capture` writes it; `hammer load --replay` sends each entry at its offset)
//   body_truncated  boolean, optional: the body was cut when recorded (RequestSpec)
//   conn    integer or string, optional: the client connection the request came on (`hammer
//           dark --capture` writes it), RequestSpec::client, for --split-by connection
// A null field counts as absent; other fields are ignored (a capture's protocol, status,
// latency_us, body_binary, body_size). Blank lines are skipped.
//
// Errors name the file, line and problem and stop the reader: "t.jsonl:3: invalid JSON: <what
// simdjson found>", "t.jsonl:4: 'url' is missing", "t.jsonl:5: header 'Accept' must be an
// array of strings". Memory is bounded by max_line_bytes (plus the parsed line). Movable; not
// thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "hammer/base/line_reader.h"
#include "hammer/base/status.h"
#include "hammer/load/request_spec.h"

namespace hammer::load {

struct JsonTargetOptions {
  size_t max_line_bytes = 64u << 20;  // bodies are inline, so lines can be long
  // As VegetaTargetOptions::interrupt.
  const std::atomic<bool>* interrupt = nullptr;
};

class JsonTargetReader {
 public:
  // `path` "-" reads standard input. Errors: the file cannot be opened.
  static Result<JsonTargetReader> Open(const std::string& path,
                                       const JsonTargetOptions& options = {});
  // Reads `text` as if it were the file `name`.
  static JsonTargetReader FromString(std::string text, std::string name,
                                     const JsonTargetOptions& options = {});

  JsonTargetReader(JsonTargetReader&&) noexcept;
  JsonTargetReader& operator=(JsonTargetReader&&) noexcept;
  ~JsonTargetReader();

  // Fills *out with the next target and returns true; false at the end of the input. After an
  // error, further calls return false. A last line without its '\n' that is not JSON is what
  // a writer killed mid-write leaves (kill -9 can cut a write(2) to a regular file, as of
  // a `hammer dark --capture`): it is dropped and said by cut_short(), not an error.
  Result<bool> Next(RequestSpec* out);

  // Once Next has returned false: empty, or why the input ended early (LineReader::cut_short,
  // or a cut last line).
  std::string cut_short() const;

 private:
  struct Parser;  // simdjson's parser, kept out of this header
  explicit JsonTargetReader(LineReader lines);
  // *not_json: the line is not JSON at all (as a cut one is), rather than a wrong target.
  Status ParseLine(std::string_view line, RequestSpec* out, bool* not_json);

  LineReader lines_;
  std::unique_ptr<Parser> parser_;  // reused from line to line
  bool failed_ = false;
  std::string cut_line_;  // "NAME:LINE": the cut last line dropped, if any
};

}  // namespace hammer::load
