#include "hammer/base/strings.h"

namespace hammer {
namespace {
constexpr size_t kMaxExcerptBytes = 80;
}  // namespace

std::string AsciiStrToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = AsciiToLower(c);
  return out;
}

std::string QuoteInput(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, kMaxExcerptBytes)) {
    unsigned char byte = static_cast<unsigned char>(c);
    out += (byte < 0x20 || byte == 0x7f) ? '?' : c;
  }
  if (text.size() > kMaxExcerptBytes) out += "...";
  return out + "'";
}

}  // namespace hammer
