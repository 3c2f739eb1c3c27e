#include "hammer/base/json_string.h"

#include "hammer/base/word_bytes.h"

namespace hammer {
namespace {

// Whether eight bytes are all printable ASCII other than '"' and '\\': copied as they are.
bool PlainWord(uint64_t word) {
  using namespace word_bytes;
  return !HasHigh(word) && !HasLess(word, 0x20) && !HasByte(word, '"') && !HasByte(word, '\\') &&
         !HasByte(word, 0x7F);
}

}  // namespace

size_t Utf8SequenceLength(std::string_view s) {
  if (s.empty()) return 0;
  const auto b = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const auto tail = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const uint8_t c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return tail(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!tail(1) || !tail(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!tail(1) || !tail(2) || !tail(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

void AppendJsonEscaped(std::string& out, std::string_view s, InvalidUtf8 invalid) {
  static constexpr char kHex[] = "0123456789abcdef";
  size_t run = 0;  // s[run, i) is appended as it is
  size_t i = 0;
  while (i < s.size()) {
    if (i + 8 <= s.size() && PlainWord(word_bytes::Load(s.data() + i))) {
      i += 8;
      continue;
    }
    const auto c = static_cast<uint8_t>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7F) {
      const size_t n = c < 0x80 ? 1 : Utf8SequenceLength(s.substr(i));
      if (n > 0) {
        i += n;
        continue;
      }
    }
    out.append(s.data() + run, i - run);
    if (c >= 0x80) {
      if (invalid == InvalidUtf8::kReplace) {
        out.append("\\ufffd");
      } else {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
      }
    } else if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out.append("\\n");
    } else if (c == '\r') {
      out.append("\\r");
    } else if (c == '\t') {
      out.append("\\t");
    } else {
      out.append("\\u00").push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
    run = ++i;
  }
  out.append(s.data() + run, i - run);
}

void AppendJsonString(std::string& out, std::string_view text, InvalidUtf8 invalid) {
  out.push_back('"');
  AppendJsonEscaped(out, text, invalid);
  out.push_back('"');
}

}  // namespace hammer
