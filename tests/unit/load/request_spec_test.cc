#include "hammer/load/request_spec.h"

#include <gtest/gtest.h>

namespace hammer::load {
namespace {

TEST(RequestSpecTest, Defaults) {
  RequestSpec spec;
  EXPECT_EQ(spec.method, "GET");
  EXPECT_EQ(spec.offset, -1);
  EXPECT_TRUE(spec.headers.empty());
}

TEST(RequestSpecTest, Methods) {
  EXPECT_TRUE(CheckMethod("GET").ok());
  EXPECT_TRUE(CheckMethod("M-SEARCH").ok());
  EXPECT_TRUE(CheckMethod("get").ok());
  EXPECT_EQ(CheckMethod("").message(), "bad method ''");
  EXPECT_EQ(CheckMethod("GE T").message(), "bad method 'GE T'");
  EXPECT_EQ(CheckMethod("GET\r\n").message(),
            "bad method 'GET?"
            "?'");
  EXPECT_FALSE(CheckMethod(std::string(33, 'A')).ok());
  EXPECT_TRUE(CheckMethod(std::string(32, 'A')).ok());
}

TEST(RequestSpecTest, UrlsAndHeaders) {
  EXPECT_TRUE(CheckUrl("http://127.0.0.1:8080/x?y").ok());
  EXPECT_EQ(CheckUrl("/x").message(),
            "bad URL '/x': missing scheme (expected http:// or https://)");
  EXPECT_TRUE(CheckHeader("X-Token", "a\tb c").ok());
  EXPECT_TRUE(CheckHeader("X", "").ok());
  EXPECT_EQ(CheckHeader("X Y", "1").message(), "bad header name 'X Y'");
  EXPECT_EQ(CheckHeader("X:", "1").message(), "bad header name 'X:'");
  EXPECT_EQ(CheckHeader("X", "a\r\nInjected: 1").message(),
            "control character in the value of header 'X'");
  EXPECT_FALSE(CheckHeader("X", std::string("a\0b", 3)).ok());
  EXPECT_FALSE(CheckHeader("X", "a\x7f").ok());
  EXPECT_TRUE(CheckHeader("X", "caf\xc3\xa9").ok());  // obs-text is allowed
}

}  // namespace
}  // namespace hammer::load
