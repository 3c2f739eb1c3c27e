#include "hammer/stats/timeline.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace hammer::stats {
namespace {

constexpr int64_t kT0 = 1764428700000;  // a whole minute, 2025-11-29 15:05:00 UTC

TEST(TimelineTest, OneBucketPerSecondAlignedToTheEpoch) {
  Timeline timeline;
  EXPECT_TRUE(timeline.empty());
  timeline.AddSuccess(kT0 + 1500, 1000);
  timeline.AddSuccess(kT0 + 1999, 3000);
  timeline.AddFailure(kT0 + 3000);
  timeline.AddSuccess(kT0 + 1000, 2000);
  ASSERT_EQ(timeline.size(), 3u);  // seconds 1, 2 (empty) and 3
  EXPECT_EQ(timeline.bucket_ms(), 1000);
  EXPECT_EQ(timeline.bucket_start_ms(0), kT0 + 1000);
  EXPECT_EQ(timeline.bucket(0).requests, 3u);
  EXPECT_EQ(timeline.bucket(0).errors, 0u);
  EXPECT_EQ(timeline.bucket(0).latency.total_count(), 3u);
  EXPECT_EQ(timeline.bucket(0).latency.max(), 3001);  // 3000's bucket ends at 3001
  EXPECT_EQ(timeline.bucket(1).requests, 0u);
  EXPECT_EQ(timeline.bucket(2).requests, 1u);
  EXPECT_EQ(timeline.bucket(2).errors, 1u);
  EXPECT_TRUE(timeline.bucket(2).latency.empty());
  EXPECT_EQ(timeline.first_ms(), kT0 + 1000);
  EXPECT_EQ(timeline.last_ms(), kT0 + 3000);
  EXPECT_EQ(timeline.requests(), 4u);
  EXPECT_EQ(timeline.errors(), 1u);
}

TEST(TimelineTest, EarlierTimesGrowTheFront) {
  Timeline timeline;
  timeline.AddSuccess(kT0 + 5000, 1);
  timeline.AddSuccess(kT0 + 2000, 1);
  ASSERT_EQ(timeline.size(), 4u);
  EXPECT_EQ(timeline.bucket_start_ms(0), kT0 + 2000);
  EXPECT_EQ(timeline.bucket(0).requests, 1u);
  EXPECT_EQ(timeline.bucket(3).requests, 1u);
}

TEST(TimelineTest, IntervalSnapshots) {
  Timeline timeline;
  Histogram latency;
  latency.Record(100);
  latency.Record(200);
  timeline.Add(kT0, 2, 1, latency);
  timeline.Add(kT0 + 400, 0, 2, Histogram());
  timeline.Add(kT0 + 1000, 2, 0, latency);
  ASSERT_EQ(timeline.size(), 2u);
  EXPECT_EQ(timeline.bucket(0).requests, 5u);
  EXPECT_EQ(timeline.bucket(0).errors, 3u);
  EXPECT_EQ(timeline.bucket(0).latency, latency);
  EXPECT_EQ(timeline.bucket(1).requests, 2u);
  EXPECT_EQ(timeline.requests(), 7u);
}

TEST(TimelineTest, LadderOfWidths) {
  std::vector<int64_t> widths;
  for (int64_t w = 1000; w <= 172'800'000; w = Timeline::NextWidth(w))
    widths.push_back(w / 1000);
  EXPECT_EQ(widths, (std::vector<int64_t>{1, 2, 10, 20, 60, 120, 600, 1200, 3600, 7200, 21600,
                                          43200, 86400, 172800}));
  for (size_t i = 1; i < widths.size(); ++i)
    EXPECT_EQ(widths[i] % widths[i - 1], 0) << widths[i];  // coarsening stays exact
}

TEST(TimelineTest, CoarsensToStayWithinMaxBuckets) {
  Timeline timeline(10);
  for (int s = 0; s < 10; ++s)
    timeline.AddSuccess(kT0 + s * 1000, 10 + s);
  EXPECT_EQ(timeline.bucket_ms(), 1000);
  EXPECT_EQ(timeline.size(), 10u);
  timeline.AddFailure(kT0 + 10'000);  // 11 seconds: 2 s buckets
  EXPECT_EQ(timeline.bucket_ms(), 2000);
  ASSERT_EQ(timeline.size(), 6u);
  EXPECT_EQ(timeline.bucket_start_ms(0), kT0);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(timeline.bucket(i).requests, 2u);
    EXPECT_EQ(timeline.bucket(i).latency.total_count(), 2u);
  }
  EXPECT_EQ(timeline.bucket(5).errors, 1u);

  timeline.AddSuccess(kT0 + 3'600'000, 5);  // an hour later: 10 min buckets
  EXPECT_EQ(timeline.bucket_ms(), 600'000);
  EXPECT_LE(timeline.size(), 10u);
  EXPECT_EQ(timeline.requests(), 12u);
  uint64_t requests = 0, latencies = 0;
  for (size_t i = 0; i < timeline.size(); ++i) {
    requests += timeline.bucket(i).requests;
    latencies += timeline.bucket(i).latency.total_count();
  }
  EXPECT_EQ(requests, 12u);
  EXPECT_EQ(latencies, 11u);
}

TEST(TimelineTest, MemoryStaysBoundedOverAnyTimeSpan) {
  Timeline timeline(50);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20000; ++i)
    timeline.AddSuccess(kT0 + static_cast<int64_t>(rng() % 400'000'000'000), 1000);  // 12 years
  EXPECT_LE(timeline.size(), 50u);
  EXPECT_EQ(timeline.requests(), 20000u);
}

TEST(TimelineTest, NegativeTimesCountAtZero) {
  Timeline timeline;
  timeline.AddFailure(-5);
  EXPECT_EQ(timeline.bucket_start_ms(0), 0);
  EXPECT_EQ(timeline.first_ms(), 0);
}

TEST(TimelinePropertyTest, MergingRandomSplitsEqualsOnePass) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20; ++round) {
    size_t max_buckets = 5 + rng() % 60;
    Timeline whole(max_buckets), a(max_buckets), b(max_buckets);
    int64_t span = static_cast<int64_t>(1000 + rng() % 5'000'000);
    for (int i = 0; i < 500; ++i) {
      int64_t t = kT0 + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
      bool failure = rng() % 10 == 0;
      int64_t micros = static_cast<int64_t>(rng() % 100000);
      Timeline& part = rng() % 3 == 0 ? a : b;
      if (failure) {
        whole.AddFailure(t);
        part.AddFailure(t);
      } else {
        whole.AddSuccess(t, micros);
        part.AddSuccess(t, micros);
      }
    }
    Timeline merged = a;
    merged.Merge(b);
    EXPECT_EQ(merged, whole) << "round " << round;
    Timeline other_way = b;
    other_way.Merge(a);
    EXPECT_EQ(other_way, whole) << "round " << round;
  }
}

TEST(TimelineTest, MergeWithEmpty) {
  Timeline a, empty;
  a.AddSuccess(kT0, 7);
  Timeline copy = a;
  a.Merge(empty);
  EXPECT_EQ(a, copy);
  empty.Merge(a);
  EXPECT_EQ(empty, a);
}

}  // namespace
}  // namespace hammer::stats
