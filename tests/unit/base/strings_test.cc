#include "hammer/base/strings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hammer {
namespace {

std::vector<std::string> Items(std::string_view list) {
  std::vector<std::string> items;
  ForEachListItem(list, [&](std::string_view item) { items.emplace_back(item); });
  return items;
}

TEST(StringsTest, IsOwsIsSpaceOrTabOnly) {
  EXPECT_TRUE(IsOws(' '));
  EXPECT_TRUE(IsOws('\t'));
  EXPECT_FALSE(IsOws('\r'));
  EXPECT_FALSE(IsOws('\n'));
  EXPECT_FALSE(IsOws('\v'));
  EXPECT_FALSE(IsOws('a'));
  EXPECT_FALSE(IsOws('\0'));
}

TEST(StringsTest, TrimOwsRemovesSpacesAndTabsAtBothEnds) {
  EXPECT_EQ(TrimOws(""), "");
  EXPECT_EQ(TrimOws(" \t \t"), "");
  EXPECT_EQ(TrimOws("a"), "a");
  EXPECT_EQ(TrimOws(" \ta b\t "), "a b");
  EXPECT_EQ(TrimOws("\tx"), "x");
  EXPECT_EQ(TrimOws("x  "), "x");
  EXPECT_EQ(TrimOws(" x\r "), "x\r");  // CR is not OWS
  EXPECT_EQ(TrimOws("\nx\n"), "\nx\n");
}

TEST(StringsTest, TrimOwsReturnsAViewIntoItsArgument) {
  std::string text = "  value ";
  std::string_view trimmed = TrimOws(text);
  EXPECT_EQ(trimmed.data(), text.data() + 2);
  EXPECT_EQ(trimmed.size(), 5u);
  static_assert(TrimOws(" k ") == "k");
}

TEST(StringsTest, ForEachListItemTrimsAndSkipsEmptyItems) {
  EXPECT_EQ(Items(""), std::vector<std::string>{});
  EXPECT_EQ(Items(" , ,\t,"), std::vector<std::string>{});
  EXPECT_EQ(Items("close"), std::vector<std::string>{"close"});
  EXPECT_EQ(Items("keep-alive, Upgrade"), (std::vector<std::string>{"keep-alive", "Upgrade"}));
  EXPECT_EQ(Items(",a,, b ,\tc\t,"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Items("a b, c"), (std::vector<std::string>{"a b", "c"}));
}

TEST(StringsTest, AsciiToLowerMapsOnlyAsciiCapitals) {
  EXPECT_EQ(AsciiToLower('A'), 'a');
  EXPECT_EQ(AsciiToLower('Z'), 'z');
  EXPECT_EQ(AsciiToLower('a'), 'a');
  EXPECT_EQ(AsciiToLower('@'), '@');  // 'A' - 1
  EXPECT_EQ(AsciiToLower('['), '[');  // 'Z' + 1
  EXPECT_EQ(AsciiToLower('5'), '5');
  EXPECT_EQ(AsciiToLower('\xC9'), '\xC9');  // not ASCII: unchanged
}

TEST(StringsTest, AsciiStrToLowerCopies) {
  EXPECT_EQ(AsciiStrToLower(""), "");
  EXPECT_EQ(AsciiStrToLower("Example.COM"), "example.com");
  EXPECT_EQ(AsciiStrToLower("HTTPS"), "https");
  EXPECT_EQ(AsciiStrToLower("\xC3\x89T\xC3\x89"), "\xC3\x89t\xC3\x89");  // "ÉTÉ": only the T
  EXPECT_EQ(AsciiStrToLower(std::string_view("A\0B", 3)), std::string("a\0b", 3));
}

TEST(StringsTest, QuoteInputShortensAndMasks) {
  EXPECT_EQ(QuoteInput("abc"), "'abc'");
  EXPECT_EQ(QuoteInput("a\nb"), "'a?b'");
  EXPECT_EQ(QuoteInput(std::string(100, 'x')), "'" + std::string(80, 'x') + "...'");
}

TEST(StringsTest, FindFirstOfAgreesWithTheStandardLibrary) {
  const std::string_view texts[] = {"", "abc", "GET http://127.0.0.1/a?b#c", "x\ty z", "???", "/"};
  const std::string_view sets[] = {"", "?", "/?", "?#", " \t", "/?#", "z"};
  for (std::string_view text : texts) {
    for (std::string_view set : sets) {
      for (size_t pos = 0; pos <= text.size() + 1; ++pos) {
        EXPECT_EQ(FindFirstOf(text, set, pos), text.find_first_of(set, pos))
            << "'" << text << "' in '" << set << "' from " << pos;
      }
    }
  }
}

// Every length up to a few words, the texts equal or differing in one byte at any position
// (by a low bit or a high one): BytesEqual answers as memcmp, SameText and StartsWithText as
// operator== and starts_with.
TEST(StringsTest, BytesEqualAgreesWithMemcmp) {
  for (size_t n = 0; n <= 26; ++n) {
    std::string a;
    for (size_t i = 0; i < n; ++i)
      a.push_back(static_cast<char>('a' + i % 26));
    std::string b = a;
    EXPECT_TRUE(BytesEqual(a.data(), b.data(), n)) << n;
    EXPECT_TRUE(SameText(a, b)) << n;
    EXPECT_TRUE(StartsWithText(a + "x", b)) << n;
    EXPECT_FALSE(SameText(a + "x", b)) << n;
    EXPECT_FALSE(StartsWithText(b, a + "x")) << n;
    for (size_t at = 0; at < n; ++at) {
      for (char flip : {'\x01', '\x80'}) {
        b = a;
        b[at] = static_cast<char>(b[at] ^ flip);
        EXPECT_FALSE(BytesEqual(a.data(), b.data(), n)) << n << " at " << at;
        EXPECT_FALSE(SameText(a, b)) << n << " at " << at;
        EXPECT_FALSE(StartsWithText(a + "x", b)) << n << " at " << at;
        EXPECT_TRUE(BytesEqual(a.data(), b.data(), at)) << n << " before " << at;
      }
    }
  }
}

TEST(StringsTest, AssignTextReplacesWhatTheStringHeld) {
  std::string out = "a much longer text than the one that replaces it, on the heap";
  AssignText(&out, "short");
  EXPECT_EQ(out, "short");
  AssignText(&out, "");
  EXPECT_EQ(out, "");
  AssignText(&out, std::string(100, 'y'));
  EXPECT_EQ(out, std::string(100, 'y'));
}

}  // namespace
}  // namespace hammer
