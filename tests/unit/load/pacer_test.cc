#include "hammer/load/pacer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace hammer::load {
namespace {

constexpr MonoNanos kStart = 123'456'789'000;  // an arbitrary monotonic start

// The number of k with DueTime(k) <= now, by the definition (DueTime grows with k).
uint64_t CountDueByDefinition(const OpenLoopPacer& pacer, MonoNanos now) {
  uint64_t lo = 0;
  uint64_t hi = 1;
  while (pacer.DueTime(hi - 1) <= now)
    hi *= 2;
  // The answer is in [lo, hi): DueTime(hi - 1) > now.
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (pacer.DueTime(mid) <= now) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// A wait for input pauses the schedule: every later request is due that much later, and none
// more is due after the pause than before it.
TEST(OpenLoopPacerTest, DelayPausesTheSchedule) {
  OpenLoopPacer pacer(kStart, 100.0, 0, 1);
  EXPECT_EQ(pacer.DueTime(1), kStart + 10 * kMillisecond);
  EXPECT_EQ(pacer.DueCount(kStart + 3 * kSecond), 301u);
  pacer.Delay(3 * kSecond);
  EXPECT_EQ(pacer.DueTime(1), kStart + 3 * kSecond + 10 * kMillisecond);
  EXPECT_EQ(pacer.DueCount(kStart + 3 * kSecond), 1u);
  EXPECT_EQ(pacer.DueCount(kStart + 6 * kSecond), 301u);
}

TEST(OpenLoopPacerTest, DueTimesAtOneRequestPerSecond) {
  OpenLoopPacer pacer(kStart, 1.0, 0, 1);
  EXPECT_EQ(pacer.millirate(), 1000);
  EXPECT_EQ(pacer.DueTime(0), kStart);
  EXPECT_EQ(pacer.DueTime(1), kStart + kSecond);
  EXPECT_EQ(pacer.DueTime(2), kStart + 2 * kSecond);
  EXPECT_EQ(pacer.DueTime(3600), kStart + 3600 * kSecond);
}

TEST(OpenLoopPacerTest, DueTimesAtThreeRequestsPerSecondRoundDown) {
  OpenLoopPacer pacer(kStart, 3.0, 0, 1);
  EXPECT_EQ(pacer.millirate(), 3000);
  EXPECT_EQ(pacer.DueTime(0), kStart);
  EXPECT_EQ(pacer.DueTime(1), kStart + 333'333'333);
  EXPECT_EQ(pacer.DueTime(2), kStart + 666'666'666);
  EXPECT_EQ(pacer.DueTime(3), kStart + kSecond);
  EXPECT_EQ(pacer.DueTime(4), kStart + kSecond + 333'333'333);
}

TEST(OpenLoopPacerTest, DueTimesAtTwoThousandRequestsPerSecond) {
  OpenLoopPacer pacer(kStart, 2000.0, 0, 1);
  EXPECT_EQ(pacer.millirate(), 2'000'000);
  EXPECT_EQ(pacer.DueTime(1), kStart + 500 * kMicrosecond);
  EXPECT_EQ(pacer.DueTime(2), kStart + kMillisecond);
  EXPECT_EQ(pacer.DueTime(2000), kStart + kSecond);
  EXPECT_EQ(pacer.DueTime(2001), kStart + kSecond + 500 * kMicrosecond);
}

TEST(OpenLoopPacerTest, DueTimesAtHalfARequestPerSecond) {
  OpenLoopPacer pacer(kStart, 0.5, 0, 1);
  EXPECT_EQ(pacer.millirate(), 500);
  EXPECT_EQ(pacer.DueTime(0), kStart);
  EXPECT_EQ(pacer.DueTime(1), kStart + 2 * kSecond);
  EXPECT_EQ(pacer.DueTime(5), kStart + 10 * kSecond);
}

TEST(OpenLoopPacerTest, NoDriftAfterABillionRequests) {
  constexpr uint64_t kBillion = 1'000'000'000;
  OpenLoopPacer one(kStart, 1.0, 0, 1);
  EXPECT_EQ(one.DueTime(kBillion), kStart + static_cast<MonoNanos>(kBillion) * kSecond);
  OpenLoopPacer three(kStart, 3.0, 0, 1);
  // 999,999,999 requests at 3/s take exactly 333,333,333 s; one more adds floor(1/3 s).
  EXPECT_EQ(three.DueTime(kBillion - 1), kStart + 333'333'333 * kSecond);
  EXPECT_EQ(three.DueTime(kBillion), kStart + 333'333'333 * kSecond + 333'333'333);
  OpenLoopPacer fast(kStart, 2000.0, 0, 1);
  EXPECT_EQ(fast.DueTime(kBillion), kStart + 500'000 * kSecond);
  OpenLoopPacer slow(kStart, 0.5, 0, 1);
  EXPECT_EQ(slow.DueTime(kBillion), kStart + 2'000'000'000 * kSecond);
  // Spread over 7 threads the schedule is the same: global request 10^9 is due at 10^9 s.
  OpenLoopPacer shared(kStart, 1.0, static_cast<int>(kBillion % 7), 7);
  EXPECT_EQ(shared.GlobalIndex(kBillion / 7), kBillion);
  EXPECT_EQ(shared.DueTime(kBillion / 7), kStart + static_cast<MonoNanos>(kBillion) * kSecond);
}

TEST(OpenLoopPacerTest, RatesAreHeldInRequestsPerThousandSeconds) {
  EXPECT_EQ(OpenLoopPacer(0, 0.0015, 0, 1).millirate(), 2);  // rounded to the nearest
  EXPECT_EQ(OpenLoopPacer(0, 0.0001, 0, 1).millirate(), 1);  // never zero
  EXPECT_EQ(OpenLoopPacer(0, 12345.678, 0, 1).millirate(), 12'345'678);
}

TEST(OpenLoopPacerTest, DueCountBeforeAndAtTheStart) {
  OpenLoopPacer pacer(kStart, 1.0, 0, 1);
  EXPECT_EQ(pacer.DueCount(0), 0u);
  EXPECT_EQ(pacer.DueCount(kStart - 1), 0u);
  EXPECT_EQ(pacer.DueCount(kStart), 1u);  // request 0 is due at the start itself
  EXPECT_EQ(pacer.DueCount(kStart + kSecond - 1), 1u);
  EXPECT_EQ(pacer.DueCount(kStart + kSecond), 2u);
  OpenLoopPacer second_thread(kStart, 1.0, 1, 2);  // owns requests 1, 3, 5...
  EXPECT_EQ(second_thread.DueCount(kStart), 0u);
  EXPECT_EQ(second_thread.DueCount(kStart + kSecond - 1), 0u);
  EXPECT_EQ(second_thread.DueCount(kStart + kSecond), 1u);
  EXPECT_EQ(second_thread.DueCount(kStart + 3 * kSecond), 2u);
}

// DueCount(now) == |{k : DueTime(k) <= now}|, for random rates, thread counts and times, with
// times chosen on, just before and just after due times (where off-by-one errors live).
TEST(OpenLoopPacerTest, DueCountAgreesWithDueTime) {
  std::mt19937_64 rng(20240607);
  const double rates[] = {1, 3, 7, 0.5, 0.001, 2000, 999.999, 123456.789, 1e6};
  for (int threads : {1, 2, 3, 7, 16}) {
    for (double rate : rates) {
      for (int index = 0; index < threads; ++index) {
        OpenLoopPacer pacer(kStart, rate, index, threads);
        // Keep due times below 10^18 ns after the start (no overflow of MonoNanos).
        uint64_t max_k =
            std::min<uint64_t>(5'000'000, 1'000'000 * static_cast<uint64_t>(pacer.millirate()) /
                                              static_cast<uint64_t>(threads));
        std::uniform_int_distribution<uint64_t> pick_k(0, max_k);
        for (int trial = 0; trial < 60; ++trial) {
          MonoNanos now;
          if (trial % 3 == 0) {
            // Anywhere within the first few thousand seconds.
            now = kStart + static_cast<MonoNanos>(rng() % (5000 * static_cast<uint64_t>(kSecond)));
          } else {
            now = pacer.DueTime(pick_k(rng)) + static_cast<MonoNanos>(rng() % 3) - 1;
          }
          ASSERT_EQ(pacer.DueCount(now), CountDueByDefinition(pacer, now))
              << "rate " << rate << " thread " << index << "/" << threads << " now-start "
              << now - kStart;
        }
      }
    }
  }
}

// With T threads, thread i sends global requests i, i+T, ...: together they cover every
// global index exactly once, each due when a single-thread pacer says it is.
TEST(OpenLoopPacerTest, ThreadsInterleaveIntoTheSingleThreadSchedule) {
  for (int threads : {1, 2, 3, 4, 7}) {
    OpenLoopPacer single(kStart, 3.0, 0, 1);
    constexpr uint64_t kPerThread = 1000;
    std::vector<int> seen(kPerThread * static_cast<uint64_t>(threads), 0);
    for (int index = 0; index < threads; ++index) {
      OpenLoopPacer pacer(kStart, 3.0, index, threads);
      for (uint64_t k = 0; k < kPerThread; ++k) {
        uint64_t n = pacer.GlobalIndex(k);
        ASSERT_LT(n, seen.size());
        ++seen[n];
        EXPECT_EQ(pacer.DueTime(k), single.DueTime(n));
      }
    }
    for (size_t n = 0; n < seen.size(); ++n)
      ASSERT_EQ(seen[n], 1) << "global index " << n << " with " << threads << " threads";
    // And at any moment the threads' due counts add up to the single schedule's.
    for (MonoNanos now = kStart - 1; now < kStart + 20 * kSecond; now += 111'111'111) {
      uint64_t total = 0;
      for (int index = 0; index < threads; ++index)
        total += OpenLoopPacer(kStart, 3.0, index, threads).DueCount(now);
      EXPECT_EQ(total, single.DueCount(now)) << now - kStart;
    }
  }
}

TEST(ShareOfTest, EvenSplitWithTheRemainderFirst) {
  EXPECT_EQ(ShareOf(10, 3, 0), 4u);
  EXPECT_EQ(ShareOf(10, 3, 1), 3u);
  EXPECT_EQ(ShareOf(10, 3, 2), 3u);
  EXPECT_EQ(ShareOf(2, 4, 0), 1u);
  EXPECT_EQ(ShareOf(2, 4, 1), 1u);
  EXPECT_EQ(ShareOf(2, 4, 2), 0u);
  EXPECT_EQ(ShareOf(2, 4, 3), 0u);
  EXPECT_EQ(ShareOf(7, 1, 0), 7u);
  EXPECT_EQ(ShareOf(0, 5, 4), 0u);
}

TEST(ShareOfTest, SharesSumToTheTotalAndDifferByAtMostOne) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    uint64_t total = trial < 1000 ? rng() % 1000 : rng();
    int parts = 1 + static_cast<int>(rng() % 64);
    uint64_t sum = 0;
    uint64_t smallest = UINT64_MAX;
    uint64_t largest = 0;
    for (int i = 0; i < parts; ++i) {
      uint64_t share = ShareOf(total, parts, i);
      if (i > 0) {
        EXPECT_LE(share, ShareOf(total, parts, i - 1));
      }
      sum += share;
      smallest = std::min(smallest, share);
      largest = std::max(largest, share);
    }
    ASSERT_EQ(sum, total) << total << " over " << parts;
    ASSERT_LE(largest - smallest, 1u);
  }
}

}  // namespace
}  // namespace hammer::load
