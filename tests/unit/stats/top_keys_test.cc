#include "hammer/stats/top_keys.h"

#include <gtest/gtest.h>

namespace hammer::stats {
namespace {

KeyStats Requests(int n) {
  KeyStats stats;
  for (int i = 0; i < n; ++i)
    stats.RecordSuccess(100 + i);
  return stats;
}

TEST(StatsTopKeysTest, KeepsTheBusiestAndTheExactTotal) {
  TopKeys top(3);
  KeyStats total;
  for (int i = 0; i < 10; ++i) {
    KeyStats stats = Requests((i * 7) % 10 + 1);
    total.Merge(stats);
    top.Add("k" + std::to_string(i), stats);
  }
  EXPECT_EQ(top.keys(), 10u);
  EXPECT_EQ(top.dropped(), 7u);
  EXPECT_EQ(top.total(), total);
  auto rows = top.TakeSorted();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].second.total(), 10u);
  EXPECT_EQ(rows[1].second.total(), 9u);
  EXPECT_EQ(rows[2].second.total(), 8u);
}

TEST(StatsTopKeysTest, TiesKeepTheFirstAndSortByKey) {
  TopKeys top(2);
  top.Add("b", Requests(1));
  top.Add("a", Requests(1));
  top.Add("c", Requests(1));
  auto rows = top.TakeSorted();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].first, "a");
  EXPECT_EQ(rows[1].first, "b");
}

}  // namespace
}  // namespace hammer::stats
