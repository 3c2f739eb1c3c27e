// ForkEligibility against rest.li's TestDarkClusterManager table (allow/deny patterns by
// method) and the method-override and pattern rules.
#include "hammer/dark/eligibility.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace hammer::dark {
namespace {

TEST(ForkEligibilityTest, RestLiTable) {
  struct Row {
    std::vector<std::string> allow;
    std::vector<std::string> deny;
    std::string method;
    bool white_sent;
    bool black_sent;
  };
  const Row rows[] = {
      {{}, {}, "GET", true, true},
      {{}, {}, "POST", false, false},
      {{".*white.*"}, {}, "GET", true, true},
      {{".*white.*"}, {}, "POST", true, false},
      {{".*white.*"}, {".*black.*"}, "GET", true, false},
      {{".*white.*"}, {".*black.*"}, "POST", true, false},
      {{}, {".*black.*"}, "GET", true, false},
      {{}, {".*black.*"}, "POST", false, false},
  };
  for (const Row& row : rows) {
    auto eligibility = ForkEligibility::Create(row.allow, row.deny);
    ASSERT_TRUE(eligibility.ok());
    std::string label = row.method + " allow=" + (row.allow.empty() ? "-" : row.allow[0]) +
                        " deny=" + (row.deny.empty() ? "-" : row.deny[0]);
    EXPECT_EQ(eligibility->Eligible(row.method, "/white"), row.white_sent) << label;
    EXPECT_EQ(eligibility->Eligible(row.method, "/black"), row.black_sent) << label;
  }
}

TEST(ForkEligibilityTest, SafeMethodsOnly) {
  ForkEligibility eligibility;
  for (const char* method : {"GET", "HEAD", "OPTIONS", "TRACE"}) {
    EXPECT_TRUE(eligibility.Eligible(method, "/")) << method;
  }
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "CONNECT", "get", "FOO", ""}) {
    EXPECT_FALSE(eligibility.Eligible(method, "/")) << method;
  }
}

TEST(ForkEligibilityTest, TrustedMethodOverrideIsTheMethodJudged) {
  ForkEligibility eligibility({}, {}, /*trust_method_override=*/true);
  EXPECT_TRUE(eligibility.Eligible("POST", "/", std::string_view("GET")));
  EXPECT_TRUE(eligibility.Eligible("POST", "/", std::string_view(" GET ")));
  EXPECT_FALSE(eligibility.Eligible("GET", "/", std::string_view("DELETE")));
  EXPECT_FALSE(eligibility.Eligible("GET", "/", std::string_view("")));  // present but empty
  EXPECT_FALSE(eligibility.Eligible("GET", "/", std::string_view("bogus")));
}

TEST(ForkEligibilityTest, UntrustedMethodOverrideNeverMakesAWriteEligible) {
  ForkEligibility eligibility;  // the default: overrides are the client's claim
  EXPECT_FALSE(eligibility.Eligible("POST", "/", std::string_view("GET")));
  EXPECT_FALSE(eligibility.Eligible("DELETE", "/", std::string_view("GET")));
  EXPECT_TRUE(eligibility.Eligible("GET", "/", std::string_view("GET")));
  EXPECT_TRUE(eligibility.Eligible("GET", "/", std::string_view("HEAD")));
  // An upstream that honours the override would treat the copy as a write: not forked.
  EXPECT_FALSE(eligibility.Eligible("GET", "/", std::string_view("DELETE")));
  EXPECT_FALSE(eligibility.Eligible("GET", "/", std::string_view("")));
  // An allow pattern still makes the request eligible, whatever the override says.
  ForkEligibility allowed({"/search"}, {});
  EXPECT_TRUE(allowed.Eligible("POST", "/search", std::string_view("GET")));
}

TEST(ForkEligibilityTest, EveryOverrideHeaderNameIsRead) {
  ForkEligibility untrusted;
  ForkEligibility trusted({}, {}, /*trust_method_override=*/true);
  for (const char* name : {"X-HTTP-Method-Override", "x-http-method", "X-Method-Override"}) {
    const http::Header headers[] = {{"Host", "x"}, {name, "DELETE"}};
    http::RequestHead head;
    head.method = "GET";
    head.target = "/";
    head.headers = headers;
    EXPECT_EQ(ForkEligibility::MethodOverride(headers), std::optional<std::string_view>("DELETE"))
        << name;
    EXPECT_FALSE(untrusted.Eligible(head)) << name;
    EXPECT_FALSE(trusted.Eligible(head)) << name;
  }
}

TEST(ForkEligibilityTest, ReadsTheOverrideHeaderFromARequestHead) {
  ForkEligibility eligibility({}, {}, /*trust_method_override=*/true);
  const http::Header tunnelled[] = {{"Host", "x"}, {"x-http-method-override", "GET"}};
  const http::Header plain[] = {{"Host", "x"}};
  http::RequestHead head;
  head.method = "POST";
  head.target = "/search?q=1";
  head.headers = tunnelled;
  EXPECT_TRUE(eligibility.Eligible(head));
  head.headers = plain;
  EXPECT_FALSE(eligibility.Eligible(head));
  head.method = "GET";
  EXPECT_TRUE(eligibility.Eligible(head));
}

TEST(ForkEligibilityTest, PatternsMatchTheWholeTarget) {
  auto eligibility = ForkEligibility::Create({"/api/.*"}, {".*[?&]nodark=1.*", "/api/admin(/.*)?"});
  ASSERT_TRUE(eligibility.ok());
  EXPECT_TRUE(eligibility->Eligible("POST", "/api/search"));
  EXPECT_FALSE(eligibility->Eligible("POST", "/v2/api/search"));  // not a full match
  EXPECT_FALSE(eligibility->Eligible("GET", "/api/search?x=1&nodark=1"));
  EXPECT_FALSE(eligibility->Eligible("GET", "/api/admin"));
  EXPECT_FALSE(eligibility->Eligible("GET", "/api/admin/users"));
  EXPECT_TRUE(eligibility->Eligible("GET", "/api/administrators"));
  // A substring pattern needs ".*" around it, as with Java's matches().
  auto bare = ForkEligibility::Create({"white"}, {});
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->Eligible("POST", "/white"));
}

TEST(ForkEligibilityTest, InvalidPatternFailsClosed) {
  auto created = ForkEligibility::Create({}, {"(unclosed"});
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.status().message().find("deny pattern \"(unclosed\""), std::string::npos);
  ForkEligibility constructed({"[z-a]"}, {});
  EXPECT_FALSE(constructed.status().ok());
  EXPECT_FALSE(constructed.Eligible("GET", "/"));
}

TEST(ForkEligibilityTest, CopiesSharePatterns) {
  ForkEligibility original({".*white.*"}, {});
  ForkEligibility copy = original;
  EXPECT_TRUE(copy.Eligible("POST", "/white"));
  EXPECT_FALSE(copy.Eligible("POST", "/black"));
}

}  // namespace
}  // namespace hammer::dark

namespace hammer::dark {
namespace {

http::RequestHead GrpcCall(std::string_view path, std::span<const http::Header> headers) {
  http::RequestHead head;
  head.method = "POST";
  head.target = path;
  head.headers = headers;
  return head;
}

TEST(ForkEligibilityTest, GrpcCallsAreSafeWhenTheirMethodIsListed) {
  auto eligibility = ForkEligibility::Create({}, {"/shop.Catalog/GetSecret"}, false,
                                             {"/shop.Catalog/Get*", "/shop.Search/*"});
  ASSERT_TRUE(eligibility.ok());
  const http::Header grpc[] = {{"content-type", "application/grpc+proto"}, {"te", "trailers"}};
  EXPECT_TRUE(eligibility->Eligible(GrpcCall("/shop.Catalog/GetItem", grpc)));
  EXPECT_TRUE(eligibility->Eligible(GrpcCall("/shop.Search/Query", grpc)));
  EXPECT_FALSE(eligibility->Eligible(GrpcCall("/shop.Catalog/PutItem", grpc)));
  EXPECT_FALSE(eligibility->Eligible(GrpcCall("/shop.Catalog/GetSecret", grpc)));  // denied
  // The same POST without a gRPC content type is judged as any POST: unsafe.
  const http::Header json[] = {{"content-type", "application/json"}};
  EXPECT_FALSE(eligibility->Eligible(GrpcCall("/shop.Catalog/GetItem", json)));
  // Unlisted, no gRPC call is copied.
  EXPECT_FALSE(ForkEligibility().Eligible(GrpcCall("/shop.Catalog/GetItem", grpc)));
}

TEST(ForkEligibilityTest, AGrpcMethodGlobIsAPath) {
  auto created = ForkEligibility::Create({}, {}, false, {"shop.Catalog/Get*"});
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.status().message().find("/package.Service/Method"), std::string::npos);
}

}  // namespace
}  // namespace hammer::dark
