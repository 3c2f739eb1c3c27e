// The capture line: one exchange `hammer dark` served, written as one line of the JSON targets
// format `hammer load` reads (load/jsonl_targets.h: vegeta's `method`, `url`, `header`, `body`)
// with the exchange's own fields after them, which that reader ignores:
//
//   {"method":"POST","url":"https://api.example/users?token=REDACTED","header":{"Content-Type":
//    ["application/json"],"Authorization":["REDACTED"]},"body":"eyJuIjoxfQ==","ts":
//    1765100000123456,"protocol":"HTTP/2","status":201,"latency_us":1834,"conn":17}
//
//   method, url      the client's method, and the URL it asked for: the listener's scheme, the
//                    client's Host (or :authority), the target in origin-form
//   header           the request's end-to-end fields as forwarded upstream (hop-by-hop ones are
//                    gone, cookie crumbs are one Cookie line) without those the proxy asserts or
//                    that frame the body (Host: the URL carries it; Content-Length,
//                    Transfer-Encoding, Connection, TE, X-Forwarded-For, Forwarded,
//                    X-Hammer-Dark); names keep their case; repeated fields keep their order
//   body             base64 (vegeta's encoding), absent when empty; at most the capture's body
//                    limit
//   body_binary      true when the body is not text (a gRPC, protobuf or octet-stream content
//                    type, or bytes that are not printable UTF-8)
//   body_truncated   true when the body was longer than the limit (or streamed past it): `body`
//                    is then its beginning or absent; body_size is the size received
//   ts               arrival, Unix time in microseconds
//   protocol         what the client spoke: "HTTP/1.0", "HTTP/1.1" or "HTTP/2"
//   status           the status the client got (the upstream's, or the proxy's own 502, 503,
//                    504); 0 when the client left before an answer
//   latency_us       from the request's arrival to the end of the answer
//   conn             the client connection it came on: a number unique within one dark
//                    process (requests of one HTTP/2 connection share it), so that a replay
//                    split across machines keeps a connection's requests together
//                    (`hammer load --split-by connection`)
//
// Secrets: the values of the fields named Authorization, Proxy-Authorization, Cookie,
// Set-Cookie and X-Api-Key, and of the query parameters named token, key, password and sig, are
// replaced by "REDACTED" (names compared without case), with more names added and some kept
// by CaptureRedaction. JSON strings escape '"', '\\' and control bytes; a byte that is not part
// of valid UTF-8 is written as the code point of the same value (\u00XX, Latin-1), so every
// line is valid JSON. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hammer::dark {

inline constexpr std::string_view kRedacted = "REDACTED";

// Which header fields and query parameters have their values replaced.
class CaptureRedaction {
 public:
  // The defaults (above), plus `redact`, minus `keep` (names of fields or parameters; any case).
  CaptureRedaction(const std::vector<std::string>& redact = {},
                   const std::vector<std::string>& keep = {});

  bool RedactsHeader(std::string_view name) const;
  bool RedactsParameter(std::string_view name) const;

  // `target` ("/p?a=1&token=x") with the value of each redacted parameter replaced; the rest,
  // order and separators included, unchanged.
  std::string RedactTarget(std::string_view target) const;

 private:
  static bool Listed(const std::vector<std::string>& names, std::string_view name);
  std::vector<std::string> headers_;     // lower case
  std::vector<std::string> parameters_;  // lower case
};

// What the proxy knows of one exchange when it ends, handed to the capture writer whole.
struct CapturedExchange {
  int64_t arrival_us = 0;     // Unix time
  std::string_view protocol;  // a literal: "HTTP/1.0", "HTTP/1.1", "HTTP/2"
  bool https = false;         // the listener terminates TLS
  std::string authority;      // the client's Host; empty: none was sent
  // The head forwarded upstream (ForwardRequestHead: "METHOD TARGET HTTP/1.1\r\nName: value
  // \r\n...\r\n"); method, target and fields are read from it.
  std::string head;
  std::string body;        // at most the capture's body limit
  uint64_t body_size = 0;  // as received
  bool body_truncated = false;
  int status = 0;
  int64_t latency_us = 0;
  uint64_t connection = 0;  // http::IncomingRequest::connection; 0: not written
};

// Appends the capture line of `exchange` (with its final '\n') to `out`.
void AppendCaptureLine(std::string& out, const CapturedExchange& exchange,
                       const CaptureRedaction& redaction);

// Whether a body is best kept as binary: by its Content-Type (gRPC, protobuf, octet-stream,
// images, audio, video, compressed archives), else by its bytes (not valid UTF-8, or a control
// byte other than tab, CR and LF).
bool IsBinaryBody(std::string_view content_type, std::string_view body);

}  // namespace hammer::dark
