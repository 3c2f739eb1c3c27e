// HAR reader: the requests of an HTTP Archive (HAR 1.2, what a browser's "Save all as HAR"
// writes), ready to replay.
//
// From each element of log.entries[] (HAR 1.2 spec, "entries" / "request" / "postData"):
//   request.method           -> method
//   request.url              -> url
//   request.headers[]        -> headers, in order, except those listed below
//   request.postData.text    -> body (decoded first when postData.encoding is "base64", as
//                               the HAR 1.3 proposal and some tools write binary bodies);
//                               postData.mimeType becomes Content-Type when no header gives one
//   startedDateTime          -> offset: time since the earliest startedDateTime among the
//                               requests returned (ISO 8601 with optional fraction and a zone,
//                               "2024-05-01T10:00:00.123Z" or "...+02:00"; no zone means UTC);
//                               -1 when missing or unreadable
//   where                    -> "<name>:entry <n>" (n counts entries from 1)
// Requests come out in file order (browsers write entries in start order).
//
// Headers left out, because hammer writes them itself or they describe a connection rather
// than the request: HTTP/2 and HTTP/3 pseudo-headers (":method", ":authority", ...), Host,
// Content-Length, Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding, TE, Upgrade,
// and Accept-Encoding (hammer does not decompress responses; sending it would change what the
// server does and what is measured). Cookie and conditional headers (If-None-Match, ...) are
// kept: replaying the capture means sending what the browser sent.
//
// Entries that cannot or should not be replayed are skipped and counted in `skipped` under
// these reasons:
//   "malformed entry"       not an object, no request.method / request.url string, or
//                           request.headers not an array of {name, value} strings
//   "<scheme>: URL"         a URL that is not http(s): "data: URL", "blob: URL", "ws: URL",
//                           "wss: URL", "chrome-extension: URL", ...
//   "invalid URL"           an http(s) URL that ParseUrl rejects, or a URL without a scheme
//   "invalid method"        a method that is not an HTTP token
//   "invalid header"        a header whose name is not a token or whose value holds a control
//                           character (the request could not be sent as recorded)
//   "invalid body"          postData.encoding "base64" with text that is not base64
//   "served from cache"     Chrome's _fromCache ("memory" or "disk"): never sent
//   "no response"           response.status 0: Chrome's mark for requests that were blocked,
//                           cancelled or failed before an answer; most were never sent whole,
//                           so they are left out unless HarOptions::keep_unanswered is set
//
// A HAR is one JSON document and is read whole, then parsed with simdjson's DOM: expect
// three to four times the file size in memory while reading (90 MB took 330 MB). Errors, which stop
// the read: the file cannot be read, is larger than max_bytes, is not JSON, or has no log.entries
// array. Thread-safe: no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/load/request_spec.h"

namespace hammer::load {

struct HarOptions {
  size_t max_bytes = 512u << 20;
  bool keep_unanswered = false;  // replay entries with response.status 0 too
};

struct HarReadResult {
  std::vector<RequestSpec> requests;
  std::map<std::string, uint64_t> skipped;  // entries left out, by reason (see above)
};

// `path` "-" reads standard input.
Result<HarReadResult> ReadHar(const std::string& path, const HarOptions& options = {});
// Parses HAR text already in memory; `name` is used in messages and `where`.
Result<HarReadResult> ParseHar(std::string_view text, std::string_view name,
                               const HarOptions& options = {});

// Nanoseconds since the Unix epoch of an ISO 8601 date-time as HAR writes it:
// YYYY-MM-DDTHH:MM:SS, optional fraction (up to 9 digits used), then Z, +HH:MM, +HHMM, or
// nothing (UTC). False for anything else (dates are checked: month 1-12, day within the month).
bool ParseIsoTimestamp(std::string_view text, int64_t* nanos);

}  // namespace hammer::load
