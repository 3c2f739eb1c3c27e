#include "hammer/http/head_scanner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hammer::http::internal {
namespace {

TEST(ScanHeadTest, ResumesWhereItStopped) {
  size_t scanned = 0;
  std::string input = "HTTP/1.1 200 OK\r\nA: b\r\n";
  HeadScan scan = ScanHead(input, 1024, &scanned);
  EXPECT_EQ(scan.length, 0u);
  EXPECT_EQ(scanned, input.size() - 1);  // the last LF is looked at again with more bytes
  input += "\r";
  scan = ScanHead(input, 1024, &scanned);
  EXPECT_EQ(scan.length, 0u);
  EXPECT_EQ(scanned, input.size() - 2);
  input += "\nbody";
  scan = ScanHead(input, 1024, &scanned);
  EXPECT_EQ(scan.length, input.size() - 4);
  EXPECT_EQ(scan.start_line, "HTTP/1.1 200 OK");
  EXPECT_EQ(scan.field_lines, "A: b\r\n\r\n");

  scanned = 0;
  scan = ScanHead("no line end yet", 1024, &scanned);
  EXPECT_EQ(scanned, 15u);  // nothing to look at again
  scanned = 0;
  scan = ScanHead("GET / HTTP/1.1\n\n", 1024, &scanned);
  EXPECT_EQ(scan.length, 16u);
  EXPECT_EQ(scan.start_line, "GET / HTTP/1.1");
  EXPECT_EQ(scan.field_lines, "\n");
}

TEST(ScanHeadTest, CapIsEnforcedWithoutATerminator) {
  size_t scanned = 0;
  EXPECT_EQ(ScanHead(std::string(10, 'x'), 10, &scanned).error, ParseError::kNone);
  EXPECT_EQ(ScanHead(std::string(11, 'x'), 10, &scanned).error, ParseError::kHeadTooLarge);
  scanned = 0;
  EXPECT_EQ(ScanHead("a\r\n\r\n", 5, &scanned).length, 5u);
  scanned = 0;
  EXPECT_EQ(ScanHead("ab\r\n\r\n", 5, &scanned).error, ParseError::kHeadTooLarge);
}

TEST(ParseFieldLinesTest, CollectsFramingFacts) {
  std::vector<Header> headers;
  FieldFacts facts;
  ASSERT_EQ(ParseFieldLines("content-length: 4, 4\r\nTRANSFER-ENCODING: gzip\r\n"
                            "Transfer-Encoding: chunked\r\nConnection: Keep-Alive, close\r\n"
                            "Expect: 100-continue\r\n\r\n",
                            8, &headers, &facts),
            ParseError::kNone);
  EXPECT_EQ(headers.size(), 5u);
  EXPECT_TRUE(facts.has_content_length);
  EXPECT_EQ(facts.content_length, 4u);
  EXPECT_TRUE(facts.has_transfer_encoding);
  EXPECT_TRUE(facts.chunked);
  EXPECT_TRUE(facts.connection_close);
  EXPECT_TRUE(facts.connection_keep_alive);
  EXPECT_TRUE(facts.expect_continue);
  EXPECT_FALSE(facts.KeepAlive(1));
  EXPECT_FALSE(facts.KeepAlive(0));
}

TEST(ParseFieldLinesTest, KeepAliveByVersion) {
  FieldFacts facts;
  EXPECT_TRUE(facts.KeepAlive(1));
  EXPECT_FALSE(facts.KeepAlive(0));
  facts.connection_keep_alive = true;
  EXPECT_TRUE(facts.KeepAlive(0));
  facts.has_transfer_encoding = true;
  EXPECT_FALSE(facts.KeepAlive(0));
  EXPECT_TRUE(facts.KeepAlive(1));
}

}  // namespace
}  // namespace hammer::http::internal
