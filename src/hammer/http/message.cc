#include "hammer/http/message.h"

#include "hammer/base/strings.h"

namespace hammer::http {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && AsciiToLower(a[i]) != AsciiToLower(b[i])) return false;
  }
  return true;
}

bool ListHasToken(std::string_view list, std::string_view token) {
  bool found = false;
  ForEachListItem(list,
                  [&](std::string_view item) { found = found || EqualsIgnoreCase(item, token); });
  return found;
}

std::optional<std::string_view> FindHeader(std::span<const Header> headers, std::string_view name) {
  for (const Header& header : headers) {
    if (EqualsIgnoreCase(header.name, name)) return header.value;
  }
  return std::nullopt;
}

// Names are snake_case so they can serve as counter names and log keys unchanged.
std::string_view ParseErrorName(ParseError e) {
  switch (e) {
    case ParseError::kNone:
      return "none";
    case ParseError::kBadStartLine:
      return "bad_start_line";
    case ParseError::kBadVersion:
      return "bad_version";
    case ParseError::kBadHeader:
      return "bad_header";
    case ParseError::kHeadTooLarge:
      return "head_too_large";
    case ParseError::kTooManyHeaders:
      return "too_many_headers";
    case ParseError::kBadContentLength:
      return "bad_content_length";
    case ParseError::kBadTransferEncoding:
      return "bad_transfer_encoding";
    case ParseError::kUnsupportedTransferCoding:
      return "unsupported_transfer_coding";
    case ParseError::kBadHost:
      return "bad_host";
    case ParseError::kBadChunk:
      return "bad_chunk";
    case ParseError::kChunkLineTooLong:
      return "chunk_line_too_long";
    case ParseError::kBodyTooLarge:
      return "body_too_large";
    case ParseError::kTruncated:
      return "truncated";
  }
  return "unknown";
}

}  // namespace hammer::http
