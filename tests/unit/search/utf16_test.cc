#include "hammer/search/utf16.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace hammer::search {
namespace {

using namespace std::string_view_literals;

std::u16string Decode(std::string_view utf8) {
  Result<std::u16string> result = Utf8ToUtf16(utf8);
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? *result : std::u16string();
}

TEST(Utf8ToUtf16Test, AsciiAndEmpty) {
  EXPECT_EQ(Decode(""), u"");
  EXPECT_EQ(Decode("hello"), u"hello");
  EXPECT_EQ(Decode("a\0b"sv), u"a\0b"sv);  // U+0000 is a valid code point
}

TEST(Utf8ToUtf16Test, BmpAndSupplementary) {
  EXPECT_EQ(Decode("Γειά σου Κόσμε"), u"Γειά σου Κόσμε");
  EXPECT_EQ(Decode("日本語"), u"日本語");
  // U+1F642 SLIGHTLY SMILING FACE = F0 9F 99 82 → surrogate pair D83D DE42.
  EXPECT_EQ(Decode("\xF0\x9F\x99\x82"), std::u16string({0xD83D, 0xDE42}));
  EXPECT_EQ(Decode("a🙂b"), u"a🙂b");
}

TEST(Utf8ToUtf16Test, EncodingBoundaries) {
  EXPECT_EQ(Decode("\x7F"), std::u16string({0x007F}));
  EXPECT_EQ(Decode("\xC2\x80"), std::u16string({0x0080}));
  EXPECT_EQ(Decode("\xDF\xBF"), std::u16string({0x07FF}));
  EXPECT_EQ(Decode("\xE0\xA0\x80"), std::u16string({0x0800}));
  EXPECT_EQ(Decode("\xED\x9F\xBF"), std::u16string({0xD7FF}));  // last code point before surrogates
  EXPECT_EQ(Decode("\xEE\x80\x80"), std::u16string({0xE000}));  // first after them
  EXPECT_EQ(Decode("\xEF\xBF\xBF"), std::u16string({0xFFFF}));
  EXPECT_EQ(Decode("\xF0\x90\x80\x80"), std::u16string({0xD800, 0xDC00}));  // U+10000
  EXPECT_EQ(Decode("\xF4\x8F\xBF\xBF"), std::u16string({0xDBFF, 0xDFFF}));  // U+10FFFF
}

TEST(Utf8ToUtf16Test, RejectsMalformedInput) {
  const std::string_view malformed[] = {
      "\x80"sv,                      // stray continuation byte
      "\xBF"sv,                      // stray continuation byte
      "\xC0\x80"sv,                  // overlong U+0000
      "\xC1\xBF"sv,                  // overlong U+007F
      "\xE0\x80\x80"sv,              // overlong 3-byte
      "\xE0\x9F\xBF"sv,              // overlong U+07FF
      "\xF0\x80\x80\x80"sv,          // overlong 4-byte
      "\xF0\x8F\xBF\xBF"sv,          // overlong U+FFFF
      "\xED\xA0\x80"sv,              // encoded high surrogate U+D800
      "\xED\xBF\xBF"sv,              // encoded low surrogate U+DFFF
      "\xED\xA0\xBD\xED\xB9\x82"sv,  // CESU-8 style surrogate pair
      "\xF4\x90\x80\x80"sv,          // U+110000
      "\xF5\x80\x80\x80"sv,          // lead byte beyond Unicode
      "\xFE"sv,
      "\xFF"sv,              // never valid
      "\xC2"sv,              // truncated 2-byte
      "\xE2\x82"sv,          // truncated 3-byte
      "\xF0\x9F\x99"sv,      // truncated 4-byte
      "\xC2\x41"sv,          // continuation missing
      "\xE2\x28\xA1"sv,      // bad second byte
      "\xF0\x9F\x28\x82"sv,  // bad third byte
  };
  for (std::string_view bad : malformed) {
    SCOPED_TRACE(testing::PrintToString(std::string(bad)));
    Result<std::u16string> result = Utf8ToUtf16(bad);
    EXPECT_FALSE(result.ok());
  }
}

TEST(Utf8ToUtf16Test, ErrorNamesOffsetAndByte) {
  Result<std::u16string> result = Utf8ToUtf16("abΓ\xE2\x82");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "invalid UTF-8 at byte offset 4 (byte 0xE2)");
}

TEST(ForEachUtf16CodeUnitTest, EmitsValidPrefixThenFails) {
  std::u16string seen;
  Status status = ForEachUtf16CodeUnit("ok\xFF!", [&seen](char16_t unit) { seen.push_back(unit); });
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(seen, u"ok");
}

}  // namespace
}  // namespace hammer::search
