#include "hammer/http/url.h"

#include <gtest/gtest.h>

#include <string>

namespace hammer::http {
namespace {

Url MustParse(std::string_view text) {
  Result<Url> url = ParseUrl(text);
  EXPECT_TRUE(url.ok()) << text << ": " << url.status().message();
  return url.ok() ? *url : Url{};
}

std::string ErrorOf(std::string_view text) {
  Result<Url> url = ParseUrl(text);
  EXPECT_FALSE(url.ok()) << text << " parsed as " << (url.ok() ? url->ToString() : "");
  return url.status().message();
}

TEST(UrlTest, MinimalUrl) {
  Url url = MustParse("http://example.com");
  EXPECT_EQ(url.scheme, "http");
  EXPECT_EQ(url.host, "example.com");
  EXPECT_EQ(url.port, 80);
  EXPECT_EQ(url.target, "/");
  EXPECT_FALSE(url.ipv6_literal);
  EXPECT_FALSE(url.tls());
  EXPECT_TRUE(url.default_port());
  EXPECT_EQ(url.HostHeader(), "example.com");
  EXPECT_EQ(url.Origin(), "http://example.com");
  EXPECT_EQ(url.ToString(), "http://example.com/");
  EXPECT_EQ(url.Path(), "/");
}

TEST(UrlTest, SchemeAndHostAreLowerCasedTargetIsKept) {
  Url url = MustParse("HTTPS://Example.COM:8443/a/B%2f?x=Y&z=%20#Frag");
  EXPECT_EQ(url.scheme, "https");
  EXPECT_TRUE(url.tls());
  EXPECT_EQ(url.host, "example.com");
  EXPECT_EQ(url.port, 8443);
  EXPECT_EQ(url.target, "/a/B%2f?x=Y&z=%20");
  EXPECT_EQ(url.Path(), "/a/B%2f");
  EXPECT_FALSE(url.default_port());
  EXPECT_EQ(url.HostHeader(), "example.com:8443");
  EXPECT_EQ(url.Origin(), "https://example.com:8443");
  EXPECT_EQ(url.ToString(), "https://example.com:8443/a/B%2f?x=Y&z=%20");
}

TEST(UrlTest, Ports) {
  EXPECT_EQ(MustParse("https://h/").port, 443);
  EXPECT_EQ(MustParse("https://h:443/").HostHeader(), "h");
  EXPECT_EQ(MustParse("http://h:443/").HostHeader(), "h:443");
  EXPECT_EQ(MustParse("http://h:1").port, 1);
  EXPECT_EQ(MustParse("http://h:65535/").port, 65535);
  EXPECT_EQ(MustParse("http://h:0080/").port, 80);
  EXPECT_EQ(MustParse("http://h:/x").port, 80);  // empty port: the default (RFC 3986 §3.2.3)
  EXPECT_EQ(ErrorOf("http://h:99999/"), "invalid port '99999'");
  EXPECT_EQ(ErrorOf("http://h:65536/"), "invalid port '65536'");
  EXPECT_EQ(ErrorOf("http://h:0/"), "invalid port '0'");
  EXPECT_EQ(ErrorOf("http://h:8a/"), "invalid port '8a'");
  EXPECT_EQ(ErrorOf("http://h:-1/"), "invalid port '-1'");
  EXPECT_EQ(ErrorOf("http://h:1:2/"), "invalid port '1:2'");
}

TEST(UrlTest, Hosts) {
  EXPECT_EQ(MustParse("http://127.0.0.1:9/").host, "127.0.0.1");
  EXPECT_EQ(MustParse("http://my_host-1.Example./").host, "my_host-1.example.");
  EXPECT_EQ(MustParse("http://localhost").host, "localhost");
  EXPECT_EQ(MustParse("http://h?q=1").target, "/?q=1");
  EXPECT_EQ(MustParse("http://h#frag").target, "/");
  EXPECT_EQ(MustParse("http://h/#frag?not-query").target, "/");
  EXPECT_EQ(ErrorOf("http:///x"), "empty host");
  EXPECT_EQ(ErrorOf("http://:80/"), "empty host");
  EXPECT_EQ(ErrorOf("http://exa$mple.com/"), "invalid host 'exa$mple.com'");
  EXPECT_EQ(ErrorOf("http://a..b/"), "invalid host 'a..b'");
  EXPECT_EQ(ErrorOf("http://.a/"), "invalid host '.a'");
  EXPECT_EQ(ErrorOf("http://1.2.3/"), "invalid IPv4 address '1.2.3'");
  EXPECT_EQ(ErrorOf("http://256.1.1.1/"), "invalid IPv4 address '256.1.1.1'");
  EXPECT_EQ(ErrorOf("http://" + std::string(256, 'a') + "/"), "host name too long");
}

TEST(UrlTest, Ipv6Literals) {
  Url url = MustParse("http://[::1]:8080/x");
  EXPECT_EQ(url.host, "::1");
  EXPECT_TRUE(url.ipv6_literal);
  EXPECT_EQ(url.port, 8080);
  EXPECT_EQ(url.HostHeader(), "[::1]:8080");
  EXPECT_EQ(url.ToString(), "http://[::1]:8080/x");
  url = MustParse("https://[2001:DB8::A]");
  EXPECT_EQ(url.host, "2001:db8::a");
  EXPECT_EQ(url.HostHeader(), "[2001:db8::a]");
  EXPECT_EQ(MustParse("http://[::ffff:192.0.2.1]/").host, "::ffff:192.0.2.1");
  EXPECT_EQ(ErrorOf("http://[::1/"), "unterminated IPv6 address");
  EXPECT_EQ(ErrorOf("http://[::g]/"), "invalid IPv6 address '::g'");
  EXPECT_EQ(ErrorOf("http://[]/"), "invalid IPv6 address ''");
  EXPECT_EQ(ErrorOf("http://[fe80::1%25eth0]/"), "invalid IPv6 address 'fe80::1%25eth0'");
  EXPECT_EQ(ErrorOf("http://[::1]x/"), "invalid host '[::1]x'");
  EXPECT_EQ(ErrorOf("http://::1/"), "empty host");  // IPv6 needs brackets
}

TEST(UrlTest, RejectedInputs) {
  EXPECT_EQ(ErrorOf("ftp://example.com/"), "unsupported scheme 'ftp'");
  EXPECT_EQ(ErrorOf("mailto:someone@example.com"), "unsupported scheme 'mailto'");
  EXPECT_EQ(ErrorOf("example.com/x"), "missing scheme (expected http:// or https://)");
  EXPECT_EQ(ErrorOf("//example.com/x"), "missing scheme (expected http:// or https://)");
  EXPECT_EQ(ErrorOf(""), "missing scheme (expected http:// or https://)");
  EXPECT_EQ(ErrorOf("http:/x"), "missing '//' after 'http:'");
  EXPECT_EQ(ErrorOf("http://user:secret@example.com/"),
            "userinfo ('user@') in URL is not supported");
  EXPECT_EQ(ErrorOf("http://example.com/a b"), "URL contains a space");
  EXPECT_EQ(ErrorOf(" http://example.com/"), "URL contains a space");
  EXPECT_EQ(ErrorOf("http://example.com/\t"), "URL contains a control character");
  EXPECT_EQ(ErrorOf("http://example.com/\x7f"), "URL contains a control character");
  EXPECT_EQ(ErrorOf(std::string_view("http://h/\0", 10)), "URL contains a control character");
  EXPECT_EQ(ErrorOf("http://example.com/caf\xc3\xa9"), "URL contains a non-ASCII byte");
}

// Every byte value at every position of texts shorter than a word, of a word, and of the last
// word the check reads (which overlaps the one before): the printable ones (0x21-0x7e) are
// accepted, each other one refused with its kind named, by ParseUrl and by UrlParser.
TEST(UrlTest, EveryByteValueAtEveryPositionIsCheckedAlone) {
  for (size_t length = 1; length <= 17; ++length) {
    for (size_t at = 0; at < length; ++at) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string text = "http://h/" + std::string(length, 'a');
        text[9 + at] = static_cast<char>(byte);
        std::string expected = byte == ' '                   ? "URL contains a space"
                               : byte < 0x20 || byte == 0x7f ? "URL contains a control character"
                               : byte >= 0x80                ? "URL contains a non-ASCII byte"
                                                             : "";
        // UrlParser checks only the bytes after an origin it has seen: "/" and `length` more.
        UrlParser parser;
        Url url;
        ASSERT_TRUE(parser.Parse("http://h/", &url).ok());
        Status status = parser.Parse(text, &url);
        if (expected.empty()) {
          EXPECT_TRUE(ParseUrl(text).ok()) << byte << " at " << at << " of " << length;
          EXPECT_TRUE(status.ok()) << byte << " at " << at << " of " << length;
        } else {
          EXPECT_EQ(ErrorOf(text), expected) << byte << " at " << at << " of " << length;
          EXPECT_EQ(status.message(), expected) << byte << " at " << at << " of " << length;
        }
      }
    }
  }
}

TEST(UrlTest, RoundTripsThroughToString) {
  for (std::string_view text : {"http://example.com", "HTTPS://Example.COM:8443/a?b#c",
                                "http://[::1]:80/", "https://[2001:db8::1]:444/x?y"}) {
    Url url = MustParse(text);
    EXPECT_EQ(MustParse(url.ToString()), url) << text;
  }
}

class ResolveLocationTest : public ::testing::Test {
 protected:
  std::string Resolve(std::string_view location) {
    Result<Url> url = ResolveLocation(base_, location);
    return url.ok() ? url->ToString() : "error: " + url.status().message();
  }
  Url base_ = MustParse("http://example.com:8080/dir/page?x=1");
};

TEST_F(ResolveLocationTest, AbsoluteAndSchemeRelative) {
  EXPECT_EQ(Resolve("https://Other.org/p?q#f"), "https://other.org/p?q");
  EXPECT_EQ(Resolve("//cdn.example.net/a"), "http://cdn.example.net/a");
  EXPECT_EQ(Resolve("//cdn.example.net"), "http://cdn.example.net/");
  EXPECT_EQ(Resolve("ftp://x/"), "error: unsupported scheme 'ftp'");
  EXPECT_EQ(Resolve("//user@h/"), "error: userinfo ('user@') in URL is not supported");
}

TEST_F(ResolveLocationTest, AbsolutePath) {
  EXPECT_EQ(Resolve("/root?y=2#f"), "http://example.com:8080/root?y=2");
  EXPECT_EQ(Resolve("/"), "http://example.com:8080/");
  EXPECT_EQ(Resolve("/a/./b/../c/"), "http://example.com:8080/a/c/");
  EXPECT_EQ(Resolve("/a/..?q"), "http://example.com:8080/?q");
}

TEST_F(ResolveLocationTest, RelativePath) {
  EXPECT_EQ(Resolve("next"), "http://example.com:8080/dir/next");
  EXPECT_EQ(Resolve("next?z=3"), "http://example.com:8080/dir/next?z=3");
  EXPECT_EQ(Resolve("./same"), "http://example.com:8080/dir/same");
  EXPECT_EQ(Resolve("../up"), "http://example.com:8080/up");
  EXPECT_EQ(Resolve("a/../b"), "http://example.com:8080/dir/b");
  EXPECT_EQ(Resolve("../../../x"), "http://example.com:8080/x");
  EXPECT_EQ(Resolve("."), "http://example.com:8080/dir/");
  EXPECT_EQ(Resolve(".."), "http://example.com:8080/");
  EXPECT_EQ(Resolve("sub/"), "http://example.com:8080/dir/sub/");
  EXPECT_EQ(Resolve("a:b/c"), "error: unsupported scheme 'a'");
  EXPECT_EQ(Resolve("./a:b"), "http://example.com:8080/dir/a:b");
}

TEST_F(ResolveLocationTest, QueryAndFragmentOnly) {
  EXPECT_EQ(Resolve("?q=2"), "http://example.com:8080/dir/page?q=2");
  EXPECT_EQ(Resolve("?"), "http://example.com:8080/dir/page?");
  EXPECT_EQ(Resolve(""), "http://example.com:8080/dir/page?x=1");
  EXPECT_EQ(Resolve("#frag"), "http://example.com:8080/dir/page?x=1");
}

TEST_F(ResolveLocationTest, RejectsBadBytes) {
  EXPECT_EQ(Resolve("/a b"), "error: URL contains a space");
  EXPECT_EQ(Resolve("/\r\nSet-Cookie: x"), "error: URL contains a control character");
}

TEST(ResolveLocationBaseTest, Ipv6AndRootBases) {
  Result<Url> url = ResolveLocation(MustParse("https://[::1]:8443/a/b"), "c");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->ToString(), "https://[::1]:8443/a/c");
  EXPECT_TRUE(url->ipv6_literal);
  url = ResolveLocation(MustParse("http://h"), "x");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->target, "/x");
  Url no_target;  // built by hand, not by ParseUrl
  no_target.scheme = "http";
  no_target.host = "h";
  no_target.port = 80;
  url = ResolveLocation(no_target, "x");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->ToString(), "http://h/x");
}

// UrlParser must answer exactly as ParseUrl, whichever URL it parsed before: each URL of the
// list is parsed after each other one (and after itself), into a Url left dirty by the last.
TEST(UrlParserTest, AgreesWithParseUrlWhateverCameBefore) {
  const std::string_view urls[] = {
      "http://h/a",
      "http://h",
      "http://h?x=1",
      "http://h#frag",
      "http://h#x/y?z",
      "http://h/a#b",
      "http://h:80/a",
      "http://h:8080/a",
      "http://h:8080",
      "http://H/Up",
      "https://h/a",
      "http://[::1]:8/x",
      "http://[::1]:8?q",
      "http://h/a b",
      "http://h/\x01",
      "http://h/\xff",
      "http://hh/a",
      "http://h:0/a",
      "ftp://h/a",
      "http://h/a?b#c d",
      "http://user@h/a",
      "http:/h/a",
      "",
      "http://h.example/a",
      "HTTP://h/x",
      "http://h//a//",
      "http://h:80",
      "http://h/?",
  };
  for (std::string_view before : urls) {
    for (std::string_view text : urls) {
      UrlParser parser;
      Url url;
      Status first = parser.Parse(before, &url);
      Result<Url> expected_before = ParseUrl(before);
      ASSERT_EQ(first.ok(), expected_before.ok()) << before;
      if (first.ok()) {
        EXPECT_EQ(url, *expected_before) << before;
      }
      Status status = parser.Parse(text, &url);
      Result<Url> expected = ParseUrl(text);
      ASSERT_EQ(status.ok(), expected.ok()) << before << " then " << text;
      if (status.ok()) {
        EXPECT_EQ(url, *expected) << before << " then " << text;
      } else {
        EXPECT_EQ(status.message(), expected.status().message()) << before << " then " << text;
      }
    }
  }
}

}  // namespace
}  // namespace hammer::http
