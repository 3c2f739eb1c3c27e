// UpstreamPool: which regular instance a try goes to, and which are left out while they fail.
#include "hammer/dark/upstream_pool.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

namespace hammer::dark {
namespace {

constexpr MonoNanos kStart = 1000 * kSecond;

OutlierOptions Ejecting(uint32_t after) {
  OutlierOptions o;
  o.connect_failures = o.resets = o.server_errors = after;
  o.base_ejection_time = 10 * kSecond;
  o.max_ejection_time = 25 * kSecond;
  o.max_ejection_percent = 50;
  return o;
}

std::array<int, 4> Spread(UpstreamPool& pool, int tries, MonoNanos now) {
  std::mt19937_64 rng(7);
  std::array<int, 4> seen{};
  for (int i = 0; i < tries; ++i) {
    size_t at = pool.Pick(rng, now);
    ++seen[at];
    pool.Finished(at, TryOutcome::kAnswered, now);
  }
  return seen;
}

TEST(UpstreamPoolTest, EveryInstanceIsChosenAndRoundRobinTakesTurns) {
  UpstreamPool random(4, Ejecting(3), BalancePolicy::kLeastRequest);
  for (int n : Spread(random, 4000, kStart))
    EXPECT_GT(n, 700);
  UpstreamPool turns(4, Ejecting(3), BalancePolicy::kRoundRobin);
  EXPECT_EQ(Spread(turns, 400, kStart), (std::array<int, 4>{100, 100, 100, 100}));
}

TEST(UpstreamPoolTest, LeastRequestAvoidsTheBusyInstance) {
  UpstreamPool pool(2, Ejecting(3), BalancePolicy::kLeastRequest);
  std::mt19937_64 rng(1);
  // Instance 0 holds ten tries that do not end; the next ones go to 1 but when both draws
  // land on 0 (a quarter of the time), so 1 gets far more.
  for (int i = 0; i < 10; ++i) {
    while (pool.Pick(rng, kStart) != 0) {
    }
  }
  ASSERT_GE(pool.outstanding(0), 10u);
  int on_one = 0;
  for (int i = 0; i < 1000; ++i) {
    size_t at = pool.Pick(rng, kStart);
    on_one += at == 1 ? 1 : 0;
    pool.Finished(at, TryOutcome::kAnswered, kStart);
  }
  EXPECT_GT(on_one, 700);
}

TEST(UpstreamPoolTest, ConsecutiveFailuresEjectForAGrowingTimeThenItComesBack) {
  UpstreamPool pool(4, Ejecting(3), BalancePolicy::kRoundRobin);
  std::mt19937_64 rng(1);
  auto fail = [&](size_t instance, TryOutcome outcome, MonoNanos now) {
    while (pool.Pick(rng, now) != instance) {
    }
    pool.Finished(instance, outcome, now);
  };
  fail(2, TryOutcome::kConnectFailure, kStart);
  fail(2, TryOutcome::kConnectFailure, kStart);
  pool.Pick(rng, kStart);
  EXPECT_FALSE(pool.ejected(2, kStart));
  fail(2, TryOutcome::kConnectFailure, kStart);
  EXPECT_TRUE(pool.ejected(2, kStart));
  EXPECT_EQ(pool.ejections(), 1u);
  EXPECT_EQ(Spread(pool, 300, kStart)[2], 0);  // no traffic while ejected
  EXPECT_TRUE(pool.ejected(2, kStart + 9 * kSecond));
  EXPECT_FALSE(pool.ejected(2, kStart + 10 * kSecond));  // back after the base time
  // The second ejection lasts twice as long, the third is capped at the maximum (25 s).
  MonoNanos later = kStart + 11 * kSecond;
  for (int i = 0; i < 3; ++i)
    fail(2, TryOutcome::kReset, later);
  EXPECT_TRUE(pool.ejected(2, later + 19 * kSecond));
  EXPECT_FALSE(pool.ejected(2, later + 20 * kSecond));
  MonoNanos third = later + 21 * kSecond;
  for (int i = 0; i < 3; ++i)
    fail(2, TryOutcome::kServerError, third);
  EXPECT_TRUE(pool.ejected(2, third + 24 * kSecond));
  EXPECT_FALSE(pool.ejected(2, third + 25 * kSecond));
}

TEST(UpstreamPoolTest, AnAnswerInBetweenClearsTheCountAndKindsCountApart) {
  UpstreamPool pool(2, Ejecting(3), BalancePolicy::kRoundRobin);
  std::mt19937_64 rng(1);
  for (TryOutcome outcome : {TryOutcome::kConnectFailure, TryOutcome::kConnectFailure,
                             TryOutcome::kAnswered, TryOutcome::kConnectFailure, TryOutcome::kReset,
                             TryOutcome::kServerError, TryOutcome::kConnectFailure}) {
    while (pool.Pick(rng, kStart) != 0) {
    }
    pool.Finished(0, outcome, kStart);
  }
  EXPECT_FALSE(pool.ejected(0, kStart));  // two connect failures since the answer
}

TEST(UpstreamPoolTest, NeverMoreThanTheMaximumShareEjectedAndAllEjectedMeansAllChosen) {
  OutlierOptions options = Ejecting(1);
  UpstreamPool pool(4, options, BalancePolicy::kRoundRobin);
  std::mt19937_64 rng(1);
  for (size_t i = 0; i < 4; ++i) {
    while (pool.Pick(rng, kStart) != i) {
    }
    pool.Finished(i, TryOutcome::kConnectFailure, kStart);
  }
  EXPECT_EQ(pool.ejected_count(kStart), 2u);  // 50 % of four
  options.max_ejection_percent = 100;
  UpstreamPool all(2, options, BalancePolicy::kRoundRobin);
  for (size_t i = 0; i < 2; ++i) {
    while (all.Pick(rng, kStart) != i) {
    }
    all.Finished(i, TryOutcome::kConnectFailure, kStart);
  }
  ASSERT_EQ(all.ejected_count(kStart), 2u);
  std::array<int, 4> seen = Spread(all, 100, kStart);  // panic: traffic still goes to all
  EXPECT_EQ(seen[0] + seen[1], 100);
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
}

TEST(UpstreamPoolTest, ARetryAvoidsTheInstanceThatFailedWhenAnotherIsLeft) {
  UpstreamPool pool(3, Ejecting(3), BalancePolicy::kLeastRequest);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 300; ++i) {
    size_t at = pool.Pick(rng, kStart, 1);
    EXPECT_NE(at, 1u);
    pool.Finished(at, TryOutcome::kAnswered, kStart);
  }
  UpstreamPool one(1, Ejecting(3), BalancePolicy::kLeastRequest);
  EXPECT_EQ(one.Pick(rng, kStart, 0), 0u);  // nothing else to go to
}

TEST(UpstreamPoolTest, MetricsNameEachInstanceEscaped) {
  UpstreamPool pool(2, Ejecting(3), BalancePolicy::kRoundRobin);
  std::vector<std::string> names = {"http://a:1", "http://b\"\\:2"};
  stats::PrometheusText out;
  pool.AppendMetrics(out, names, kStart);
  const std::string& text = out.text();
  EXPECT_NE(text.find("hammer_dark_upstream_outstanding{instance=\"http://a:1\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{instance=\"http://b\\\"\\\\:2\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("hammer_dark_upstream_ejected 0\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace hammer::dark
