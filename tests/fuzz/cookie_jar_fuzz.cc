// libFuzzer target for CookieJar and ParseCookieDate. Input: Set-Cookie values, one a line;
// the first byte of each line picks the URL it is received from. Seeds:
// tests/fuzz/corpus/cookie_jar/.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when the jar holds more than
// kMaxCookies cookies, when a Cookie header carries a control character (other than tab) or
// a pair without '=', when a Secure-only request path sends more than its https twin, or when
// an accepted cookie date is outside 1601-9999 (what the year rule allows).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/http/cookie_jar.h"

namespace {

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

const char* const kUrls[] = {"http://example.com/",      "https://www.example.com/a/b?c",
                             "http://localhost:8080/x/", "http://127.0.0.1/",
                             "https://[::1]/p",          "http://a.b.example.com/a/b/c"};
constexpr size_t kUrlCount = sizeof(kUrls) / sizeof(kUrls[0]);

void CheckHeader(const std::string& header) {
  for (char c : header) {
    unsigned char byte = static_cast<unsigned char>(c);
    Require(!((byte < 0x20 && c != '\t') || byte == 0x7f));
  }
  std::string_view rest = header;
  while (!rest.empty()) {
    size_t end = rest.find("; ");
    std::string_view pair = rest.substr(0, end);
    Require(pair.find('=') != std::string_view::npos && pair.front() != '=');
    rest = end == std::string_view::npos ? "" : rest.substr(end + 2);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  hammer::http::Url urls[kUrlCount];
  for (size_t i = 0; i < kUrlCount; ++i)
    urls[i] = *hammer::http::ParseUrl(kUrls[i]);

  hammer::http::CookieJar jar;
  int64_t now = 1714557600;
  while (!input.empty()) {
    size_t end = input.find('\n');
    std::string_view line = input.substr(0, end);
    input = end == std::string_view::npos ? "" : input.substr(end + 1);
    if (line.empty()) continue;
    const hammer::http::Url& from = urls[static_cast<unsigned char>(line[0]) % kUrlCount];
    line.remove_prefix(1);
    int64_t seconds = 0;
    if (hammer::http::ParseCookieDate(line, &seconds)) {
      Require(seconds >= -11644473600 && seconds <= 253402300799);
    }
    jar.SetFromResponse(from, line, now);
    Require(jar.size() <= hammer::http::CookieJar::kMaxCookies);
    now += 7;
  }
  for (const hammer::http::Url& url : urls) {
    std::string header = jar.CookieHeaderFor(url, now);
    CheckHeader(header);
    hammer::http::Url plain = url;
    plain.scheme = "http";
    hammer::http::Url secure = url;
    secure.scheme = "https";
    Require(jar.CookieHeaderFor(plain, now).size() <= jar.CookieHeaderFor(secure, now).size());
  }
  return 0;
}
