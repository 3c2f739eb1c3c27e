// Head scanning shared by ResponseParser and RequestParser: finding where a message head ends,
// splitting off its start line, and parsing its header fields together with the facts the
// framing rules need (RFC 9112 §5, §6; RFC 9110 §5.6, §7.6.1, §8.6).
//
// Internal to hammer/http; not part of the public API. Functions here are pure (no state
// beyond their arguments), never allocate except through the caller's `headers` vector, and
// may be called from any thread on distinct arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "hammer/http/message.h"

namespace hammer::http::internal {

// Result of looking for a complete head at the start of the input.
struct HeadScan {
  size_t length = 0;  // bytes of the head, ending empty line included; 0 while incomplete
  ParseError error = ParseError::kNone;  // kHeadTooLarge, or kNone
  std::string_view start_line;           // line ending removed; set when length > 0
  std::string_view field_lines;          // header lines and the ending empty line
};

// Looks for the empty line that ends a head. Accepts CRLF and bare LF line endings.
// `*scanned` is where the previous call on the same (grown) input stopped; it is updated so
// repeated calls on a growing input cost O(n) in total, and must be reset to 0 when the head
// is consumed. Reports kHeadTooLarge as soon as more than `max_head_bytes` bytes are pending
// without a complete head inside them.
HeadScan ScanHead(std::string_view input, size_t max_head_bytes, size_t* scanned);

// What the framing rules need to know from the header fields.
struct FieldFacts {
  bool has_content_length = false;
  uint64_t content_length = 0;
  bool has_transfer_encoding = false;
  bool chunked = false;                    // the final transfer coding is "chunked"
  uint32_t transfer_codings = 0;           // codings listed over every Transfer-Encoding field
  bool transfer_coding_malformed = false;  // an empty Transfer-Encoding or a non-token coding
  uint32_t host_fields = 0;                // Host field lines
  bool host_invalid = false;               // a Host value that is not uri-host [":" port]
  bool connection_close = false;           // "Connection: close"
  bool connection_keep_alive = false;      // "Connection: keep-alive"
  bool expect_continue = false;            // "Expect: 100-continue"

  // Whether the connection persists after this message, judged from the headers alone
  // (RFC 9112 §9.3): HTTP/1.1 unless "close"; HTTP/1.0 only with "keep-alive". A message
  // carrying Transfer-Encoding in HTTP/1.0 has faulty framing and closes (RFC 9112 §6.1).
  bool KeepAlive(int minor_version) const;
};

// Parses `field_lines` (as returned by ScanHead) into `headers` (cleared first; at most
// `max_headers` entries, views into field_lines) and `facts`. Returns kBadHeader,
// kTooManyHeaders or kBadContentLength on failure, else kNone.
ParseError ParseFieldLines(std::string_view field_lines, size_t max_headers,
                           std::vector<Header>* headers, FieldFacts* facts);

// Parses one "name: value" line (line ending removed). False if the name is not a token,
// whitespace precedes the colon, the line is an obs-fold continuation, or the value holds a
// control character other than HT. The value is trimmed of spaces and tabs.
bool ParseFieldLine(std::string_view line, Header* header);

// Parses "HTTP/1.0" or "HTTP/1.1". kBadVersion for another "HTTP/..." version, kBadStartLine
// for anything else.
ParseError ParseHttpVersion(std::string_view text, int* minor_version);

// True if every byte of `text` may appear in a field value, reason phrase or chunk extension:
// HT, SP, visible ASCII, or obs-text (bytes >= 0x80). False for other control characters.
bool IsFieldText(std::string_view text);

// True if `text` is a non-empty token (RFC 9110 §5.6.2), e.g. a method or a header name.
bool IsToken(std::string_view text);

}  // namespace hammer::http::internal
