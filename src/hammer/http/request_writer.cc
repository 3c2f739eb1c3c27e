#include "hammer/http/request_writer.h"

#include <string>
#include <vector>

#include "hammer/http/head_scanner.h"
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
  SerializeRequestHead(method, url, headers, body_size, &head);
  return head;
}

void SerializeRequestHead(std::string_view method, const Url& url, const HeaderList& headers,
                          size_t body_size, std::string* out) {
  std::string& head = *out;
  head.clear();
  head.reserve(128 + url.target.size());
  head.append(method).append(" ").append(url.target).append(" HTTP/1.1\r\n");
  if (!HasHeader(headers, "Host")) {
    head.append("Host: ");
    url.AppendHostHeader(&head);
    head.append("\r\n");
  }
  if (!HasHeader(headers, "User-Agent")) head.append("User-Agent: hammer/" HAMMER_VERSION "\r\n");
  if (!HasHeader(headers, "Accept")) head.append("Accept: */*\r\n");
  for (const auto& [key, value] : headers) {
    // The body is framed by the Content-Length written below and nothing else: a caller's
    // Content-Length or Transfer-Encoding could disagree with it and desynchronise the
    // connection (request smuggling, RFC 9112 section 6.3).
    if (EqualsIgnoreCase(key, "Content-Length") || EqualsIgnoreCase(key, "Transfer-Encoding")) {
      continue;
    }
    head.append(key).append(": ").append(value).append("\r\n");
  }
  if (body_size > 0 || MethodCarriesBody(method)) {
    head.append("Content-Length: ").append(std::to_string(body_size)).append("\r\n");
  }
  head.append("\r\n");
}

bool IsIdempotentMethod(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS" || method == "TRACE" ||
         method == "PUT" || method == "DELETE";
}

Result<HeaderList> ParseHeaderFlags(const std::vector<std::string>& flags) {
  HeaderList headers;
  for (const std::string& h : flags) {
    if (h.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      // A CR or LF would end the header line early and put what follows on the wire as
      // another header or another request (RFC 9112 section 2.2).
      return Status::Error("a header may not contain CR, LF or NUL: '" + EscapeControls(h) + "'");
    }
    const size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0) {
      return Status::Error("expected 'Name: value', got '" + h + "'");
    }
    std::string name = h.substr(0, colon);
    if (!internal::IsToken(name)) return Status::Error("'" + name + "' is not a header name");
    if (EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Transfer-Encoding")) {
      return Status::Error(name +
                           " is hammer's to set: it frames the body (--body), and a second "
                           "framing would desynchronise the connection; remove this header");
    }
    if (EqualsIgnoreCase(name, "Host") && HasHeader(headers, "Host")) {
      return Status::Error("Host given twice (a request has one Host, RFC 9112 section 3.2)");
    }
    std::string value = h.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    headers.emplace_back(std::move(name), value);
  }
  return headers;
}

bool IsMethodName(std::string_view text) {
  return internal::IsToken(text);
}

std::string EscapeControls(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\0') {
      out += "\\0";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace hammer::http
