// Url: an absolute http:// or https:// URL split into the parts a client needs.
//
// ParseUrl accepts what users paste from browsers and logs: case-insensitive scheme, IPv4,
// bracketed IPv6 ("http://[::1]:8080/x"), host names, an optional port, and any path/query
// (kept byte for byte; the fragment is dropped). It rejects, with a message naming the
// problem: other schemes, empty or invalid hosts, ports outside 1-65535, userinfo, spaces and
// control characters. Results are plain values, safe to copy between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer::http {

struct Url {
  std::string scheme;  // "http" or "https", lower case
  std::string host;    // lower case; IPv6 literals without brackets
  uint16_t port = 0;   // explicit port, or 80/443 by scheme
  std::string target;  // path and query as sent in the request line; "/" if empty
  bool ipv6_literal = false;

  bool tls() const { return scheme == "https"; }
  bool default_port() const { return port == (tls() ? 443 : 80); }
  // Host header value: host, bracketed if IPv6, with ":port" unless the port is the default.
  std::string HostHeader() const;
  // The same, appended to `out` (no allocation once `out` has room: a request head per line).
  void AppendHostHeader(std::string* out) const;
  // "scheme://host[:port]": identifies a connection pool.
  std::string Origin() const;
  // The URL written back in canonical form: Origin() + target.
  std::string ToString() const;
  // The path without the query string.
  std::string_view Path() const;

  bool operator==(const Url&) const = default;
};

Result<Url> ParseUrl(std::string_view text);

// ParseUrl for one URL after another, remembering the scheme and authority text of the last
// one it accepted ("http://h:8080", as written): a URL that starts with the same text followed
// by '/', '?', '#' or nothing has only the rest checked and copied. A list of distinct URLs on
// one host is mostly paths, and a load worker parses every line of it. The outcome is exactly
// ParseUrl's. One per thread (it is a cache, not a shared value).
class UrlParser {
 public:
  // On success `*url` is what ParseUrl(text) returns, written over what it held (reusing its
  // strings' capacity); on error the status is ParseUrl's and `*url` is unspecified.
  Status Parse(std::string_view text, Url* url);

 private:
  std::string origin_text_;  // the last accepted URL's text up to its target; "" at first
  Url origin_;               // that URL, for its scheme, host, port and ipv6_literal
};

// Resolves a redirect Location (absolute URL, scheme-relative "//host/x", absolute path
// "/x", or relative path "x") against the URL that was requested (RFC 3986 §5.2, without
// dot-segment removal beyond what servers send in practice).
Result<Url> ResolveLocation(const Url& base, std::string_view location);

}  // namespace hammer::http
