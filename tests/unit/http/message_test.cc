#include "hammer/http/message.h"

#include <gtest/gtest.h>

namespace hammer::http {
namespace {

TEST(MessageTest, EqualsIgnoreCaseAndFindHeader) {
  EXPECT_TRUE(EqualsIgnoreCase("Content-Length", "content-LENGTH"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("a", "ab"));
  EXPECT_FALSE(EqualsIgnoreCase("@", "`"));  // differ only in bit 0x20 but are not letters
  EXPECT_FALSE(EqualsIgnoreCase("[", "{"));
  Header headers[] = {{"Host", "a"}, {"X-Id", "1"}, {"x-id", "2"}};
  EXPECT_EQ(FindHeader(headers, "x-ID"), "1");
  EXPECT_EQ(FindHeader(headers, "HOST"), "a");
  EXPECT_EQ(FindHeader(headers, "Missing"), std::nullopt);
}

TEST(MessageTest, ListHasToken) {
  EXPECT_TRUE(ListHasToken("close", "close"));
  EXPECT_TRUE(ListHasToken("keep-alive, Upgrade", "upgrade"));
  EXPECT_TRUE(ListHasToken(" ,\tX-Foo\t, close", "x-foo"));
  EXPECT_FALSE(ListHasToken("keep-alive, Upgrade", "keep"));
  EXPECT_FALSE(ListHasToken("close-ish", "close"));
  EXPECT_FALSE(ListHasToken("", "close"));
  EXPECT_FALSE(ListHasToken("a, ,b", ""));
}

TEST(MessageTest, ParseErrorNames) {
  EXPECT_EQ(ParseErrorName(ParseError::kNone), "none");
  EXPECT_EQ(ParseErrorName(ParseError::kBadStartLine), "bad_start_line");
  EXPECT_EQ(ParseErrorName(ParseError::kBadVersion), "bad_version");
  EXPECT_EQ(ParseErrorName(ParseError::kBadHeader), "bad_header");
  EXPECT_EQ(ParseErrorName(ParseError::kHeadTooLarge), "head_too_large");
  EXPECT_EQ(ParseErrorName(ParseError::kTooManyHeaders), "too_many_headers");
  EXPECT_EQ(ParseErrorName(ParseError::kBadContentLength), "bad_content_length");
  EXPECT_EQ(ParseErrorName(ParseError::kBadTransferEncoding), "bad_transfer_encoding");
  EXPECT_EQ(ParseErrorName(ParseError::kUnsupportedTransferCoding), "unsupported_transfer_coding");
  EXPECT_EQ(ParseErrorName(ParseError::kBadHost), "bad_host");
  EXPECT_EQ(ParseErrorName(ParseError::kBadChunk), "bad_chunk");
  EXPECT_EQ(ParseErrorName(ParseError::kChunkLineTooLong), "chunk_line_too_long");
  EXPECT_EQ(ParseErrorName(ParseError::kBodyTooLarge), "body_too_large");
  EXPECT_EQ(ParseErrorName(ParseError::kTruncated), "truncated");
}

}  // namespace
}  // namespace hammer::http
