// What a reverse proxy changes when it passes a message on (RFC 9110 §7.6): hop-by-hop
// headers (Connection and the fields it names, Keep-Alive, Proxy-Connection, TE,
// Transfer-Encoding, Upgrade) are dropped (Trailer is end-to-end and passes), except "TE:
// trailers", which is passed on (gRPC needs it); framing is re-done with Content-Length; cookie
// crumbs become one Cookie line; and the Host sent upstream is the upstream's own unless the
// original is to be preserved.
//
// Trust boundary: the client never chooses what the proxy asserts. The request-target is
// sent in origin-form (an absolute-form target's scheme and authority are dropped, so they
// cannot pick the upstream's virtual host); a client's own X-Hammer-Dark is never forwarded;
// the client's address is appended to X-Forwarded-For (and to Forwarded when the client sent
// one); and Connection cannot name the fields the proxy writes or vouches for (Host,
// Content-Length, X-Forwarded-*, Forwarded, X-Real-IP, X-Hammer-Dark), so a client cannot
// strip what a proxy in front of this one added. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "hammer/http/message.h"
#include "hammer/http/url.h"

namespace hammer::dark {

struct ForwardOptions {
  bool preserve_host = false;     // send the client's Host upstream instead of the upstream's
  std::string_view extra_header;  // e.g. "X-Hammer-Dark: canary" (no CRLF); empty for none
  // The client's IP, appended to X-Forwarded-For (created if absent) and to Forwarded (as
  // for=..., only when the client sent Forwarded); empty: both are passed on unchanged.
  std::string_view client_ip;
  // The body is streamed without a known length: "Transfer-Encoding: chunked" is sent instead
  // of Content-Length (and the HttpClient frames the chunks).
  bool chunked_body = false;
  // The request switches protocols (a WebSocket handshake, ...): its Upgrade field is passed
  // on with "Connection: Upgrade", and no body framing is written (the tunnel carries what
  // follows).
  bool upgrade = false;
  // With `upgrade`: a Sec-WebSocket-Key for an HTTP/1.1 upstream when the client's request has
  // none (a WebSocket opened over HTTP/2 with extended CONNECT, RFC 8441, has no handshake
  // key; the HTTP/1.1 handshake needs one, RFC 6455 §4.1); empty: none is added.
  std::string_view websocket_key;
};

// Whether a trailer field passes on, either way: not one that frames, routes or is hop-by-hop
// (RFC 9110 §6.5.1: Transfer-Encoding, Content-Length, Host, Connection, TE, Trailer, ...),
// nor one the proxy asserts (X-Forwarded-For, X-Hammer-Dark, ...), which a client must not
// slip past it after the body.
bool ForwardsTrailer(std::string_view name);

// The request-target to forward (RFC 9112 §3.2): origin-form ("/p?q") as is; absolute-form
// "http://host/p?q" (any scheme) as "/p?q", "/" when it has no path; "*" for OPTIONS. Empty
// for anything else (authority-form, "*" with another method, garbage): the proxy answers 400.
std::string_view ForwardTarget(std::string_view method, std::string_view target);

// The head to send to `upstream` for a request received as `head` with `body_size` bytes.
// `head.target` must already be what ForwardTarget returned.
std::string ForwardRequestHead(const http::RequestHead& head, const http::Url& upstream,
                               size_t body_size, const ForwardOptions& options);

// `head` (what ForwardRequestHead wrote for `from`) for another upstream `to`: its Host line
// names `to` instead. Unchanged when the Host line is not `from`'s (the client's, kept by
// --preserve-host).
std::string RetargetHost(std::string_view head, const http::Url& from, const http::Url& to);

// The response to send back to the client: status line, end-to-end headers, Content-Length,
// then `body`. `keep_alive` false adds "Connection: close". A HEAD response keeps the
// upstream's Content-Length and carries no body.
std::string ForwardResponse(int status, std::string_view reason,
                            std::span<const http::Header> headers, std::string_view body,
                            bool head_request, bool keep_alive);

// The head of that response alone, for a body streamed after it: Content-Length `body_size`,
// or "Transfer-Encoding: chunked" when the size is unknown (nullopt).
std::string ForwardResponseHead(int status, std::string_view reason,
                                std::span<const http::Header> headers,
                                std::optional<uint64_t> body_size, bool head_request,
                                bool keep_alive);

// The head of a 101 that switches the client's connection to the upstream's protocol: the
// upstream's fields, its Upgrade kept, "Connection: Upgrade", no framing.
std::string ForwardSwitchingHead(std::string_view reason, std::span<const http::Header> headers);

// 1xx, 204 and 304 responses carry no body (RFC 9112 §6.3).
inline bool ResponseHasNoBody(int status) {
  return status < 200 || status == 204 || status == 304;
}

// True for a header that must not be forwarded (hop-by-hop), given the Connection header value.
// Connection may not name a field the proxy writes or vouches for (IsProxyAsserted).
bool IsHopByHop(std::string_view name, std::string_view connection_value);
// Host, Content-Length, X-Forwarded-For/-Proto/-Host, Forwarded, X-Real-IP, X-Hammer-Dark.
bool IsProxyAsserted(std::string_view name);

inline constexpr std::string_view kDarkHeader = "X-Hammer-Dark";

}  // namespace hammer::dark
