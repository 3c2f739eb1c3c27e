// ForwardRequestHead and ForwardTarget: what the proxy sends upstream for what a client sent,
// in particular what a hostile client cannot make it send.
#include "hammer/dark/forwarding.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hammer::dark {
namespace {

http::Url Upstream() {
  Result<http::Url> url = http::ParseUrl("http://127.0.0.1:9001");
  EXPECT_TRUE(url.ok());
  return *url;
}

std::string Forward(std::string_view method, std::string_view target,
                    std::vector<http::Header> headers, ForwardOptions options = {}) {
  http::RequestHead head;
  head.method = method;
  head.target = target;
  head.headers = headers;
  return ForwardRequestHead(head, Upstream(), 0, options);
}

size_t Count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(ForwardTargetTest, AbsoluteFormBecomesOriginForm) {
  EXPECT_EQ(ForwardTarget("GET", "/a?b=1"), "/a?b=1");
  EXPECT_EQ(ForwardTarget("GET", "http://evil.example/admin?x=1"), "/admin?x=1");
  EXPECT_EQ(ForwardTarget("GET", "https://evil.example:8443/a/b"), "/a/b");
  EXPECT_EQ(ForwardTarget("GET", "http://evil.example"), "/");
  EXPECT_EQ(ForwardTarget("GET", "http://evil.example?q"), "/");
  EXPECT_EQ(ForwardTarget("GET", "HTTP://user@evil.example/x"), "/x");
  EXPECT_EQ(ForwardTarget("OPTIONS", "*"), "*");
  for (std::string_view bad :
       {"*", "evil.example:443", "evil.example/x", "://x/y", "ht^tp://x/y", "x"}) {
    EXPECT_EQ(ForwardTarget("GET", bad), "") << bad;
  }
  EXPECT_EQ(ForwardTarget("CONNECT", "evil.example:443"), "");
}

TEST(ForwardRequestHeadTest, TheClientsDarkHeaderIsNeverForwarded) {
  std::string out = Forward("GET", "/", {{"Host", "a"}, {"x-hammer-dark", "forged"}});
  EXPECT_EQ(out.find("forged"), std::string::npos) << out;
  ForwardOptions copy;
  copy.extra_header = "X-Hammer-Dark: canary";
  out = Forward("GET", "/", {{"Host", "a"}, {"X-Hammer-Dark", "forged"}}, copy);
  EXPECT_EQ(Count(out, "X-Hammer-Dark"), 1u) << out;
  EXPECT_NE(out.find("X-Hammer-Dark: canary\r\n"), std::string::npos) << out;
}

TEST(ForwardRequestHeadTest, TheClientAddressIsAppended) {
  ForwardOptions options;
  options.client_ip = "192.0.2.7";
  std::string out = Forward("GET", "/", {{"Host", "a"}}, options);
  EXPECT_NE(out.find("X-Forwarded-For: 192.0.2.7\r\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("Forwarded: for"), std::string::npos) << out;  // not invented
  out = Forward("GET", "/",
                {{"Host", "a"},
                 {"X-Forwarded-For", "10.0.0.1"},
                 {"Forwarded", "for=10.0.0.1"},
                 {"x-forwarded-for", "10.0.0.2"}},
                options);
  EXPECT_NE(out.find("X-Forwarded-For: 10.0.0.1, 10.0.0.2, 192.0.2.7\r\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("Forwarded: for=10.0.0.1, for=192.0.2.7\r\n"), std::string::npos) << out;
  options.client_ip = "2001:db8::1";
  out = Forward("GET", "/", {{"Host", "a"}, {"Forwarded", "for=x"}}, options);
  EXPECT_NE(out.find("Forwarded: for=x, for=\"[2001:db8::1]\"\r\n"), std::string::npos) << out;
  // --no-forwarded-for: passed on unchanged.
  out = Forward("GET", "/", {{"Host", "a"}, {"X-Forwarded-For", "10.0.0.1"}});
  EXPECT_NE(out.find("X-Forwarded-For: 10.0.0.1\r\n"), std::string::npos) << out;
}

TEST(ForwardRequestHeadTest, ConnectionCannotRemoveWhatTheProxyAsserts) {
  ForwardOptions options;
  options.client_ip = "192.0.2.7";
  options.preserve_host = true;
  std::string out =
      Forward("GET", "/",
              {{"Host", "client.example"},
               {"Connection", "close, X-Forwarded-For, Forwarded, Host, X-Real-IP, X-Custom"},
               {"X-Forwarded-For", "203.0.113.9"},
               {"Forwarded", "for=203.0.113.9"},
               {"X-Real-IP", "203.0.113.9"},
               {"X-Custom", "dropped"}},
              options);
  EXPECT_NE(out.find("Host: client.example\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("X-Forwarded-For: 203.0.113.9, 192.0.2.7\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Forwarded: for=203.0.113.9, for=192.0.2.7\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("X-Real-IP: 203.0.113.9\r\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("X-Custom"), std::string::npos) << out;  // an ordinary field still goes
  EXPECT_EQ(out.find("Connection"), std::string::npos) << out;
}

TEST(ForwardRequestHeadTest, OneHostLineWhateverHappens) {
  ForwardOptions preserve;
  preserve.preserve_host = true;
  std::string out = Forward("GET", "/", {{"Host", "first"}, {"Host", "second"}}, preserve);
  EXPECT_EQ(Count(out, "Host:"), 1u) << out;
  EXPECT_NE(out.find("Host: first\r\n"), std::string::npos) << out;
  out = Forward("GET", "/", {{"Host", "first"}, {"Host", "second"}});
  EXPECT_EQ(Count(out, "Host:"), 1u) << out;
  EXPECT_NE(out.find("Host: 127.0.0.1:9001\r\n"), std::string::npos) << out;
}

TEST(ForwardRequestHeadTest, TeTrailersIsTheOneTePassedOn) {
  std::string out = Forward("POST", "/svc.Greeter/Hello", {{"Host", "a"}, {"te", "trailers"}});
  EXPECT_NE(out.find("TE: trailers\r\nConnection: TE\r\n"), std::string::npos) << out;
  out = Forward("GET", "/", {{"Host", "a"}, {"TE", "gzip;q=0.5, trailers"}});
  EXPECT_EQ(Count(out, "TE: trailers\r\n"), 1u) << out;
  EXPECT_EQ(out.find("gzip"), std::string::npos) << out;
  out = Forward("GET", "/", {{"Host", "a"}, {"TE", "gzip"}, {"Connection", "TE"}});
  EXPECT_EQ(out.find("TE"), std::string::npos) << out;
  EXPECT_EQ(out.find("Connection"), std::string::npos) << out;
}

TEST(ForwardRequestHeadTest, CookieCrumbsBecomeOneLine) {
  // RFC 9113 §8.2.3: an HTTP/2 client may split its cookies into several fields.
  std::string out =
      Forward("GET", "/", {{"Host", "a"}, {"cookie", "a=1"}, {"x", "y"}, {"cookie", "b=2; c=3"}});
  EXPECT_EQ(Count(out, "Cookie:"), 1u) << out;
  EXPECT_NE(out.find("Cookie: a=1; b=2; c=3\r\n"), std::string::npos) << out;
  out = Forward("GET", "/", {{"Host", "a"}});
  EXPECT_EQ(out.find("Cookie"), std::string::npos) << out;
}

TEST(RetargetHostTest, TheHostLineNamesTheNextUpstream) {
  Result<http::Url> other = http::ParseUrl("http://127.0.0.1:9002");
  ASSERT_TRUE(other.ok());
  std::string head = Forward("GET", "/x", {{"Host", "client"}, {"X-A", "1"}});
  std::string moved = RetargetHost(head, Upstream(), *other);
  EXPECT_NE(moved.find("\r\nHost: 127.0.0.1:9002\r\n"), std::string::npos) << moved;
  EXPECT_EQ(moved.find("9001"), std::string::npos) << moved;
  EXPECT_EQ(moved.size(), head.size());
  // --preserve-host: the client's Host stays.
  ForwardOptions preserve;
  preserve.preserve_host = true;
  head = Forward("GET", "/x", {{"Host", "client"}}, preserve);
  EXPECT_EQ(RetargetHost(head, Upstream(), *other), head);
}

}  // namespace
}  // namespace hammer::dark
