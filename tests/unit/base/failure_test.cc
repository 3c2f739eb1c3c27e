// LazyFailureCounts: counts as FailureCounts does, allocated only at the first count, so a row
// without failures (most rows) holds a pointer.
#include "hammer/base/failure.h"

#include <gtest/gtest.h>

#include <utility>

#include "hammer/stats/key_stats.h"

namespace hammer {
namespace {

TEST(LazyFailureCountsTest, CountsAsFailureCountsAndAllocatesAtTheFirstCount) {
  LazyFailureCounts lazy;
  FailureCounts plain;
  EXPECT_FALSE(lazy.allocated());
  EXPECT_EQ(lazy.counts(), plain);
  EXPECT_EQ(lazy.Total(), 0u);
  lazy.Merge(FailureCounts());  // nothing to count: still nothing allocated
  lazy.Merge(LazyFailureCounts());
  EXPECT_FALSE(lazy.allocated());
  EXPECT_EQ(lazy, LazyFailureCounts());

  lazy.Add(Failure::kTimeout);
  plain.Add(Failure::kTimeout);
  lazy.Add(Failure::kHttp5xx, 3);
  plain.Add(Failure::kHttp5xx, 3);
  EXPECT_TRUE(lazy.allocated());
  EXPECT_EQ(lazy.counts(), plain);
  EXPECT_EQ(lazy.Get(Failure::kHttp5xx), 3u);
  EXPECT_EQ(lazy.Total(), 4u);

  // Copies are values: counting into one leaves the other as it was.
  LazyFailureCounts copy = lazy;
  copy.Add(Failure::kReset);
  EXPECT_EQ(lazy.counts(), plain);
  EXPECT_EQ(copy.Total(), 5u);
  copy = lazy;
  EXPECT_EQ(copy, lazy);
  LazyFailureCounts merged;
  merged.Merge(lazy);
  merged.Merge(plain);
  EXPECT_EQ(merged.Get(Failure::kTimeout), 2u);
  EXPECT_EQ(merged.Get(Failure::kHttp5xx), 6u);
  LazyFailureCounts moved = std::move(merged);
  EXPECT_EQ(moved.Total(), 8u);

  // An allocated set of zero counts equals none (KeyStats compare by value).
  LazyFailureCounts zero;
  zero.Merge(FailureCounts());
  LazyFailureCounts allocated_zero = LazyFailureCounts();
  allocated_zero.Add(Failure::kOther, 0);
  EXPECT_TRUE(allocated_zero.allocated());
  EXPECT_EQ(allocated_zero, zero);
}

// What the lazy counts are for: a row's fixed size. 15 counters inline would add 112 bytes.
TEST(LazyFailureCountsTest, KeepsAKeyRowSmall) {
  EXPECT_EQ(sizeof(LazyFailureCounts), sizeof(void*));
  EXPECT_LE(sizeof(stats::KeyStats), 176u);
}

}  // namespace
}  // namespace hammer
