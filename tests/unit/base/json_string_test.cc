#include "hammer/base/json_string.h"

#include <gtest/gtest.h>

#include <string>

namespace hammer {
namespace {

std::string Quoted(std::string_view text, InvalidUtf8 invalid) {
  std::string out;
  AppendJsonString(out, text, invalid);
  return out;
}

TEST(JsonStringTest, EscapesQuotesBackslashesAndControlBytes) {
  EXPECT_EQ(Quoted("plain text, longer than eight bytes", InvalidUtf8::kLatin1),
            "\"plain text, longer than eight bytes\"");
  EXPECT_EQ(Quoted("a\"b\\c\nd\re\tf\x01g\x7fh", InvalidUtf8::kLatin1),
            R"("a\"b\\c\nd\re\tf\u0001g\u007fh")");
  // A byte to escape at every position of an eight-byte word.
  for (size_t at = 0; at < 17; ++at) {
    std::string text(17, 'x');
    text[at] = '"';
    std::string expected = "\"" + std::string(at, 'x') + "\\\"" + std::string(16 - at, 'x') + "\"";
    EXPECT_EQ(Quoted(text, InvalidUtf8::kReplace), expected) << at;
  }
  EXPECT_EQ(Quoted("", InvalidUtf8::kReplace), "\"\"");
}

TEST(JsonStringTest, CopiesValidUtf8AndMapsOtherBytesAsAsked) {
  const std::string valid = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  EXPECT_EQ(Quoted(valid, InvalidUtf8::kReplace), "\"" + valid + "\"");
  // 0xE9 alone, an overlong '/', an encoded surrogate, a cut sequence at the end.
  const std::string invalid = "\xe9|\xc0\xaf|\xed\xa0\x80|\xe2\x82";
  EXPECT_EQ(Quoted(invalid, InvalidUtf8::kReplace),
            R"("\ufffd|\ufffd\ufffd|\ufffd\ufffd\ufffd|\ufffd\ufffd")");
  EXPECT_EQ(Quoted("\xe9\xff", InvalidUtf8::kLatin1), "\"\xc3\xa9\xc3\xbf\"");
}

TEST(JsonStringTest, Utf8SequenceLengthFollowsRfc3629) {
  EXPECT_EQ(Utf8SequenceLength(""), 0u);
  EXPECT_EQ(Utf8SequenceLength("a"), 1u);
  EXPECT_EQ(Utf8SequenceLength("\xc3\xa9"), 2u);
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82\xac"), 3u);
  EXPECT_EQ(Utf8SequenceLength("\xf0\x9f\x98\x80"), 4u);
  EXPECT_EQ(Utf8SequenceLength("\xc1\xbf"), 0u);          // overlong
  EXPECT_EQ(Utf8SequenceLength("\xf4\x90\x80\x80"), 0u);  // beyond U+10FFFF
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82"), 0u);          // cut
}

}  // namespace
}  // namespace hammer
