#include "hammer/search/json_text.h"

#include "hammer/search/utf16.h"

namespace hammer::search {

void AppendJsonString(std::string* out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t pos = 0;
  while (pos < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[pos]);
    if (c >= 0x80) {
      // Copy a whole valid sequence; replace one bad byte and go on.
      size_t next = pos;
      if (DecodeUtf8CodePoint(text, &next) == kInvalidCodePoint) {
        out->append("\\ufffd");
        ++pos;
      } else {
        out->append(text.substr(pos, next - pos));
        pos = next;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++pos;
  }
  out->push_back('"');
}

std::string JsonString(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  AppendJsonString(&out, text);
  return out;
}

}  // namespace hammer::search
