#include "hammer/http/request_writer.h"

#include <string>
#include <vector>

#include "hammer/http/message.h"

namespace hammer::http {

namespace {

bool HasHeader(const HeaderList& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return true;
  }
  return false;
}

bool MethodCarriesBody(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH";
}

}  // namespace

std::string SerializeRequestHead(std::string_view method, const Url& url, const HeaderList& headers,
                                 size_t body_size) {
  std::string head;
  head.reserve(128 + url.target.size());
  head.append(method).append(" ").append(url.target).append(" HTTP/1.1\r\n");
  if (!HasHeader(headers, "Host")) head.append("Host: ").append(url.HostHeader()).append("\r\n");
  if (!HasHeader(headers, "User-Agent")) head.append("User-Agent: hammer/" HAMMER_VERSION "\r\n");
  if (!HasHeader(headers, "Accept")) head.append("Accept: */*\r\n");
  for (const auto& [key, value] : headers) {
    head.append(key).append(": ").append(value).append("\r\n");
  }
  if ((body_size > 0 || MethodCarriesBody(method)) && !HasHeader(headers, "Content-Length") &&
      !HasHeader(headers, "Transfer-Encoding")) {
    head.append("Content-Length: ").append(std::to_string(body_size)).append("\r\n");
  }
  head.append("\r\n");
  return head;
}

bool IsIdempotentMethod(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS" || method == "TRACE" ||
         method == "PUT" || method == "DELETE";
}

Result<HeaderList> ParseHeaderFlags(const std::vector<std::string>& flags) {
  HeaderList headers;
  for (const std::string& h : flags) {
    const size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0) {
      return Status::Error("expected 'Name: value', got '" + h + "'");
    }
    std::string value = h.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    headers.emplace_back(h.substr(0, colon), value);
  }
  return headers;
}

}  // namespace hammer::http
