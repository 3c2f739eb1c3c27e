// Views of parsed HTTP/1.x message heads. Every string_view points into the caller's input
// buffer and is valid only until that buffer changes; copy what must outlive it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace hammer::http {

struct Header {
  std::string_view name;
  std::string_view value;  // leading and trailing whitespace removed
};

// Case-insensitive ASCII comparison, as HTTP field names require.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// True when `token` is one of the items of the comma-separated field value `list` (as
// ForEachListItem in hammer/base/strings.h splits it: trimmed, empty items skipped), compared
// with EqualsIgnoreCase. E.g. "upgrade" is in "keep-alive, Upgrade"; an empty token never is.
bool ListHasToken(std::string_view list, std::string_view token);

// The value of the first header named `name`, if any.
std::optional<std::string_view> FindHeader(std::span<const Header> headers, std::string_view name);

// How a message body is delimited (RFC 9112 §6).
enum class BodyFraming : uint8_t {
  kNone,           // no body (HEAD response, 1xx/204/304, request without length)
  kContentLength,  // exactly content_length bytes
  kChunked,        // Transfer-Encoding: chunked
  kUntilClose,     // response read until the server closes (no length, not chunked)
};

struct ResponseHead {
  int major_version = 1;  // 2: received on an HTTP/2 stream (minor_version is then 0)
  int minor_version = 1;  // HTTP/1.<minor_version>
  int status = 0;
  std::string_view reason;
  std::span<const Header> headers;
  BodyFraming framing = BodyFraming::kNone;
  uint64_t content_length = 0;  // meaningful when framing == kContentLength
  bool keep_alive = true;       // false: the connection must be closed after this response
};

struct RequestHead {
  std::string_view method;
  std::string_view target;  // request-target as sent: origin-form "/path?q" or absolute-form
  int major_version = 1;    // 2: received on an HTTP/2 stream (minor_version is then 0)
  int minor_version = 1;
  std::span<const Header> headers;
  BodyFraming framing = BodyFraming::kNone;  // never kUntilClose for requests
  uint64_t content_length = 0;
  bool keep_alive = true;
  bool expect_continue = false;  // "Expect: 100-continue"
};

// Why a message could not be parsed. Each maps to a clear message for logs and summaries.
enum class ParseError : uint8_t {
  kNone,
  kBadStartLine,               // malformed status line / request line
  kBadVersion,                 // not HTTP/1.0 or HTTP/1.1
  kBadHeader,                  // malformed header field
  kHeadTooLarge,               // head exceeds Limits::max_head_bytes
  kTooManyHeaders,             // more than Limits::max_headers fields
  kBadContentLength,           // unparsable or conflicting Content-Length
  kBadTransferEncoding,        // Transfer-Encoding other than a final "chunked"; in a request, a
                               // malformed coding list, or Transfer-Encoding with Content-Length
  kUnsupportedTransferCoding,  // request: a transfer coding other than one "chunked" (501)
  kBadHost,                    // request: duplicate Host, invalid Host value, or (HTTP/1.1)
                               // no Host at all (RFC 9112 §3.2)
  kBadChunk,                   // malformed chunk size line or missing CRLF after chunk data
  kChunkLineTooLong,           // chunk-size line or trailer line over Limits::max_line_bytes
  kBodyTooLarge,               // request body over Limits::max_body_bytes (server side: 413)
  kTruncated,                  // the connection ended inside a message
};

std::string_view ParseErrorName(ParseError e);

// Size caps. The defaults suit both a load generator and a proxy; a proxy answers 431 when a
// head is too large and 413 when a body is.
struct Limits {
  size_t max_head_bytes = 64 * 1024;
  size_t max_headers = 128;
  size_t max_line_bytes = 8 * 1024;  // chunk-size lines and trailer lines
  uint64_t max_body_bytes = UINT64_MAX;
};

// Outcome of one Feed() call.
struct Progress {
  enum class State : uint8_t {
    kNeedMore,  // all of `consumed` bytes were used; feed more input
    kComplete,  // a whole message ended; bytes after `consumed` belong to the next message
    kError,     // see `error`; the connection cannot be reused
  };
  size_t consumed = 0;
  State state = State::kNeedMore;
  ParseError error = ParseError::kNone;
};

}  // namespace hammer::http
