// AccessLogReader: reads a web server's access log in the combined format as a request file,
// one entry at a time.
//
// The combined format (nginx's predefined `combined` log_format; Apache's LogFormat "%h %l %u
// %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-agent}i\""):
//
//   127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a.gif?x=1 HTTP/1.0" 200 2326 "-" "curl"
//   $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent
//   "$http_referer" "$http_user_agent"
//
// The common format (the same without the last two fields) is read too, and fields after the
// user agent are ignored. Inside the quoted request, `\"`, `\\` and `\xHH` are unescaped (how
// nginx and Apache escape it).
//
// What an entry becomes: the method and target of `$request` ("METHOD TARGET[ PROTOCOL]"), sent
// to `origin` ("scheme://host[:port]", which the log does not carry: --base-url) as
// origin + TARGET; `$time_local` as RequestSpec::timestamp_us (one-second resolution: the
// second's start); `$remote_addr` as the entry's client (RequestSpec::client), so that a split
// by connection keeps each client's requests together. The log carries no headers and no
// bodies, so only GET and HEAD are replayed.
//
// A line that is not in the format is an error naming the file and line, which stops the
// reader ("access.log:7: expected '[' and the time after the user field"), as for the other
// request files. A line in the format whose request cannot be replayed is skipped and counted
// by reason (skipped()): another method ("POST and other methods carry a body the log does not
// hold"), or a request that is not "METHOD /target" (nginx logs "-" or the raw bytes of a
// request it could not parse, with status 400). Blank lines are skipped. Memory is bounded by
// max_line_bytes. Movable; not thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "hammer/base/line_reader.h"
#include "hammer/base/status.h"
#include "hammer/load/request_spec.h"

namespace hammer::load {

struct AccessLogOptions {
  size_t max_line_bytes = 1 << 20;
  // As VegetaTargetOptions::interrupt.
  const std::atomic<bool>* interrupt = nullptr;
};

// One parsed line of a combined (or common) log.
struct AccessLogLine {
  std::string_view remote_addr;
  int64_t time_unix_seconds = 0;  // $time_local with its zone applied
  std::string request;            // $request, unescaped
  int status = 0;
};

// Parses `line`; errors say what was expected where (no location).
Result<AccessLogLine> ParseAccessLogLine(std::string_view line);

// Parses nginx's $time_local / Apache's %t: "10/Oct/2000:13:55:36 -0700" as Unix seconds.
Result<int64_t> ParseLogTime(std::string_view text);

class AccessLogReader {
 public:
  // `path` "-" reads standard input; `origin` is "scheme://host[:port]". Errors: the file
  // cannot be opened.
  static Result<AccessLogReader> Open(const std::string& path, std::string origin,
                                      const AccessLogOptions& options = {});
  // Reads `text` as if it were the file `name`.
  static AccessLogReader FromString(std::string text, std::string name, std::string origin,
                                    const AccessLogOptions& options = {});

  // Fills *out with the next replayable entry and returns true; false at the end of the input.
  // After an error, further calls return false.
  Result<bool> Next(RequestSpec* out);

  // Lines in the format that were not replayed, by reason.
  const std::map<std::string, uint64_t>& skipped() const { return skipped_; }

 private:
  AccessLogReader(LineReader lines, std::string origin);

  LineReader lines_;
  std::string origin_;
  std::map<std::string, uint64_t> skipped_;
  bool failed_ = false;
};

}  // namespace hammer::load
