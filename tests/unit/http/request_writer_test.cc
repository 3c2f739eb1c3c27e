#include "hammer/http/request_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hammer::http {
namespace {

std::string ErrorOf(const std::vector<std::string>& flags) {
  Result<HeaderList> headers = ParseHeaderFlags(flags);
  EXPECT_FALSE(headers.ok());
  return headers.ok() ? "" : headers.status().message();
}

TEST(ParseHeaderFlagsTest, NameAndValueAsCurlReadsThem) {
  Result<HeaderList> headers = ParseHeaderFlags({"X-A:  b c", "Host: api.example.test"});
  ASSERT_TRUE(headers.ok()) << headers.status().message();
  EXPECT_EQ(*headers, (HeaderList{{"X-A", "b c"}, {"Host", "api.example.test"}}));
}

// RFC 9112 section 2.2: a bare CR or LF ends a field line; anything after it would be another
// header or a second request on the wire.
TEST(ParseHeaderFlagsTest, LineBreaksAndNulAreRefused) {
  EXPECT_EQ(ErrorOf({"X-A: 1\r\nX-Injected: 1"}),
            "a header may not contain CR, LF or NUL: 'X-A: 1\\r\\nX-Injected: 1'");
  EXPECT_EQ(ErrorOf({"X-A: 1\nGET / HTTP/1.1"}),
            "a header may not contain CR, LF or NUL: 'X-A: 1\\nGET / HTTP/1.1'");
  EXPECT_EQ(ErrorOf({std::string("X-A: a\0b", 8)}),
            "a header may not contain CR, LF or NUL: 'X-A: a\\0b'");
  EXPECT_EQ(ErrorOf({"Bad Name: x"}), "'Bad Name' is not a header name");
}

TEST(ParseHeaderFlagsTest, FramingHeadersAreHammers) {
  EXPECT_NE(ErrorOf({"Content-Length: 5"}).find("Content-Length is hammer's to set"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"transfer-encoding: chunked"}).find("transfer-encoding is hammer's to set"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"Host: a", "HOST: b"}).find("Host given twice"), std::string::npos);
}

TEST(SerializeRequestHeadTest, TheBodyIsFramedByHammersContentLengthOnly) {
  Result<Url> url = ParseUrl("http://h:8080/p");
  ASSERT_TRUE(url.ok());
  HeaderList headers{{"Content-Length", "100"}, {"Transfer-Encoding", "chunked"}, {"X-A", "1"}};
  std::string head = SerializeRequestHead("POST", *url, headers, 3);
  EXPECT_EQ(head, "POST /p HTTP/1.1\r\nHost: h:8080\r\nUser-Agent: hammer/" HAMMER_VERSION
                  "\r\nAccept: */*\r\nX-A: 1\r\nContent-Length: 3\r\n\r\n");
  // A GET without a body gets no Content-Length, whatever the caller said.
  head = SerializeRequestHead("GET", *url, headers, 0);
  EXPECT_EQ(head.find("Content-Length"), std::string::npos) << head;
  EXPECT_EQ(head.find("Transfer-Encoding"), std::string::npos) << head;
}

TEST(SerializeRequestHeadTest, AGivenHostReplacesTheUrls) {
  Result<Url> url = ParseUrl("http://127.0.0.1:8080/");
  ASSERT_TRUE(url.ok());
  std::string head = SerializeRequestHead("GET", *url, {{"Host", "api.example.test"}}, 0);
  EXPECT_EQ(head.find("127.0.0.1"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nHost: api.example.test\r\n"), std::string::npos) << head;
}

TEST(IsMethodNameTest, TokensOnly) {
  EXPECT_TRUE(IsMethodName("GET"));
  EXPECT_TRUE(IsMethodName("PURGE"));
  EXPECT_FALSE(IsMethodName(""));
  EXPECT_FALSE(IsMethodName("GET /"));
  EXPECT_FALSE(IsMethodName("GET\r\n"));
}

}  // namespace
}  // namespace hammer::http
