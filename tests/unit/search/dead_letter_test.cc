#include "hammer/search/dead_letter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace hammer::search {
namespace {

TEST(DeadLetterTest, ValidJsonLinesAreEmbedded) {
  DeadLetter letter{"mapper_parsing_exception: failed to parse",
                    400,
                    "mapper_parsing_exception",
                    R"({"index":{"_id":"1"}})",
                    R"({"n":"abc"})",
                    true,
                    12};
  EXPECT_EQ(FormatDeadLetter(letter),
            R"({"reason":"mapper_parsing_exception: failed to parse","status":400,)"
            R"("error_type":"mapper_parsing_exception","action":{"index":{"_id":"1"}},)"
            R"("source":{"n":"abc"},"line":12})"
            "\n");
}

TEST(DeadLetterTest, InvalidLinesAreStringsAndMissingSourceIsNull) {
  DeadLetter letter{"invalid JSON: x", 0, kInvalidInputType, "{\"a\":\t\"b\\\"", "", false, 3};
  EXPECT_EQ(FormatDeadLetter(letter),
            R"({"reason":"invalid JSON: x","status":0,"error_type":"invalid_input",)"
            R"("action":"{\"a\":\t\"b\\\"","source":null,"line":3})"
            "\n");
}

TEST(DeadLetterTest, InvalidUtf8IsReplacedAndControlCharactersEscaped) {
  DeadLetter letter{"r", 0, "t", "\xff\x01", "", true, 1};
  EXPECT_EQ(FormatDeadLetter(letter),
            R"({"reason":"r","status":0,"error_type":"t","action":"\ufffd\u0001",)"
            R"("source":"","line":1})"
            "\n");
}

TEST(DeadLetterTest, WriterWritesOneLinePerLetter) {
  char path[] = "/tmp/hammer-dead-letter-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  Result<std::unique_ptr<DeadLetterWriter>> writer = DeadLetterWriter::Open(path);
  ASSERT_TRUE(writer.ok());
  (*writer)->Write({"a", 1, "t", "{}", "{}", true, 1});
  (*writer)->Write({"b", 2, "t", "{}", "", false, 2});
  EXPECT_EQ((*writer)->written(), 2u);
  ASSERT_TRUE((*writer)->Close().ok());
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  EXPECT_EQ(content.str(),
            "{\"reason\":\"a\",\"status\":1,\"error_type\":\"t\",\"action\":{},\"source\":{},"
            "\"line\":1}\n"
            "{\"reason\":\"b\",\"status\":2,\"error_type\":\"t\",\"action\":{},\"source\":null,"
            "\"line\":2}\n");
  std::remove(path);
}

TEST(DeadLetterTest, PidPlaceholderIsExpanded) {
  EXPECT_EQ(ExpandDeadLetterPath("dead.jsonl", 42), "dead.jsonl");
  EXPECT_EQ(ExpandDeadLetterPath("dead-{pid}.jsonl", 42), "dead-42.jsonl");
  EXPECT_EQ(ExpandDeadLetterPath("{pid}/{pid}", 7), "7/7");
  EXPECT_EQ(ExpandDeadLetterPath("{pi}{pid", 7), "{pi}{pid");
}

TEST(DeadLetterTest, OpenFailsForAnUnwritablePath) {
  EXPECT_FALSE(DeadLetterWriter::Open("/nonexistent-dir/x.jsonl").ok());
}

TEST(DeadLetterTest, WithoutAFileLettersAreOnlyCounted) {
  Result<std::unique_ptr<DeadLetterWriter>> writer = DeadLetterWriter::Open("", "test");
  ASSERT_TRUE(writer.ok());
  testing::internal::CaptureStderr();
  for (int i = 0; i < 12; ++i)
    (*writer)->Write({"why", 0, "t", "{}", "", false, 1});
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ((*writer)->written(), 12u);
  EXPECT_NE(err.find("test: dead letter (line 1): why"), std::string::npos);
  EXPECT_NE(err.find("use --dead-letter FILE"), std::string::npos);
}

}  // namespace
}  // namespace hammer::search
