#include "hammer/http/cookie_jar.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "hammer/base/civil_date.h"
#include "hammer/base/strings.h"
#include "hammer/http/message.h"

namespace hammer::http {
namespace {

// Latest expiry kept: 9999-12-31T23:59:59Z, so that now + Max-Age cannot overflow.
constexpr int64_t kLatestExpiry = 253402300799;

bool HasControl(std::string_view text) {
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t') || byte == 0x7f) return true;
  }
  return false;
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// §5.1.1 delimiter: %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E.
bool IsDateDelimiter(char c) {
  unsigned char b = static_cast<unsigned char>(c);
  return b == 0x09 || (b >= 0x20 && b <= 0x2F) || (b >= 0x3B && b <= 0x40) ||
         (b >= 0x5B && b <= 0x60) || (b >= 0x7B && b <= 0x7E);
}

// min_digits to max_digits digits at the start of `token`, then its end or a non-digit (the
// "( non-digit *OCTET )" tail of the §5.1.1 productions). Advances *at past the digits.
std::optional<int> LeadingNumber(std::string_view token, size_t* at, size_t min_digits,
                                 size_t max_digits) {
  size_t start = *at;
  int value = 0;
  while (*at < token.size() && IsDigit(token[*at]) && *at - start < max_digits) {
    value = value * 10 + (token[*at] - '0');
    ++*at;
  }
  size_t digits = *at - start;
  if (digits < min_digits || (*at < token.size() && IsDigit(token[*at]))) return std::nullopt;
  return value;
}

// hms-time = time-field ":" time-field ":" time-field, time-field = 1*2DIGIT.
bool ParseTime(std::string_view token, int* hour, int* minute, int* second) {
  size_t at = 0;
  std::optional<int> h = LeadingNumber(token, &at, 1, 2);
  if (!h || at >= token.size() || token[at++] != ':') return false;
  std::optional<int> m = LeadingNumber(token, &at, 1, 2);
  if (!m || at >= token.size() || token[at++] != ':') return false;
  std::optional<int> s = LeadingNumber(token, &at, 1, 2);
  if (!s) return false;
  *hour = *h;
  *minute = *m;
  *second = *s;
  return true;
}

int ParseMonth(std::string_view token) {
  static constexpr std::string_view kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                                 "jul", "aug", "sep", "oct", "nov", "dec"};
  if (token.size() < 3) return 0;
  for (int i = 0; i < 12; ++i) {
    if (EqualsIgnoreCase(token.substr(0, 3), kMonths[i])) return i + 1;
  }
  return 0;
}

// §5.1.4 default-path: the request path up to, not including, its last '/'; "/" when that
// would be empty.
std::string DefaultPath(std::string_view path) {
  if (path.empty() || path.front() != '/') return "/";
  size_t last = path.rfind('/');
  if (last == 0) return "/";
  return std::string(path.substr(0, last));
}

bool IsIpAddress(const Url& url) {
  if (url.ipv6_literal) return true;
  return url.host.find_first_not_of("0123456789.") == std::string::npos;
}

// §5.1.3 domain-match.
bool DomainMatches(const Url& url, std::string_view domain) {
  const std::string& host = url.host;
  if (host == domain) return true;
  return !IsIpAddress(url) && host.size() > domain.size() && host.ends_with(domain) &&
         host[host.size() - domain.size() - 1] == '.';
}

// §5.1.4 path-match.
bool PathMatches(std::string_view request_path, std::string_view cookie_path) {
  if (request_path == cookie_path) return true;
  if (!request_path.starts_with(cookie_path)) return false;
  return cookie_path.back() == '/' || request_path[cookie_path.size()] == '/';
}

// Max-Age's value (§5.2.2): an optional '-' and digits; nullopt when it is anything else.
std::optional<int64_t> ParseMaxAge(std::string_view value) {
  bool negative = !value.empty() && value.front() == '-';
  std::string_view digits = negative ? value.substr(1) : value;
  if (digits.empty()) return std::nullopt;
  int64_t seconds = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return std::nullopt;
    seconds = std::min<int64_t>(seconds * 10 + (c - '0'), kLatestExpiry);
  }
  return negative ? -seconds : seconds;
}

}  // namespace

bool ParseCookieDate(std::string_view text, int64_t* unix_seconds) {
  bool found_time = false, found_day = false, found_month = false, found_year = false;
  int hour = 0, minute = 0, second = 0, day = 0, month = 0, year = 0;
  size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && IsDateDelimiter(text[at]))
      ++at;
    size_t start = at;
    while (at < text.size() && !IsDateDelimiter(text[at]))
      ++at;
    std::string_view token = text.substr(start, at - start);
    if (token.empty()) break;
    // Each token is tried as time, day, month, year, in that order; the first unfilled
    // field it fits takes it.
    size_t day_end = 0, year_end = 0;
    std::optional<int> day_number = LeadingNumber(token, &day_end, 1, 2);
    std::optional<int> year_number = LeadingNumber(token, &year_end, 2, 4);
    int month_number = ParseMonth(token);
    if (!found_time && ParseTime(token, &hour, &minute, &second)) {
      found_time = true;
    } else if (!found_day && day_number) {
      found_day = true;
      day = *day_number;
    } else if (!found_month && month_number != 0) {
      found_month = true;
      month = month_number;
    } else if (!found_year && year_number) {
      found_year = true;
      year = *year_number;
    }
  }
  if (year >= 70 && year <= 99) year += 1900;
  if (year >= 0 && year <= 69) year += 2000;
  if (!found_time || !found_day || !found_month || !found_year || year < 1601 || hour > 23 ||
      minute > 59 || second > 59 || !IsValidDate(year, month, day)) {
    return false;
  }
  *unix_seconds = DaysSinceEpoch(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  return true;
}

void CookieJar::SetFromResponse(const Url& request_url, std::string_view set_cookie_value,
                                int64_t now) {
  size_t semicolon = set_cookie_value.find(';');
  std::string_view pair = set_cookie_value.substr(0, semicolon);
  std::string_view attributes =
      semicolon == std::string_view::npos ? "" : set_cookie_value.substr(semicolon + 1);
  size_t equals = pair.find('=');
  if (equals == std::string_view::npos) return;
  std::string_view name = TrimOws(pair.substr(0, equals));
  std::string_view value = TrimOws(pair.substr(equals + 1));
  if (name.empty() || HasControl(name) || HasControl(value) ||
      name.size() + value.size() > kMaxCookieBytes) {
    return;
  }

  std::optional<int64_t> expires;  // from Expires
  std::optional<int64_t> max_age;  // from Max-Age: wins over Expires
  std::string domain;
  std::string path;
  bool secure = false;
  while (!attributes.empty()) {
    size_t end = attributes.find(';');
    std::string_view attribute = attributes.substr(0, end);
    attributes = end == std::string_view::npos ? "" : attributes.substr(end + 1);
    size_t split = attribute.find('=');
    std::string_view key = TrimOws(attribute.substr(0, split));
    std::string_view argument =
        split == std::string_view::npos ? "" : TrimOws(attribute.substr(split + 1));
    if (EqualsIgnoreCase(key, "expires")) {
      int64_t when = 0;
      if (ParseCookieDate(argument, &when)) expires = std::min(when, kLatestExpiry);
    } else if (EqualsIgnoreCase(key, "max-age")) {
      if (std::optional<int64_t> seconds = ParseMaxAge(argument)) {
        max_age = *seconds <= 0                    ? INT64_MIN
                  : now > kLatestExpiry - *seconds ? kLatestExpiry
                                                   : now + *seconds;
      }
    } else if (EqualsIgnoreCase(key, "domain")) {
      if (!argument.empty()) {
        if (argument.front() == '.') argument.remove_prefix(1);
        domain = AsciiStrToLower(argument);
      }
    } else if (EqualsIgnoreCase(key, "path")) {
      path = !argument.empty() && argument.front() == '/' ? std::string(argument) : "";
    } else if (EqualsIgnoreCase(key, "secure")) {
      secure = true;
    }
  }

  Cookie cookie;
  cookie.name = std::string(name);
  cookie.value = std::string(value);
  cookie.secure = secure;
  cookie.expires = max_age ? *max_age : expires ? *expires : INT64_MAX;
  cookie.path = path.empty() ? DefaultPath(request_url.Path()) : std::move(path);
  if (!domain.empty() && domain.find('.') == std::string::npos) {
    if (domain != request_url.host) return;  // "com", or another host's single label
    domain.clear();                          // Domain=localhost from localhost: host-only
  }
  if (domain.empty()) {
    cookie.host_only = true;
    cookie.domain = request_url.host;
  } else {
    if (!DomainMatches(request_url, domain)) return;
    cookie.host_only = false;
    cookie.domain = std::move(domain);
  }
  Store(std::move(cookie), now);
}

void CookieJar::Store(Cookie cookie, int64_t now) {
  cookie.created = next_created_++;
  auto same = std::find_if(cookies_.begin(), cookies_.end(), [&](const Cookie& c) {
    return c.name == cookie.name && c.domain == cookie.domain && c.path == cookie.path;
  });
  if (same != cookies_.end()) {
    cookie.created = same->created;
    cookies_.erase(same);
  }
  if (cookie.expires <= now) return;  // an expiry in the past only deletes
  cookies_.push_back(std::move(cookie));
  if (cookies_.size() <= kMaxCookies) return;
  std::erase_if(cookies_, [now](const Cookie& c) { return c.expires <= now; });
  while (cookies_.size() > kMaxCookies) {
    cookies_.erase(
        std::min_element(cookies_.begin(), cookies_.end(),
                         [](const Cookie& a, const Cookie& b) { return a.created < b.created; }));
  }
}

std::string CookieJar::CookieHeaderFor(const Url& url, int64_t now) const {
  std::vector<const Cookie*> matching;
  std::string_view path = url.Path();
  for (const Cookie& c : cookies_) {
    if (c.expires <= now) continue;
    if (c.host_only ? url.host != c.domain : !DomainMatches(url, c.domain)) continue;
    if (!PathMatches(path, c.path)) continue;
    if (c.secure && !url.tls()) continue;
    matching.push_back(&c);
  }
  std::sort(matching.begin(), matching.end(), [](const Cookie* a, const Cookie* b) {
    if (a->path.size() != b->path.size()) return a->path.size() > b->path.size();
    return a->created < b->created;
  });
  std::string header;
  for (const Cookie* c : matching) {
    if (!header.empty()) header += "; ";
    header += c->name;
    header += '=';
    header += c->value;
  }
  return header;
}

}  // namespace hammer::http
