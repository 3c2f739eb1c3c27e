#include "hammer/dark/forwarding.h"

#include <charconv>

#include "hammer/http/server.h"

namespace hammer::dark {

namespace {

constexpr std::string_view kHopByHop[] = {
    "connection", "keep-alive",         "proxy-connection",   "te", "trailer", "transfer-encoding",
    "upgrade",    "proxy-authenticate", "proxy-authorization"};

void AppendNumber(std::string& out, uint64_t n) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof(buf), n).ptr);
}

}  // namespace

bool IsHopByHop(std::string_view name, std::string_view connection_value) {
  for (std::string_view h : kHopByHop) {
    if (http::EqualsIgnoreCase(name, h)) return true;
  }
  return !connection_value.empty() && http::ListHasToken(connection_value, name);
}

std::string ForwardRequestHead(const http::RequestHead& head, const http::Url& upstream,
                               size_t body_size, const ForwardOptions& options) {
  std::string_view connection = http::FindHeader(head.headers, "Connection").value_or("");
  std::string out;
  out.reserve(256 + head.target.size());
  out.append(head.method).append(" ").append(head.target).append(" HTTP/1.1\r\n");
  std::string_view forwarded_for;
  bool host_written = false;
  for (const http::Header& h : head.headers) {
    if (IsHopByHop(h.name, connection) || http::EqualsIgnoreCase(h.name, "Content-Length")) {
      continue;
    }
    if (http::EqualsIgnoreCase(h.name, "Host")) {
      if (!options.preserve_host) continue;
      host_written = true;
    }
    if (http::EqualsIgnoreCase(h.name, "X-Forwarded-For")) {
      forwarded_for = h.value;
      continue;
    }
    out.append(h.name).append(": ").append(h.value).append("\r\n");
  }
  if (!host_written) out.append("Host: ").append(upstream.HostHeader()).append("\r\n");
  if (!options.client_address.empty() || !forwarded_for.empty()) {
    out.append("X-Forwarded-For: ").append(forwarded_for);
    if (!forwarded_for.empty() && !options.client_address.empty()) out.append(", ");
    out.append(options.client_address).append("\r\n");
  }
  if (!options.extra_header.empty()) out.append(options.extra_header).append("\r\n");
  if (body_size > 0 || head.framing != http::BodyFraming::kNone) {
    out.append("Content-Length: ");
    AppendNumber(out, body_size);
    out.append("\r\n");
  }
  out.append("\r\n");
  return out;
}

std::string ForwardResponse(int status, std::string_view reason,
                            std::span<const http::Header> headers, std::string_view body,
                            bool head_request, bool keep_alive) {
  std::string_view connection = http::FindHeader(headers, "Connection").value_or("");
  std::string out;
  out.reserve(256 + body.size());
  out.append("HTTP/1.1 ");
  AppendNumber(out, static_cast<uint64_t>(status));
  out.append(" ").append(reason.empty() ? http::ReasonPhrase(status) : reason).append("\r\n");
  std::string_view upstream_length;
  for (const http::Header& h : headers) {
    if (IsHopByHop(h.name, connection)) continue;
    if (http::EqualsIgnoreCase(h.name, "Content-Length")) {
      upstream_length = h.value;
      continue;
    }
    out.append(h.name).append(": ").append(h.value).append("\r\n");
  }
  bool no_body_status = status < 200 || status == 204 || status == 304;
  if (head_request) {
    if (!upstream_length.empty())
      out.append("Content-Length: ").append(upstream_length).append("\r\n");
  } else if (!no_body_status) {
    out.append("Content-Length: ");
    AppendNumber(out, body.size());
    out.append("\r\n");
  }
  if (!keep_alive) out.append("Connection: close\r\n");
  out.append("\r\n");
  if (!head_request && !no_body_status) out.append(body);
  return out;
}

}  // namespace hammer::dark
