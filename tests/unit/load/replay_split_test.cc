// ReplaySplit: --split i/N and --split-by.
#include "hammer/load/replay_split.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hammer::load {
namespace {

RequestSpec Spec(std::string url, std::string client = "") {
  RequestSpec spec;
  spec.url = std::move(url);
  spec.client = std::move(client);
  return spec;
}

TEST(ReplaySplitTest, ParsesPartOfCount) {
  Result<ReplaySplit> split = ReplaySplit::Parse("2/4", SplitBy::kUrl);
  ASSERT_TRUE(split.ok()) << split.status().message();
  EXPECT_EQ(split->index(), 2);
  EXPECT_EQ(split->count(), 4);
  EXPECT_TRUE(ReplaySplit::Parse("0/1", SplitBy::kConnection).ok());
}

TEST(ReplaySplitTest, BadPartsAreNamed) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"4/4", "parts count from 0, so i must be below N (0/4 to 3/4), got '4/4'"},
           {"1/0", "N must be 1 to 1000000"},
           {"-1/4", "expected i/N with whole numbers"},
           {"a/4", "expected i/N with whole numbers"},
           {"1/", "expected i/N with whole numbers"},
           {"3", "expected i/N, e.g. 0/4"},
           {"1/4x", "expected i/N with whole numbers"},
       }) {
    Result<ReplaySplit> split = ReplaySplit::Parse(c.text, SplitBy::kUrl);
    ASSERT_FALSE(split.ok()) << c.text;
    EXPECT_TRUE(split.status().message().starts_with("--split: ")) << split.status().message();
    EXPECT_NE(split.status().message().find(c.message), std::string::npos)
        << split.status().message();
  }
  EXPECT_FALSE(ParseSplitBy("host").ok());
  EXPECT_EQ(*ParseSplitBy("url"), SplitBy::kUrl);
  EXPECT_EQ(*ParseSplitBy("connection"), SplitBy::kConnection);
}

TEST(ReplaySplitTest, PartsAreDisjointCoverEverythingAndAreBalanced) {
  constexpr int kParts = 4;
  constexpr int kEntries = 20000;
  std::vector<int> per_part(kParts, 0);
  for (int i = 0; i < kEntries; ++i) {
    RequestSpec spec = Spec("http://x/item/" + std::to_string(i));
    int owners = 0;
    for (int part = 0; part < kParts; ++part) {
      if (ReplaySplit(part, kParts, SplitBy::kUrl).Keeps(spec)) {
        ++owners;
        ++per_part[part];
      }
    }
    ASSERT_EQ(owners, 1) << spec.url;
  }
  // A fair split of 20,000 into 4 is 5,000 each, with a binomial spread of about 61.
  for (int n : per_part)
    EXPECT_NEAR(n, kEntries / kParts, 400);
}

TEST(ReplaySplitTest, ByConnectionKeepsAConnectionTogetherAndFallsBackToTheUrl) {
  ReplaySplit by_connection(0, 8, SplitBy::kConnection);
  const int part = by_connection.PartOf(Spec("http://x/a", "17"));
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(by_connection.PartOf(Spec("http://x/" + std::to_string(i), "17")), part);
  }
  // Without a client, the URL decides, as with --split-by url.
  ReplaySplit by_url(0, 8, SplitBy::kUrl);
  for (int i = 0; i < 100; ++i) {
    RequestSpec spec = Spec("http://x/" + std::to_string(i));
    EXPECT_EQ(by_connection.PartOf(spec), by_url.PartOf(spec));
    // --split-by url ignores the client.
    spec.client = "17";
    EXPECT_EQ(by_url.PartOf(spec), by_url.PartOf(Spec(spec.url)));
  }
}

TEST(ReplaySplitTest, HashIsFixed) {
  // The parts must be the same on every machine and in every version (the value computed
  // independently from the FNV-1a and SplitMix64 definitions).
  EXPECT_EQ(ReplaySplit::Hash("http://x/a"), 0x21233c8285c242a2ull);
}

}  // namespace
}  // namespace hammer::load
