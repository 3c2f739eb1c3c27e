#include "hammer/load/body_matcher.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace hammer::load {
namespace {

std::shared_ptr<const re2::RE2> SeedPattern() {
  Result<std::shared_ptr<const re2::RE2>> re = CompileErrorPattern(kSeedErrorPattern);
  EXPECT_TRUE(re.ok()) << re.status().message();
  return re.ok() ? *re : nullptr;
}

bool MatchesInPieces(const re2::RE2* pattern, const std::vector<std::string_view>& pieces) {
  BodyMatcher matcher(pattern);
  for (std::string_view piece : pieces)
    matcher.Feed(piece);
  return matcher.matched();
}

TEST(BodyMatcherTest, SeedPatternFoundCaseInsensitively) {
  auto re = SeedPattern();
  for (std::string_view body :
       {"something went wrong", "Oops! Something Went Wrong.", "SOMETHING WENT WRONG",
        "<h1>An unexpected error occurred</h1>", "UNEXPECTED ERROR", "raised Api::Error",
        "api::error", "API::ERROR: nope"}) {
    EXPECT_TRUE(MatchesInPieces(re.get(), {body})) << body;
  }
}

TEST(BodyMatcherTest, NotFoundWhenAbsent) {
  auto re = SeedPattern();
  for (std::string_view body :
       {"", "ok\n", "something went right", "something  went wrong", "something\nwent wrong",
        "unexpected  error", "Api:Error", "an error that was expected"}) {
    EXPECT_FALSE(MatchesInPieces(re.get(), {body})) << body;
  }
}

TEST(BodyMatcherTest, FoundAcrossASplitAtEveryByteBoundary) {
  auto re = SeedPattern();
  const std::string body = "<html><body>Sorry, Something Went Wrong on our side.</body></html>";
  for (size_t cut = 0; cut <= body.size(); ++cut) {
    std::string_view all = body;
    EXPECT_TRUE(MatchesInPieces(re.get(), {all.substr(0, cut), all.substr(cut)}))
        << "split at " << cut;
  }
}

TEST(BodyMatcherTest, FoundAcrossEverySplitIntoThreePieces) {
  auto re = SeedPattern();
  const std::string body = "xx unexpected error yy";
  std::string_view all = body;
  for (size_t a = 0; a <= body.size(); ++a) {
    for (size_t b = a; b <= body.size(); ++b) {
      EXPECT_TRUE(
          MatchesInPieces(re.get(), {all.substr(0, a), all.substr(a, b - a), all.substr(b)}))
          << "cuts at " << a << " and " << b;
    }
  }
}

TEST(BodyMatcherTest, MatchStraddlingThreeSmallPieces) {
  auto re = SeedPattern();
  EXPECT_TRUE(MatchesInPieces(re.get(), {"...some", "thing went wr", "ong..."}));
  EXPECT_FALSE(MatchesInPieces(re.get(), {"...some", "thing went ri", "ght..."}));
}

TEST(BodyMatcherTest, MatchDeliveredOneByteAtATime) {
  auto re = SeedPattern();
  const std::string body = std::string(3000, '.') + "Api::Error" + std::string(3000, '.');
  BodyMatcher matcher(re.get());
  for (char c : body)
    matcher.Feed(std::string_view(&c, 1));
  EXPECT_TRUE(matcher.matched());
}

TEST(BodyMatcherTest, MatchAtTheSeamOfLargePieces) {
  auto re = SeedPattern();
  const std::string first = std::string(5000, 'a') + " something went";
  const std::string second = " wrong" + std::string(5000, 'b');
  EXPECT_TRUE(MatchesInPieces(re.get(), {first, second}));
  // The same bytes with a large piece in between never form a match.
  const std::string middle(4 * BodyMatcher::kSeamBytes, ' ');
  EXPECT_FALSE(MatchesInPieces(re.get(), {first, middle, second}));
}

TEST(BodyMatcherTest, MatchesUpToSeamBytesLongAreFoundAtAnySplit) {
  // A pattern exactly kSeamBytes long, straddling two large pieces at several offsets.
  std::string needle(BodyMatcher::kSeamBytes, 'n');
  needle.front() = '<';
  needle.back() = '>';
  Result<std::shared_ptr<const re2::RE2>> re = CompileErrorPattern(needle);
  ASSERT_TRUE(re.ok()) << re.status().message();
  const std::string body = std::string(3000, '.') + needle + std::string(3000, '.');
  std::string_view all = body;
  for (size_t cut = 3000; cut <= 3000 + needle.size(); cut += 73) {
    EXPECT_TRUE(MatchesInPieces(re->get(), {all.substr(0, cut), all.substr(cut)})) << cut;
  }
}

TEST(BodyMatcherTest, ResetForgetsTheMatchAndThePreviousTail) {
  auto re = SeedPattern();
  BodyMatcher matcher(re.get());
  matcher.Feed("something went wrong");
  EXPECT_TRUE(matcher.matched());
  matcher.Reset();
  EXPECT_FALSE(matcher.matched());
  matcher.Feed("... something went");  // end of one response
  matcher.Reset();
  matcher.Feed(" wrong ...");  // start of the next: no match across responses
  EXPECT_FALSE(matcher.matched());
}

TEST(BodyMatcherTest, EmptyPiecesChangeNothing) {
  auto re = SeedPattern();
  EXPECT_TRUE(MatchesInPieces(re.get(), {"", "unexpected", "", "", " error", ""}));
}

TEST(BodyMatcherTest, NoPatternNeverMatches) {
  BodyMatcher matcher(nullptr);
  matcher.Feed("something went wrong");
  EXPECT_FALSE(matcher.matched());
}

TEST(CompileErrorPatternTest, CustomPatternIsCaseInsensitive) {
  Result<std::shared_ptr<const re2::RE2>> re = CompileErrorPattern("fail(ed|ure)");
  ASSERT_TRUE(re.ok());
  EXPECT_TRUE(MatchesInPieces(re->get(), {"FAIL", "URE"}));
  EXPECT_FALSE(MatchesInPieces(re->get(), {"fail"}));
}

TEST(CompileErrorPatternTest, InvalidPatternNamesIt) {
  Result<std::shared_ptr<const re2::RE2>> re = CompileErrorPattern("(unclosed");
  ASSERT_FALSE(re.ok());
  EXPECT_EQ(re.status().message().rfind("invalid --error-pattern '(unclosed': ", 0), 0u)
      << re.status().message();
}

}  // namespace
}  // namespace hammer::load
