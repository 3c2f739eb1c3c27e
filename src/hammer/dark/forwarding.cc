#include "hammer/dark/forwarding.h"

#include <charconv>

#include "hammer/http/server.h"

namespace hammer::dark {

namespace {

constexpr std::string_view kHopByHop[] = {
    "connection",        "keep-alive", "proxy-connection",   "te",
    "transfer-encoding", "upgrade",    "proxy-authenticate", "proxy-authorization"};

void AppendNumber(std::string& out, uint64_t n) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof(buf), n).ptr);
}

}  // namespace

constexpr std::string_view kProxyAsserted[] = {
    "host",      "content-length", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host",
    "forwarded", "x-real-ip",      "x-hammer-dark"};

// RFC 7239 §6: an IPv6 node is quoted and bracketed.
void AppendForwardedFor(std::string& out, std::string_view ip) {
  if (ip.find(':') != std::string_view::npos) {
    out.append("for=\"[").append(ip).append("]\"");
  } else {
    out.append("for=").append(ip);
  }
}

bool IsProxyAsserted(std::string_view name) {
  for (std::string_view h : kProxyAsserted) {
    if (http::EqualsIgnoreCase(name, h)) return true;
  }
  return false;
}

bool IsHopByHop(std::string_view name, std::string_view connection_value) {
  for (std::string_view h : kHopByHop) {
    if (http::EqualsIgnoreCase(name, h)) return true;
  }
  return !connection_value.empty() && http::ListHasToken(connection_value, name) &&
         !IsProxyAsserted(name);
}

bool ForwardsTrailer(std::string_view name) {
  return !IsHopByHop(name, {}) && !IsProxyAsserted(name) &&
         !http::EqualsIgnoreCase(name, "trailer");
}

std::string_view ForwardTarget(std::string_view method, std::string_view target) {
  if (target.starts_with('/')) return target;
  if (target == "*") return method == "OPTIONS" ? target : std::string_view();
  size_t scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) return {};
  for (char c : target.substr(0, scheme_end)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '-' || c == '.';
    if (!ok) return {};
  }
  std::string_view rest = target.substr(scheme_end + 3);
  size_t path = rest.find_first_of("/?");
  if (path == std::string_view::npos || rest[path] == '?') return "/";
  return rest.substr(path);
}

std::string ForwardRequestHead(const http::RequestHead& head, const http::Url& upstream,
                               size_t body_size, const ForwardOptions& options) {
  std::string_view connection = http::FindHeader(head.headers, "Connection").value_or("");
  std::string out;
  out.reserve(256 + head.target.size());
  out.append(head.method).append(" ").append(head.target).append(" HTTP/1.1\r\n");
  // Repeated X-Forwarded-For / Forwarded lines form one list each (RFC 9110 §5.3); cookie
  // crumbs (an HTTP/2 client sends each cookie as its own field, RFC 9113 §8.2.3) form one
  // Cookie line joined with "; " for an HTTP/1.1 upstream.
  std::string forwarded_for, forwarded, cookie;
  bool host_written = false;
  bool te_trailers = false;
  for (const http::Header& h : head.headers) {
    // TE is hop-by-hop, but its one value "trailers" says the client takes trailer fields,
    // which gRPC servers require (RFC 9110 §10.1.4; gRPC over HTTP/2): it is passed on.
    if (http::EqualsIgnoreCase(h.name, "TE")) {
      te_trailers |= http::ListHasToken(h.value, "trailers");
      continue;
    }
    if (http::EqualsIgnoreCase(h.name, "Cookie")) {
      if (!h.value.empty()) cookie.append(cookie.empty() ? "" : "; ").append(h.value);
      continue;
    }
    if (IsHopByHop(h.name, connection) || http::EqualsIgnoreCase(h.name, "Content-Length") ||
        http::EqualsIgnoreCase(h.name, kDarkHeader)) {
      continue;
    }
    if (http::EqualsIgnoreCase(h.name, "Host")) {
      // The parser allows one Host line at most; write the first only, whatever comes.
      if (!options.preserve_host || host_written) continue;
      host_written = true;
    }
    if (http::EqualsIgnoreCase(h.name, "X-Forwarded-For") ||
        http::EqualsIgnoreCase(h.name, "Forwarded")) {
      std::string& list = h.name.size() == 9 ? forwarded : forwarded_for;
      if (!h.value.empty()) list.append(list.empty() ? "" : ", ").append(h.value);
      continue;
    }
    out.append(h.name).append(": ").append(h.value).append("\r\n");
  }
  if (!host_written) out.append("Host: ").append(upstream.HostHeader()).append("\r\n");
  if (!cookie.empty()) out.append("Cookie: ").append(cookie).append("\r\n");
  // A sender of TE names it in Connection (RFC 9110 §10.1.4); an HTTP/2 upstream gets
  // "te: trailers" alone (h2_fields.cc drops Connection).
  if (te_trailers) out.append("TE: trailers\r\nConnection: TE\r\n");
  if (!options.client_ip.empty()) {
    forwarded_for.append(forwarded_for.empty() ? "" : ", ").append(options.client_ip);
    if (!forwarded.empty()) AppendForwardedFor(forwarded.append(", "), options.client_ip);
  }
  if (!forwarded_for.empty()) out.append("X-Forwarded-For: ").append(forwarded_for).append("\r\n");
  if (!forwarded.empty()) out.append("Forwarded: ").append(forwarded).append("\r\n");
  if (!options.extra_header.empty()) out.append(options.extra_header).append("\r\n");
  if (options.upgrade) {
    if (std::optional<std::string_view> protocol = http::FindHeader(head.headers, "Upgrade")) {
      out.append("Upgrade: ").append(*protocol).append("\r\nConnection: Upgrade\r\n");
      if (!options.websocket_key.empty() && http::EqualsIgnoreCase(*protocol, "websocket") &&
          !http::FindHeader(head.headers, "Sec-WebSocket-Key")) {
        out.append("Sec-WebSocket-Key: ").append(options.websocket_key).append("\r\n");
      }
    }
  } else if (options.chunked_body) {
    out.append("Transfer-Encoding: chunked\r\n");
  } else if (body_size > 0 || head.framing != http::BodyFraming::kNone) {
    out.append("Content-Length: ");
    AppendNumber(out, body_size);
    out.append("\r\n");
  }
  out.append("\r\n");
  return out;
}

std::string RetargetHost(std::string_view head, const http::Url& from, const http::Url& to) {
  std::string line = "\r\nHost: " + from.HostHeader() + "\r\n";
  size_t at = head.find(line);
  // The head ends at its first blank line: a match past it would be in no header.
  if (at == std::string_view::npos || at > head.find("\r\n\r\n")) return std::string(head);
  std::string out;
  out.reserve(head.size() + 32);
  out.append(head.substr(0, at)).append("\r\nHost: ").append(to.HostHeader()).append("\r\n");
  out.append(head.substr(at + line.size()));
  return out;
}

std::string ForwardResponseHead(int status, std::string_view reason,
                                std::span<const http::Header> headers,
                                std::optional<uint64_t> body_size, bool head_request,
                                bool keep_alive) {
  std::string_view connection = http::FindHeader(headers, "Connection").value_or("");
  std::string out;
  out.reserve(256);
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
  if (head_request) {
    if (!upstream_length.empty())
      out.append("Content-Length: ").append(upstream_length).append("\r\n");
  } else if (!ResponseHasNoBody(status)) {
    if (body_size) {
      out.append("Content-Length: ");
      AppendNumber(out, *body_size);
      out.append("\r\n");
    } else {
      out.append("Transfer-Encoding: chunked\r\n");
    }
  }
  if (!keep_alive) out.append("Connection: close\r\n");
  out.append("\r\n");
  return out;
}

std::string ForwardSwitchingHead(std::string_view reason, std::span<const http::Header> headers) {
  std::string_view connection = http::FindHeader(headers, "Connection").value_or("");
  std::string out = "HTTP/1.1 101 ";
  out.append(reason.empty() ? http::ReasonPhrase(101) : reason).append("\r\n");
  for (const http::Header& h : headers) {
    if (http::EqualsIgnoreCase(h.name, "Upgrade") ||
        (!IsHopByHop(h.name, connection) && !http::EqualsIgnoreCase(h.name, "Content-Length"))) {
      out.append(h.name).append(": ").append(h.value).append("\r\n");
    }
  }
  out.append("Connection: Upgrade\r\n\r\n");
  return out;
}

std::string ForwardResponse(int status, std::string_view reason,
                            std::span<const http::Header> headers, std::string_view body,
                            bool head_request, bool keep_alive) {
  std::string out =
      ForwardResponseHead(status, reason, headers, body.size(), head_request, keep_alive);
  if (!head_request && !ResponseHasNoBody(status)) out.append(body);
  return out;
}

}  // namespace hammer::dark
