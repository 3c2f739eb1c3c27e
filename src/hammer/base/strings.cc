#include "hammer/base/strings.h"

namespace hammer {

std::string AsciiStrToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = AsciiToLower(c);
  return out;
}

}  // namespace hammer
