#include "hammer/load/target_line.h"

#include <gtest/gtest.h>

#include <string>

namespace hammer::load {
namespace {

void ExpectRequest(std::string_view line, std::string_view method, std::string_view url) {
  TargetLine parsed = ParseTargetLine(line);
  EXPECT_EQ(parsed.kind, TargetLine::Kind::kRequest) << "'" << line << "'";
  EXPECT_EQ(parsed.method, method) << "'" << line << "'";
  EXPECT_EQ(parsed.url, url) << "'" << line << "'";
}

void ExpectSkip(std::string_view line) {
  EXPECT_EQ(ParseTargetLine(line).kind, TargetLine::Kind::kSkip) << "'" << line << "'";
}

TEST(TargetLineTest, BareUrlIsAGet) {
  ExpectRequest("http://127.0.0.1:8080/a?b=c", "GET", "http://127.0.0.1:8080/a?b=c");
  ExpectRequest("https://example.com", "GET", "https://example.com");
}

TEST(TargetLineTest, MethodThenUrl) {
  ExpectRequest("POST http://h/x", "POST", "http://h/x");
  ExpectRequest("DELETE\thttp://h/x", "DELETE", "http://h/x");
  ExpectRequest("PUT   http://h/x  ", "PUT", "http://h/x");
  ExpectRequest("HEAD http://h/", "HEAD", "http://h/");
  ExpectRequest("ABCDEFGHIJKLMNOP http://h/", "ABCDEFGHIJKLMNOP", "http://h/");  // 16 letters
}

TEST(TargetLineTest, WordsThatAreNotMethodsStayInTheUrl) {
  // Lower case, too long, digits or punctuation: the whole line is the URL (ParseUrl rejects it).
  ExpectRequest("get http://h/x", "GET", "get http://h/x");
  ExpectRequest("Post http://h/x", "GET", "Post http://h/x");
  ExpectRequest("ABCDEFGHIJKLMNOPQ http://h/", "GET", "ABCDEFGHIJKLMNOPQ http://h/");
  ExpectRequest("M-SEARCH http://h/", "GET", "M-SEARCH http://h/");
  ExpectRequest("GET2 http://h/", "GET", "GET2 http://h/");
  ExpectRequest("GET", "GET", "GET");  // a method alone: no URL after it
}

TEST(TargetLineTest, MethodsAndBlanksAtTheEdges) {
  ExpectRequest("GET\thttp://h/x\r", "GET", "http://h/x");
  ExpectRequest("GET \t http://h/x \t\r", "GET", "http://h/x");
  ExpectRequest("GET \r", "GET", "GET");  // the method alone, CR and blanks trimmed
  ExpectRequest("A http://h/x", "A", "http://h/x");
  ExpectRequest("GET\rhttp://h/x", "GET", "GET\rhttp://h/x");  // a CR is not a blank
  ExpectRequest("GET/ http://h/x", "GET", "GET/ http://h/x");
  ExpectRequest("\r http://h/x", "GET", "\r http://h/x");  // a leading CR stays
  ExpectSkip(" \t\r\r");
}

TEST(TargetLineTest, LooksLikeMethod) {
  EXPECT_TRUE(LooksLikeMethod("GET"));
  EXPECT_TRUE(LooksLikeMethod("A"));
  EXPECT_TRUE(LooksLikeMethod("PROPFIND"));
  EXPECT_FALSE(LooksLikeMethod(""));
  EXPECT_FALSE(LooksLikeMethod("get"));
  EXPECT_FALSE(LooksLikeMethod("Get"));
  EXPECT_FALSE(LooksLikeMethod("GET "));
  EXPECT_FALSE(LooksLikeMethod("ABCDEFGHIJKLMNOPQ"));
  EXPECT_FALSE(LooksLikeMethod("http://h/"));
}

TEST(TargetLineTest, HadoopOffsetPrefixIsDropped) {
  ExpectRequest("0\thttp://h/a", "GET", "http://h/a");
  ExpectRequest("1234567890123\thttp://h/a", "GET", "http://h/a");
  ExpectRequest("42\tPOST http://h/a", "POST", "http://h/a");
  ExpectSkip("17\t# a comment");
  ExpectSkip("17\t");
  // Only digits followed by a TAB are an offset.
  ExpectRequest("12 http://h/a", "GET", "12 http://h/a");
  ExpectRequest("12a\thttp://h/a", "GET", "12a\thttp://h/a");
  ExpectRequest("\thttp://h/a", "GET", "http://h/a");  // leading whitespace is trimmed
  ExpectRequest("12", "GET", "12");
}

TEST(TargetLineTest, CommentsAndBlankLinesAreSkipped) {
  ExpectSkip("");
  ExpectSkip("   ");
  ExpectSkip("\t\t");
  ExpectSkip("#");
  ExpectSkip("# http://h/commented-out");
  ExpectSkip("   # indented comment");
  ExpectSkip("\r");
  ExpectSkip("#\r");
  // A '#' later in the line is part of the URL (a fragment), not a comment.
  ExpectRequest("http://h/a#frag", "GET", "http://h/a#frag");
}

TEST(TargetLineTest, CarriageReturnLineEndingsAreIgnored) {
  ExpectRequest("http://h/a\r", "GET", "http://h/a");
  ExpectRequest("POST http://h/a\r", "POST", "http://h/a");
  ExpectRequest("7\thttp://h/a \r", "GET", "http://h/a");
}

TEST(TargetLineTest, ViewsPointIntoTheLine) {
  std::string line = "PATCH http://h/p";
  TargetLine parsed = ParseTargetLine(line);
  EXPECT_EQ(parsed.method.data(), line.data());
  EXPECT_EQ(parsed.url.data(), line.data() + 6);
}

}  // namespace
}  // namespace hammer::load
