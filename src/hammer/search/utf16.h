// Strict UTF-8 → UTF-16 decoding: how a byte string becomes the Java String the engines hash.
//
// Accepts exactly the well-formed UTF-8 of the Unicode Standard (Table 3-7): no overlong forms,
// no encoded surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequences or stray
// continuation bytes. A code point above U+FFFF becomes a surrogate pair (high, then low), as in
// a Java String. Nothing is ever replaced or skipped: malformed input is an error, because a
// replacement character would hash to a different shard than the server computes.
//
// Errors: malformed input yields a Status "invalid UTF-8 at byte offset N (byte 0xHH)".
// Ownership: the input is only read during the call.
// Threads: all functions are pure and reentrant.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer::search {

// Returned by DecodeUtf8CodePoint for a malformed sequence.
inline constexpr char32_t kInvalidCodePoint = 0xFFFFFFFF;

// Decodes the code point that starts at utf8[*pos] (requires *pos < utf8.size()) and advances
// *pos past it. On malformed input returns kInvalidCodePoint and leaves *pos unchanged.
char32_t DecodeUtf8CodePoint(std::string_view utf8, size_t* pos);

// The error DecodeUtf8CodePoint's callers report for a malformed sequence at `offset`.
Status InvalidUtf8Error(std::string_view utf8, size_t offset);

// Calls emit(char16_t) for each UTF-16 code unit of `utf8`, in order. On malformed input returns
// an error; emit has then already seen the code units of the valid prefix.
template <typename EmitCodeUnit>
Status ForEachUtf16CodeUnit(std::string_view utf8, EmitCodeUnit&& emit) {
  size_t pos = 0;
  while (pos < utf8.size()) {
    const char32_t code_point = DecodeUtf8CodePoint(utf8, &pos);
    if (code_point == kInvalidCodePoint) return InvalidUtf8Error(utf8, pos);
    if (code_point < 0x10000) {
      emit(static_cast<char16_t>(code_point));
    } else {
      const char32_t offset = code_point - 0x10000;
      emit(static_cast<char16_t>(0xD800 + (offset >> 10)));
      emit(static_cast<char16_t>(0xDC00 + (offset & 0x3FF)));
    }
  }
  return Status::Ok();
}

// The UTF-16 code units of `utf8` (what Java's String would hold), or an error.
Result<std::u16string> Utf8ToUtf16(std::string_view utf8);

}  // namespace hammer::search
