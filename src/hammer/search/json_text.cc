#include "hammer/search/json_text.h"

#include "hammer/base/json_string.h"

namespace hammer::search {

void AppendJsonString(std::string* out, std::string_view text) {
  hammer::AppendJsonString(*out, text, InvalidUtf8::kReplace);
}

std::string JsonString(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  AppendJsonString(&out, text);
  return out;
}

}  // namespace hammer::search
