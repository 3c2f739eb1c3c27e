#include "hammer/search/utf16.h"

#include <cstdint>
#include <cstdio>

namespace hammer::search {
namespace {

bool IsContinuation(uint8_t byte) {
  return (byte & 0xC0) == 0x80;
}

}  // namespace

char32_t DecodeUtf8CodePoint(std::string_view utf8, size_t* pos) {
  const size_t start = *pos;
  const auto byte_at = [&](size_t i) { return static_cast<uint8_t>(utf8[start + i]); };
  const uint8_t lead = byte_at(0);
  if (lead < 0x80) {
    *pos = start + 1;
    return lead;
  }
  // Table 3-7 restricts the second byte for some lead bytes; this is where overlong forms
  // (E0, F0), surrogates (ED) and values above U+10FFFF (F4) are excluded.
  size_t length = 0;
  char32_t code_point = 0;
  uint8_t second_min = 0x80;
  uint8_t second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
    if (lead == 0xE0) second_min = 0xA0;
    if (lead == 0xED) second_max = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;
  } else {
    return kInvalidCodePoint;  // 80..C1 (continuation or overlong lead) and F5..FF
  }
  if (utf8.size() - start < length) return kInvalidCodePoint;
  const uint8_t second = byte_at(1);
  if (second < second_min || second > second_max) return kInvalidCodePoint;
  for (size_t i = 1; i < length; ++i) {
    const uint8_t byte = byte_at(i);
    if (!IsContinuation(byte)) return kInvalidCodePoint;
    code_point = (code_point << 6) | (byte & 0x3F);
  }
  *pos = start + length;
  return code_point;
}

Status InvalidUtf8Error(std::string_view utf8, size_t offset) {
  char byte[8];
  std::snprintf(byte, sizeof(byte), "0x%02X",
                static_cast<unsigned>(static_cast<uint8_t>(utf8[offset])));
  return Status::Error("invalid UTF-8 at byte offset " + std::to_string(offset) + " (byte " + byte +
                       ")");
}

Result<std::u16string> Utf8ToUtf16(std::string_view utf8) {
  std::u16string out;
  out.reserve(utf8.size());  // never more code units than bytes
  Status status = ForEachUtf16CodeUnit(utf8, [&out](char16_t unit) { out.push_back(unit); });
  if (!status.ok()) return status;
  return out;
}

}  // namespace hammer::search
