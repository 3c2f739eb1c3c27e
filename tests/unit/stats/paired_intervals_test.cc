#include "hammer/stats/paired_intervals.h"

#include <gtest/gtest.h>

namespace hammer::stats {
namespace {

size_t Step(int64_t micros) {
  return PairedIntervals::ThresholdAtMost(static_cast<double>(micros));
}

TEST(PairedIntervalsTest, CountsPairsSlowerThanEachStepPerAlignedInterval) {
  PairedIntervals p(100 * kMillisecond);
  p.Record(1'000 * kMillisecond, 300, 5300);  // b slower by 5 ms
  p.Record(1'099 * kMillisecond, 300, 1300);  // by 1 ms exactly
  p.Record(1'099 * kMillisecond, 900, 300);   // b faster
  p.Record(1'100 * kMillisecond, 1, 2);
  auto intervals = p.intervals();
  ASSERT_EQ(intervals.size(), 2u);
  EXPECT_EQ(intervals[0].start, 1'000 * kMillisecond);
  EXPECT_EQ(intervals[0].pairs, 3u);
  EXPECT_EQ(intervals[0].slower[Step(0)], 2u);
  EXPECT_EQ(intervals[0].slower[Step(500)], 2u);
  EXPECT_EQ(intervals[0].slower[Step(1000)], 1u);  // "more than 1 ms": 1 ms is not
  EXPECT_EQ(intervals[0].slower[Step(2000)], 1u);
  EXPECT_EQ(intervals[0].slower[Step(5000)], 0u);
  EXPECT_EQ(intervals[1].start, 1'100 * kMillisecond);
  EXPECT_EQ(intervals[1].slower[Step(0)], 1u);
  EXPECT_EQ(intervals[1].slower[Step(1)], 0u);
}

TEST(PairedIntervalsTest, MarginsRoundDownToTheLadder) {
  EXPECT_EQ(PairedIntervals::kThresholdsMicros[Step(1070)], 1000);
  EXPECT_EQ(PairedIntervals::kThresholdsMicros[Step(999)], 500);
  EXPECT_EQ(PairedIntervals::kThresholdsMicros[Step(2000)], 2000);
  EXPECT_EQ(Step(0), 0u);
  EXPECT_EQ(PairedIntervals::ThresholdAtMost(0.5), 0u);
  EXPECT_EQ(PairedIntervals::ThresholdAtMost(-3), 0u);
  EXPECT_EQ(PairedIntervals::kThresholdsMicros[Step(1'000'000'000)], 10'000'000);
}

TEST(PairedIntervalsTest, DoublesTheIntervalInsteadOfGrowing) {
  PairedIntervals p(kSecond);
  for (int64_t s = 0; s < 1000; ++s)
    p.Record(s * kSecond, 1, 2);
  EXPECT_LE(p.intervals().size(), PairedIntervals::kMaxIntervals);
  EXPECT_EQ(p.interval(), 4 * kSecond);  // 1000 s in 4 s intervals: 250
  uint64_t pairs = 0, slower = 0;
  for (const auto& i : p.intervals()) {
    pairs += i.pairs;
    slower += i.slower[0];
  }
  EXPECT_EQ(pairs, 1000u);
  EXPECT_EQ(slower, 1000u);
}

TEST(PairedIntervalsTest, MergesPerThreadInstancesExactly) {
  PairedIntervals a(kSecond), b(kSecond), whole(kSecond);
  for (int64_t ms = 0; ms < 600'000; ms += 700) {
    (ms % 1400 == 0 ? a : b).Record(ms * kMillisecond, ms % 13, ms % 7 * 300);
    whole.Record(ms * kMillisecond, ms % 13, ms % 7 * 300);
  }
  ASSERT_NE(a.interval(), kSecond);  // both coarsened on their own
  PairedIntervals merged;
  merged.Merge(a);
  merged.Merge(b);
  EXPECT_EQ(merged.interval(), whole.interval());
  auto got = merged.intervals(), want = whole.intervals();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].start, want[i].start);
    EXPECT_EQ(got[i].pairs, want[i].pairs);
    EXPECT_EQ(got[i].slower, want[i].slower);
  }
  // An empty instance takes the other's interval; merging into itself doubles it.
  PairedIntervals fine(100 * kMillisecond);
  fine.Record(0, 1, 1);
  PairedIntervals empty(kSecond);
  empty.Merge(fine);
  EXPECT_EQ(empty.interval(), 100 * kMillisecond);
  empty.Merge(empty);
  EXPECT_EQ(empty.intervals()[0].pairs, 2u);
}

}  // namespace
}  // namespace hammer::stats
