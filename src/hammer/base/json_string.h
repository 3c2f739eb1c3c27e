// JSON string literals (RFC 8259 §7) written from bytes, for every writer of JSON lines that
// copies text it did not make: capture lines (`hammer dark --capture`), bulk actions and dead
// letters (`hammer bulk`).
//
// '"' and '\\' are escaped, and so are the control bytes (below 0x20, and DEL): \n, \r and \t by
// their short forms, the others as \u00XX. Valid UTF-8 (RFC 3629 §4) is copied as is. JSON text
// is UTF-8 (RFC 8259 §8.1), so a byte that is not part of valid UTF-8 cannot be copied; the
// caller chooses what it becomes (InvalidUtf8). Runs of bytes that need nothing are copied
// whole, eight bytes checked at a time.
//
// Errors: none. Threads: pure and reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hammer {

enum class InvalidUtf8 : uint8_t {
  kReplace,  // U+FFFD, the replacement character: the byte's value is lost
  kLatin1,   // the code point of the byte's value (0xE9 becomes U+00E9): reversible
};

// `text` escaped for the inside of a JSON string (no quotes), appended to `out`.
void AppendJsonEscaped(std::string& out, std::string_view text, InvalidUtf8 invalid);

// `text` as a JSON string literal, with its quotes, appended to `out`.
void AppendJsonString(std::string& out, std::string_view text, InvalidUtf8 invalid);

// The length of the valid UTF-8 sequence at the start of `text` (RFC 3629 §4), 0 if there is
// none (or `text` is empty).
size_t Utf8SequenceLength(std::string_view text);

}  // namespace hammer
