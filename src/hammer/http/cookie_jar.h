// CookieJar: the cookies of one simulated user, kept as a browser would under RFC 6265 §5
// (user agent requirements), so that a load run can follow logins and sessions.
//
// SetFromResponse stores the cookie of one Set-Cookie field value received for request_url;
// CookieHeaderFor gives the Cookie header value to send with a request ("a=1; b=2"; empty when
// no cookie applies). Times are Unix seconds passed in by the caller (tests use fixed values).
//
// What is implemented (RFC 6265 section in brackets):
//   - name=value, both trimmed of spaces and tabs; a field without '=' or with an empty name is
//     ignored [5.2]; so is one whose name or value holds a control character other than tab,
//     or whose name and value together exceed kMaxCookieBytes [6.1].
//   - Expires in the RFC's date format, which covers RFC 1123 ("Sun, 06 Nov 1994 08:49:37
//     GMT"), RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime ("Sun Nov  6 08:49:37
//     1994") dates [5.1.1]; an unreadable date is ignored. Max-Age in seconds wins over
//     Expires whatever their order [5.3 step 3]; Max-Age <= 0 or a past Expires deletes the
//     cookie. Cookies without either last as long as the jar.
//   - Domain: a leading '.' is dropped and the value lower-cased [5.2.3]. The cookie is ignored
//     unless the request host domain-matches it [5.1.3] (an IP address matches only itself).
//     A single-label Domain ("com", "localhost") stands in for a public suffix list: it is
//     ignored, unless it is the request host itself, which makes the cookie host-only [5.3
//     step 5]. Without Domain a cookie is host-only: sent to that exact host only.
//   - Path: a value not starting with '/' means the default path, the request path up to its
//     last '/' [5.1.4]; path-match as in [5.1.4].
//   - Secure cookies are sent only over https (setting them over http is allowed, as in RFC
//     6265). HttpOnly, SameSite and other attributes are ignored: every request here is an
//     HTTP request from the site itself. Ports do not separate cookies [8.5].
//   - A cookie with the same name, domain and path replaces the old one and keeps its
//     creation order [5.3 step 11].
//   - Cookie header: name=value pairs joined by "; ", longer paths first, then older cookies
//     first [5.4]; expired cookies are not sent.
//   - At most kMaxCookies per jar: when full, expired cookies are dropped, then the oldest.
// Not implemented: a public suffix list, cookie prefixes (__Secure-, __Host-), per-domain
// limits. Not thread-safe: one jar per simulated user, used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/http/url.h"

namespace hammer::http {

class CookieJar {
 public:
  static constexpr size_t kMaxCookies = 300;
  static constexpr size_t kMaxCookieBytes = 4096;  // name plus value

  void SetFromResponse(const Url& request_url, std::string_view set_cookie_value,
                       int64_t now_unix_seconds);
  std::string CookieHeaderFor(const Url& url, int64_t now_unix_seconds) const;

  size_t size() const { return cookies_.size(); }  // stored, expired or not
  void Clear() { cookies_.clear(); }

 private:
  struct Cookie {
    std::string name;
    std::string value;
    std::string domain;  // lower case; the request host when host_only
    std::string path;
    int64_t expires = INT64_MAX;  // Unix seconds; INT64_MAX: until the jar goes
    bool host_only = true;
    bool secure = false;
    uint64_t created = 0;  // order of creation, for the Cookie header and eviction
  };

  void Store(Cookie cookie, int64_t now);

  std::vector<Cookie> cookies_;
  uint64_t next_created_ = 0;
};

// The RFC 6265 §5.1.1 cookie-date algorithm: Unix seconds of `text`, or false when it is not
// a cookie date (a piece missing, out of range, or a day that does not exist).
bool ParseCookieDate(std::string_view text, int64_t* unix_seconds);

}  // namespace hammer::http
