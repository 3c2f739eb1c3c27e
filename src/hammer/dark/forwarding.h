// What a reverse proxy changes when it passes a message on (RFC 9110 §7.6): hop-by-hop
// headers (Connection and the fields it names, Keep-Alive, Proxy-Connection, TE, Trailer,
// Transfer-Encoding, Upgrade) are dropped, framing is re-done with Content-Length, and the
// Host sent upstream is the upstream's own unless the original is to be preserved. Pure
// functions; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "hammer/http/message.h"
#include "hammer/http/url.h"

namespace hammer::dark {

struct ForwardOptions {
  bool preserve_host = false;       // send the client's Host upstream instead of the upstream's
  std::string_view extra_header;    // e.g. "X-Hammer-Dark: canary" (no CRLF); empty for none
  std::string_view client_address;  // appended to X-Forwarded-For when not empty
};

// The head to send to `upstream` for a request received as `head` with `body_size` bytes.
std::string ForwardRequestHead(const http::RequestHead& head, const http::Url& upstream,
                               size_t body_size, const ForwardOptions& options);

// The response to send back to the client: status line, end-to-end headers, Content-Length,
// then `body`. `keep_alive` false adds "Connection: close". A HEAD response keeps the
// upstream's Content-Length and carries no body.
std::string ForwardResponse(int status, std::string_view reason,
                            std::span<const http::Header> headers, std::string_view body,
                            bool head_request, bool keep_alive);

// True for a header that must not be forwarded (hop-by-hop), given the Connection header value.
bool IsHopByHop(std::string_view name, std::string_view connection_value);

}  // namespace hammer::dark
