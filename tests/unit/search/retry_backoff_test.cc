#include "hammer/search/retry_backoff.h"

#include <gtest/gtest.h>

#include <random>

namespace hammer::search {
namespace {

TEST(RetryBackoffTest, NominalDoublesUpToTheCap) {
  RetryBackoff backoff{100 * kMillisecond, 1 * kSecond, 8};
  EXPECT_EQ(backoff.Nominal(1), 100 * kMillisecond);
  EXPECT_EQ(backoff.Nominal(2), 200 * kMillisecond);
  EXPECT_EQ(backoff.Nominal(3), 400 * kMillisecond);
  EXPECT_EQ(backoff.Nominal(4), 800 * kMillisecond);
  EXPECT_EQ(backoff.Nominal(5), 1 * kSecond);
  EXPECT_EQ(backoff.Nominal(60), 1 * kSecond);  // no overflow for large attempts
}

TEST(RetryBackoffTest, JitterStaysBetweenHalfAndNominal) {
  RetryBackoff backoff{100 * kMillisecond, 10 * kSecond, 8};
  std::mt19937_64 random(42);
  for (int attempt = 1; attempt <= 10; ++attempt) {
    const Nanos nominal = backoff.Nominal(attempt);
    Nanos lowest = nominal, highest = 0;
    for (int i = 0; i < 2000; ++i) {
      const Nanos delay = backoff.Delay(attempt, random());
      ASSERT_GE(delay, nominal / 2);
      ASSERT_LE(delay, nominal);
      lowest = std::min(lowest, delay);
      highest = std::max(highest, delay);
    }
    // The jitter uses the whole range.
    EXPECT_LT(lowest, nominal / 2 + nominal / 20);
    EXPECT_GT(highest, nominal - nominal / 20);
  }
  EXPECT_EQ(backoff.Delay(1, 0), 50 * kMillisecond);
}

TEST(RetryBackoffTest, AttemptsAreBounded) {
  RetryBackoff backoff{kMillisecond, kSecond, 3};
  EXPECT_FALSE(backoff.Exhausted(0));
  EXPECT_FALSE(backoff.Exhausted(2));
  EXPECT_TRUE(backoff.Exhausted(3));
  RetryBackoff never{kMillisecond, kSecond, 0};
  EXPECT_TRUE(never.Exhausted(0));
}

}  // namespace
}  // namespace hammer::search
