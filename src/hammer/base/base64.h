// Base64: the standard alphabet with '=' padding (RFC 4648 section 4), as written by HdrHistogram
// (java.util.Base64) and read by every base64 tool.
//
// Encoding never fails. Decoding is strict so that a corrupt line is rejected rather than
// silently misread: the length must be a multiple of 4, padding may only end the text, every
// other byte must be in the alphabet (no whitespace, no URL-safe variant), and the unused bits
// of the last group must be zero (the one canonical spelling of each byte string).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer {

// Appends the base64 text of `bytes` to `out`.
void AppendBase64(std::string& out, std::string_view bytes);
std::string Base64Encode(std::string_view bytes);

// The bytes `text` encodes, or an error naming the first problem found.
Result<std::string> Base64Decode(std::string_view text);

// Exact encoded size of `byte_count` bytes.
constexpr size_t Base64EncodedSize(size_t byte_count) {
  return (byte_count + 2) / 3 * 4;
}

}  // namespace hammer
