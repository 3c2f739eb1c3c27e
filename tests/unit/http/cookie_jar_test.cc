#include "hammer/http/cookie_jar.h"

#include <gtest/gtest.h>

#include <string>

namespace hammer::http {
namespace {

constexpr int64_t kNow = 1714557600;  // 2024-05-01T10:00:00Z

Url U(std::string_view text) {
  Result<Url> url = ParseUrl(text);
  EXPECT_TRUE(url.ok()) << text;
  return url.ok() ? *url : Url();
}

class CookieJarTest : public ::testing::Test {
 protected:
  void Set(std::string_view url, std::string_view header, int64_t now = kNow) {
    jar_.SetFromResponse(U(url), header, now);
  }
  std::string Get(std::string_view url, int64_t now = kNow) {
    return jar_.CookieHeaderFor(U(url), now);
  }
  CookieJar jar_;
};

TEST_F(CookieJarTest, HostOnlyCookies) {
  Set("http://example.com/", "sid=abc");
  Set("http://example.com/", " theme = dark ; HttpOnly");
  EXPECT_EQ(Get("http://example.com/"), "sid=abc; theme=dark");
  EXPECT_EQ(Get("https://example.com:8443/x"), "sid=abc; theme=dark");  // ports don't matter
  EXPECT_EQ(Get("http://www.example.com/"), "");                        // host-only
  EXPECT_EQ(Get("http://other.com/"), "");
  EXPECT_EQ(jar_.size(), 2u);
}

TEST_F(CookieJarTest, IgnoredSetCookieValues) {
  Set("http://h.com/", "no-equals-sign");
  Set("http://h.com/", "=value");
  Set("http://h.com/", "  =value");
  Set("http://h.com/", "a=b\x01");
  Set("http://h.com/", "a\x7f=b");
  Set("http://h.com/", "big=" + std::string(CookieJar::kMaxCookieBytes, 'x'));
  EXPECT_EQ(jar_.size(), 0u);
  Set("http://h.com/", "ok=" + std::string(CookieJar::kMaxCookieBytes - 2, 'x'));
  Set("http://h.com/", "empty=");
  Set("http://h.com/", "quoted=\"a b\"; Path=/");
  Set("http://h.com/", "tab=\tx\t");
  EXPECT_EQ(jar_.size(), 4u);
  EXPECT_EQ(Get("http://h.com/"), "ok=" + std::string(CookieJar::kMaxCookieBytes - 2, 'x') +
                                      "; empty=; quoted=\"a b\"; tab=x");
}

TEST_F(CookieJarTest, DomainAttribute) {
  Set("http://www.example.com/", "a=1; Domain=example.com");
  Set("http://www.example.com/", "b=2; Domain=.EXAMPLE.com");
  Set("http://www.example.com/", "c=3; Domain=www.example.com");
  Set("http://www.example.com/", "d=4; Domain=other.com");            // not ours: ignored
  Set("http://www.example.com/", "e=5; Domain=sub.www.example.com");  // not a suffix: ignored
  Set("http://www.example.com/", "f=6; Domain=com");                  // a public suffix: ignored
  Set("http://www.example.com/", "g=7; Domain=ample.com");            // not on a dot boundary
  Set("http://www.example.com/", "h=8; Domain=");                     // empty: attribute ignored
  EXPECT_EQ(Get("http://www.example.com/"), "a=1; b=2; c=3; h=8");
  EXPECT_EQ(Get("http://example.com/"), "a=1; b=2");
  EXPECT_EQ(Get("http://api.example.com/"), "a=1; b=2");
  EXPECT_EQ(Get("http://x.www.example.com/"), "a=1; b=2; c=3");
  EXPECT_EQ(Get("http://notexample.com/"), "");
}

TEST_F(CookieJarTest, SingleLabelHostsAndIpAddresses) {
  Set("http://localhost:8080/", "a=1; Domain=localhost");  // the host itself: host-only
  Set("http://localhost:8080/", "b=2");
  Set("http://foo.localhost/", "c=3; Domain=localhost");  // another host's label: ignored
  EXPECT_EQ(Get("http://localhost/"), "a=1; b=2");
  EXPECT_EQ(Get("http://foo.localhost/"), "");

  Set("http://127.0.0.1:8080/", "ip=1; Domain=127.0.0.1");
  Set("http://127.0.0.1:8080/", "bad=1; Domain=0.0.1");  // IPs match only themselves
  Set("http://[::1]:8080/", "v6=1");
  EXPECT_EQ(Get("http://127.0.0.1/"), "ip=1");
  EXPECT_EQ(Get("http://127.0.0.2/"), "");
  EXPECT_EQ(Get("http://[::1]/"), "v6=1");
}

TEST_F(CookieJarTest, PathDefaultsAndMatching) {
  Set("http://h.com/shop/cart/view?x=/y", "dflt=1");  // default path /shop/cart
  Set("http://h.com/shop", "root=1");                 // default path /
  Set("http://h.com/", "docs=1; Path=/docs/");
  Set("http://h.com/", "api=1; Path=/api");
  Set("http://h.com/a/b", "rel=1; Path=relative");  // not starting with '/': default (/a)
  EXPECT_EQ(Get("http://h.com/shop/cart"), "dflt=1; root=1");
  EXPECT_EQ(Get("http://h.com/shop/cart/"), "dflt=1; root=1");
  EXPECT_EQ(Get("http://h.com/shop/cart/view"), "dflt=1; root=1");
  EXPECT_EQ(Get("http://h.com/shop/cartoon"), "root=1");
  EXPECT_EQ(Get("http://h.com/shop"), "root=1");
  EXPECT_EQ(Get("http://h.com/docs/"), "docs=1; root=1");
  EXPECT_EQ(Get("http://h.com/docs/x"), "docs=1; root=1");
  EXPECT_EQ(Get("http://h.com/docs"), "root=1");
  EXPECT_EQ(Get("http://h.com/api?q=1"), "api=1; root=1");
  EXPECT_EQ(Get("http://h.com/api/v1"), "api=1; root=1");
  EXPECT_EQ(Get("http://h.com/apiv1"), "root=1");
  EXPECT_EQ(Get("http://h.com/a/c"), "rel=1; root=1");
}

TEST_F(CookieJarTest, OrderIsLongestPathThenOldest) {
  Set("http://h.com/", "z=1; Path=/");
  Set("http://h.com/", "y=1; Path=/a/b");
  Set("http://h.com/", "x=1; Path=/a");
  Set("http://h.com/", "w=1; Path=/a");
  EXPECT_EQ(Get("http://h.com/a/b/c"), "y=1; x=1; w=1; z=1");
  // Replacing keeps the original creation order.
  Set("http://h.com/", "x=2; Path=/a");
  EXPECT_EQ(Get("http://h.com/a/b/c"), "y=1; x=2; w=1; z=1");
  EXPECT_EQ(jar_.size(), 4u);
}

TEST_F(CookieJarTest, ReplacementIsByNameDomainAndPath) {
  Set("http://www.h.com/", "a=1");
  Set("http://www.h.com/", "a=2; Domain=h.com");
  Set("http://www.h.com/", "a=3; Path=/x");
  Set("http://www.h.com/", "A=4");  // names are case-sensitive
  EXPECT_EQ(jar_.size(), 4u);
  EXPECT_EQ(Get("http://www.h.com/x"), "a=3; a=1; a=2; A=4");
  Set("http://www.h.com/", "a=5");
  EXPECT_EQ(Get("http://www.h.com/"), "a=5; a=2; A=4");
}

TEST_F(CookieJarTest, SecureCookiesOnlyOverHttps) {
  Set("https://h.com/", "s=1; Secure");
  Set("http://h.com/", "t=1; secure");  // allowed by RFC 6265
  Set("http://h.com/", "p=1");
  EXPECT_EQ(Get("https://h.com/"), "s=1; t=1; p=1");
  EXPECT_EQ(Get("http://h.com/"), "p=1");
}

TEST_F(CookieJarTest, MaxAgeAndExpires) {
  Set("http://h.com/", "short=1; Max-Age=10");
  Set("http://h.com/", "date=1; Expires=Wed, 01 May 2024 10:01:00 GMT");
  Set("http://h.com/", "session=1");
  EXPECT_EQ(Get("http://h.com/"), "short=1; date=1; session=1");
  EXPECT_EQ(Get("http://h.com/", kNow + 9), "short=1; date=1; session=1");
  EXPECT_EQ(Get("http://h.com/", kNow + 10), "date=1; session=1");
  EXPECT_EQ(Get("http://h.com/", kNow + 60), "session=1");
  EXPECT_EQ(Get("http://h.com/", INT64_MAX - 1), "session=1");

  // Max-Age wins over Expires, in either order.
  Set("http://h.com/", "m1=1; Max-Age=100; Expires=Wed, 01 May 2024 10:00:01 GMT");
  Set("http://h.com/", "m2=1; Expires=Wed, 01 May 2024 10:00:01 GMT; Max-Age=100");
  EXPECT_EQ(Get("http://h.com/", kNow + 50), "date=1; session=1; m1=1; m2=1");
  // Invalid values are ignored.
  Set("http://h.com/", "i1=1; Max-Age=abc");
  Set("http://h.com/", "i2=1; Max-Age=+5");
  Set("http://h.com/", "i3=1; Max-Age=");
  Set("http://h.com/", "i4=1; Expires=tomorrow");
  EXPECT_EQ(Get("http://h.com/", kNow + 1000), "session=1; i1=1; i2=1; i3=1; i4=1");
  // A huge Max-Age does not overflow.
  Set("http://h.com/", "long=1; Max-Age=99999999999999999999999");
  EXPECT_EQ(Get("http://h.com/", kNow + 100000000000), "session=1; i1=1; i2=1; i3=1; i4=1; long=1");
}

TEST_F(CookieJarTest, DeletingCookies) {
  Set("http://h.com/", "a=1");
  Set("http://h.com/", "b=1");
  Set("http://h.com/", "c=1");
  Set("http://h.com/", "d=1");
  Set("http://h.com/", "a=; Max-Age=0");
  Set("http://h.com/", "b=; Max-Age=-1");
  Set("http://h.com/", "c=; Expires=Thu, 01 Jan 1970 00:00:00 GMT");
  Set("http://h.com/", "d=1; Path=/other; Max-Age=0");  // another path: d=1 at / stays
  Set("http://h.com/", "new=1; Max-Age=0");             // never stored
  EXPECT_EQ(Get("http://h.com/"), "d=1");
  EXPECT_EQ(jar_.size(), 1u);
}

TEST_F(CookieJarTest, CapDropsExpiredThenOldest) {
  Set("http://h.com/", "soon=1; Max-Age=5");
  for (size_t i = 0; i < CookieJar::kMaxCookies - 1; ++i)
    Set("http://h.com/", "c" + std::to_string(i) + "=1");
  EXPECT_EQ(jar_.size(), CookieJar::kMaxCookies);
  Set("http://h.com/", "next=1", kNow + 10);  // "soon" has expired: it goes
  EXPECT_EQ(jar_.size(), CookieJar::kMaxCookies);
  EXPECT_EQ(Get("http://h.com/").find("soon="), std::string::npos);
  Set("http://h.com/", "last=1", kNow + 10);  // the oldest, c0, goes
  EXPECT_EQ(jar_.size(), CookieJar::kMaxCookies);
  std::string header = Get("http://h.com/", kNow + 10);
  EXPECT_TRUE(header.starts_with("c1=1; c2=1;")) << header.substr(0, 40);
  EXPECT_TRUE(header.ends_with("; next=1; last=1"));
  jar_.Clear();
  EXPECT_EQ(jar_.size(), 0u);
}

TEST(CookieDateTest, FormatsBrowsersAccept) {
  auto parse = [](std::string_view text) {
    int64_t t = 0;
    return ParseCookieDate(text, &t) ? t : -1;
  };
  const int64_t k1994 = 784111777;                                // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(parse("Sun, 06 Nov 1994 08:49:37 GMT"), k1994);       // RFC 1123
  EXPECT_EQ(parse("Sunday, 06-Nov-94 08:49:37 GMT"), k1994);      // RFC 850
  EXPECT_EQ(parse("Sun Nov  6 08:49:37 1994"), k1994);            // asctime
  EXPECT_EQ(parse("Sun, 06-Nov-1994 08:49:37 GMT"), k1994);       // Netscape
  EXPECT_EQ(parse("06 november 1994 8:49:37"), k1994);            // month prefix, 1 digit
  EXPECT_EQ(parse("Sun, 06 Nov 1994 08:49:37 UTC+0200"), k1994);  // zone ignored
  EXPECT_EQ(parse("1994 Nov 06 08:49:37"), k1994 - 0);            // 1994: a year, not a day
  EXPECT_EQ(parse("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
  EXPECT_EQ(parse("Thu, 01 Jan 70 00:00:00 GMT"), 0);
  EXPECT_EQ(parse("Sat, 01 Jan 00 00:00:00 GMT"), 946684800);  // 00-69: 2000s
  EXPECT_EQ(parse("Fri, 31 Dec 9999 23:59:59 GMT"), 253402300799);
  EXPECT_EQ(parse("Mon, 01 Jan 1601 00:00:00 GMT"), -11644473600);
  EXPECT_EQ(parse("Thu, 29 Feb 2024 12:00:00 GMT"), 1709208000);

  for (const char* bad :
       {"", "GMT", "Sun, 06 Nov 1994", "06 Nov 1994 08:49", "Nov 1994 08:49:37", "06 1994 08:49:37",
        "Sun, 06 Nov 08:49:37 GMT", "32 Nov 1994 08:49:37", "00 Nov 1994 08:49:37",
        "31 Nov 1994 08:49:37", "29 Feb 2023 08:49:37", "06 Nov 1600 08:49:37",
        "06 Nov 1994 24:00:00", "06 Nov 1994 23:60:00", "06 Nov 1994 23:59:60",
        "06 Nov 19941 08:49:37", "06 Nox 1994 08:49:37", "006 Nov 1994 08:49:37"}) {
    EXPECT_EQ(parse(bad), -1) << bad;
  }
}

}  // namespace
}  // namespace hammer::http
