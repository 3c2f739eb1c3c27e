#include "hammer/http/url.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstdint>
#include <cstring>

#include "hammer/base/strings.h"
#include "hammer/base/word_bytes.h"
#include "hammer/http/message.h"

namespace hammer::http {
namespace {

constexpr size_t kMaxHostLength = 255;

std::string Quoted(std::string_view text) {
  return "'" + std::string(text) + "'";
}

// Whether every byte is printable ASCII other than the space (0x21-0x7e), and whether any is
// '#', eight bytes at a time (word_bytes.h).
struct ByteScan {
  bool printable;
  bool has_hash;
};

ByteScan ScanBytes(std::string_view text) {
  using namespace word_bytes;
  uint64_t flagged = 0;  // nonzero once a byte is not printable
  uint64_t hashes = 0;   // nonzero once a byte is '#'
  AnyWord(text, 'a', [&](uint64_t word) {
    flagged |= HasHigh(word) | HasLess(word, 0x21) | HasByte(word, 0x7f);
    hashes |= HasByte(word, '#');
    return false;  // every word, for both answers
  });
  return {flagged == 0, hashes != 0};
}

bool IsPrintable(std::string_view text) {
  return ScanBytes(text).printable;
}

// Spaces, control characters and non-ASCII bytes are refused anywhere: they cannot be sent in
// a request line, and silently encoding them would hide a broken input file.
Status CheckBytes(std::string_view text) {
  if (IsPrintable(text)) return Status::Ok();  // every line of a load run comes here
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte == ' ') return Status::Error("URL contains a space");
    if (byte < 0x20 || byte == 0x7f) return Status::Error("URL contains a control character");
    if (byte >= 0x80) return Status::Error("URL contains a non-ASCII byte");
  }
  return Status::Ok();
}

bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// inet_pton wants a NUL-terminated string.
bool IsAddress(int family, std::string_view text) {
  char buffer[INET6_ADDRSTRLEN + 1];
  if (text.size() >= sizeof(buffer)) return false;
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
  unsigned char address[sizeof(in6_addr)];
  return inet_pton(family, buffer, address) == 1;
}

// A DNS name or dotted IPv4 address. Names made only of digits and dots must be valid IPv4
// ("1.2.3" and "256.0.0.1" are typos, not host names).
Status CheckHostName(std::string_view host) {
  if (host.empty()) return Status::Error("empty host");
  if (host.size() > kMaxHostLength) return Status::Error("host name too long");
  bool numeric = true;
  for (char c : host) {
    bool digit = c >= '0' && c <= '9';
    if (!digit && !IsAlpha(c) && c != '-' && c != '.' && c != '_') {
      return Status::Error("invalid host " + Quoted(host));
    }
    numeric = numeric && (digit || c == '.');
  }
  if (numeric) {
    if (!IsAddress(AF_INET, host)) return Status::Error("invalid IPv4 address " + Quoted(host));
  } else if (host.front() == '.' || host.find("..") != std::string_view::npos) {
    return Status::Error("invalid host " + Quoted(host));
  }
  return Status::Ok();
}

// Empty after the colon means the scheme's default (RFC 3986 §3.2.3).
Status ParsePort(std::string_view text, uint16_t* port) {
  if (text.empty()) return Status::Ok();
  uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return Status::Error("invalid port " + Quoted(text));
    value = value * 10 + static_cast<uint32_t>(c - '0');
    if (value > 65535) return Status::Error("invalid port " + Quoted(text));
  }
  if (value == 0) return Status::Error("invalid port " + Quoted(text));
  *port = static_cast<uint16_t>(value);
  return Status::Ok();
}

// host, "[ipv6]", either with ":port".
Status ParseAuthority(std::string_view authority, Url* url) {
  if (authority.find('@') != std::string_view::npos) {
    return Status::Error("userinfo ('user@') in URL is not supported");
  }
  std::string_view host = authority;
  std::string_view port;
  bool has_port = false;
  if (authority.starts_with('[')) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return Status::Error("unterminated IPv6 address");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after[0] != ':') {
      return Status::Error("invalid host " + Quoted(authority));
    }
    if (!IsAddress(AF_INET6, host)) return Status::Error("invalid IPv6 address " + Quoted(host));
    url->ipv6_literal = true;
    has_port = !after.empty();
    if (has_port) port = after.substr(1);
  } else {
    size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      has_port = true;
    }
    Status status = CheckHostName(host);
    if (!status.ok()) return status;
  }
  url->host = AsciiStrToLower(host);
  url->port = url->tls() ? 443 : 80;
  return has_port ? ParsePort(port, &url->port) : Status::Ok();
}

// The scheme of a URI reference, if it has one (RFC 3986 §3.1): ALPHA *( ALPHA / DIGIT /
// "+" / "-" / "." ) followed by ':' before any '/', '?' or '#'.
bool HasScheme(std::string_view reference) {
  size_t colon = FindFirstOf(reference, ":/?#");
  if (colon == std::string_view::npos || colon == 0 || reference[colon] != ':') return false;
  if (!IsAlpha(reference[0])) return false;
  for (char c : reference.substr(0, colon)) {
    bool digit = c >= '0' && c <= '9';
    if (!IsAlpha(c) && !digit && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

// RFC 3986 §5.2.4 on an absolute path: resolves "." and ".." segments.
std::string RemoveDotSegments(std::string_view path) {
  std::string out;
  while (!path.empty()) {
    if (path.starts_with("/./")) {
      path.remove_prefix(2);
    } else if (path == "/.") {
      path = "/";
    } else if (path.starts_with("/../") || path == "/..") {
      path = path.size() == 3 ? std::string_view("/") : path.substr(3);
      size_t last = out.rfind('/');
      out.resize(last == std::string::npos ? 0 : last);
    } else {
      size_t next = path.find('/', 1);
      out.append(path.substr(0, next));
      path = next == std::string_view::npos ? std::string_view() : path.substr(next);
    }
  }
  return out.empty() ? "/" : out;
}

// Base's origin + path + query, parsed again so the result is checked like any URL.
Result<Url> WithTarget(const Url& base, std::string_view path, std::string_view query) {
  std::string text = base.Origin();
  text += path;
  text += query;
  return ParseUrl(text);
}

}  // namespace

std::string Url::HostHeader() const {
  std::string out;
  AppendHostHeader(&out);
  return out;
}

void Url::AppendHostHeader(std::string* out) const {
  if (ipv6_literal) out->push_back('[');
  out->append(host);
  if (ipv6_literal) out->push_back(']');
  if (default_port()) return;
  char digits[8];
  auto [end, unused] = std::to_chars(digits, digits + sizeof digits, port);
  out->push_back(':');
  out->append(digits, end);
}

std::string Url::Origin() const {
  return scheme + "://" + HostHeader();
}

std::string Url::ToString() const {
  return Origin() + target;
}

std::string_view Url::Path() const {
  std::string_view view = target;
  return view.substr(0, view.find('?'));
}

Result<Url> ParseUrl(std::string_view text) {
  Status status = CheckBytes(text);
  if (!status.ok()) return status;
  if (!HasScheme(text)) return Status::Error("missing scheme (expected http:// or https://)");
  size_t colon = text.find(':');
  Url url;
  url.scheme = AsciiStrToLower(text.substr(0, colon));
  if (url.scheme != "http" && url.scheme != "https") {
    return Status::Error("unsupported scheme " + Quoted(text.substr(0, colon)));
  }
  if (text.substr(colon + 1, 2) != "//") {
    return Status::Error("missing '//' after " + Quoted(text.substr(0, colon + 1)));
  }
  std::string_view rest = text.substr(colon + 3);
  rest = rest.substr(0, rest.find('#'));
  size_t path_start = FindFirstOf(rest, "/?");
  status = ParseAuthority(rest.substr(0, path_start), &url);
  if (!status.ok()) return status;
  std::string_view target =
      path_start == std::string_view::npos ? std::string_view() : rest.substr(path_start);
  if (target.empty() || target[0] == '?') url.target = "/";
  url.target += target;
  return url;
}

Status UrlParser::Parse(std::string_view text, Url* url) {
  const size_t prefix = origin_text_.size();
  if (prefix > 0 && StartsWithText(text, origin_text_) &&
      (text.size() == prefix || text[prefix] == '/' || text[prefix] == '?' ||
       text[prefix] == '#')) {
    // What ParseUrl does after the authority, on the bytes it has not checked yet.
    std::string_view rest = text.substr(prefix);
    const ByteScan scan = ScanBytes(rest);
    if (!scan.printable) return CheckBytes(rest);
    if (scan.has_hash) rest = rest.substr(0, rest.find('#'));
    // `*url` is most often the previous URL on this origin: its scheme and host are right.
    if (!SameText(url->host, origin_.host)) url->host = origin_.host;
    if (!SameText(url->scheme, origin_.scheme)) url->scheme = origin_.scheme;
    url->port = origin_.port;
    url->ipv6_literal = origin_.ipv6_literal;
    if (!rest.empty() && rest[0] == '/') {
      AssignText(&url->target, rest);
    } else {
      url->target.assign("/").append(rest);
    }
    return Status::Ok();
  }
  Result<Url> parsed = ParseUrl(text);
  if (!parsed.ok()) return parsed.status();
  *url = std::move(*parsed);
  // Where ParseUrl found the authority's end: after "scheme://", at the first '/' or '?' of
  // the text before any '#'.
  std::string_view before_fragment = text.substr(0, text.find('#'));
  size_t authority_end = FindFirstOf(before_fragment, "/?", text.find(':') + 3);
  origin_text_.assign(before_fragment.substr(0, authority_end));
  origin_ = *url;
  return Status::Ok();
}

// RFC 3986 §5.2.2 with the reference forms servers send in a Location header.
Result<Url> ResolveLocation(const Url& base, std::string_view location) {
  Status status = CheckBytes(location);
  if (!status.ok()) return status;
  location = location.substr(0, location.find('#'));
  if (HasScheme(location)) return ParseUrl(location);
  if (location.starts_with("//")) return ParseUrl(base.scheme + ":" + std::string(location));
  size_t query_start = location.find('?');
  std::string_view path = location.substr(0, query_start);
  std::string_view query =
      query_start == std::string_view::npos ? std::string_view() : location.substr(query_start);
  if (path.empty()) {
    // "" keeps the base's query, "?q" replaces it; the path stays as it was.
    std::string_view base_query = std::string_view(base.target).substr(base.Path().size());
    return WithTarget(base, base.Path(),
                      query_start == std::string_view::npos ? base_query : query);
  }
  if (path[0] == '/') return WithTarget(base, RemoveDotSegments(path), query);
  // A relative path replaces the last segment of the base path (RFC 3986 §5.2.3).
  std::string_view base_path = base.Path();
  std::string merged =
      base_path.empty() ? "/" : std::string(base_path.substr(0, base_path.rfind('/') + 1));
  merged += path;
  return WithTarget(base, RemoveDotSegments(merged), query);
}

}  // namespace hammer::http
