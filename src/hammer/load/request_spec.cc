#include "hammer/load/request_spec.h"

#include <string>

#include "hammer/base/strings.h"
#include "hammer/http/url.h"

namespace hammer::load {
namespace {

constexpr size_t kMaxMethodBytes = 32;

bool IsToken(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

}  // namespace

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

Status CheckMethod(std::string_view method) {
  if (!IsToken(method) || method.size() > kMaxMethodBytes) {
    return Status::Error("bad method " + QuoteInput(method));
  }
  return Status::Ok();
}

Status CheckUrl(std::string_view url) {
  Result<http::Url> parsed = http::ParseUrl(url);
  if (!parsed.ok())
    return Status::Error("bad URL " + QuoteInput(url) + ": " + parsed.status().message());
  return Status::Ok();
}

Status CheckHeader(std::string_view name, std::string_view value) {
  if (!IsToken(name)) return Status::Error("bad header name " + QuoteInput(name));
  for (char c : value) {
    unsigned char byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t') || byte == 0x7f) {
      return Status::Error("control character in the value of header " + QuoteInput(name));
    }
  }
  return Status::Ok();
}

}  // namespace hammer::load
