#include "hammer/load/redact.h"

#include "hammer/http/message.h"

namespace hammer::load {

namespace {

// "a=1; b=2" -> "a=[redacted]; b=[redacted]"; for Set-Cookie only the first pair is a cookie.
std::string RedactCookies(std::string_view value, bool set_cookie) {
  std::string out;
  bool first = true;
  while (!value.empty()) {
    size_t end = value.find(';');
    std::string_view item = value.substr(0, end);
    size_t eq = item.find('=');
    if (!first) out.append(";");
    if ((first || !set_cookie) && eq != std::string_view::npos) {
      out.append(item.substr(0, eq + 1)).append("[redacted]");
    } else {
      out.append(item);
    }
    first = false;
    if (end == std::string_view::npos) break;
    value.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace

std::string RedactedValue(std::string_view name, std::string_view value) {
  if (http::EqualsIgnoreCase(name, "Authorization") ||
      http::EqualsIgnoreCase(name, "Proxy-Authorization")) {
    return "[redacted]";
  }
  if (http::EqualsIgnoreCase(name, "Cookie")) return RedactCookies(value, false);
  if (http::EqualsIgnoreCase(name, "Set-Cookie")) return RedactCookies(value, true);
  return std::string(value);
}

std::string RedactHead(std::string_view head, std::string_view prefix) {
  std::string out;
  bool first = true;
  while (!head.empty()) {
    size_t end = head.find('\n');
    std::string_view line = head.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    head.remove_prefix(end == std::string_view::npos ? head.size() : end + 1);
    if (line.empty()) break;
    out.append(prefix);
    size_t colon = line.find(':');
    if (first || colon == std::string_view::npos) {
      out.append(line);
    } else {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ')
        value.remove_prefix(1);
      out.append(line.substr(0, colon)).append(": ");
      out.append(RedactedValue(line.substr(0, colon), value));
    }
    out.append("\n");
    first = false;
  }
  return out;
}

}  // namespace hammer::load
