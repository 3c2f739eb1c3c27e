// UpstreamPool: which regular instance a try goes to, which are left out while they fail, and
// how the set changes while tries are in flight.
#include "hammer/dark/upstream_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <thread>
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

UpstreamAddress At(int host, uint32_t weight = 1) {
  return UpstreamAddress{*http::ParseUrl("http://10.0.0." + std::to_string(host) + ":80"),
                         std::nullopt, weight};
}

// A pool of fixed instances http://10.0.0.<i>:80 (one source), picked and finished by index.
class Instances {
 public:
  Instances(size_t n, OutlierOptions outliers, BalancePolicy policy,
            std::vector<uint32_t> weights = {}, bool health_checked = false)
      : pool(1, outliers, policy, health_checked), reader(pool) {
    std::vector<UpstreamAddress> addresses;
    for (size_t i = 0; i < n; ++i)
      addresses.push_back(At(static_cast<int>(i), i < weights.size() ? weights[i] : 1));
    pool.SetInstances(0, addresses);
  }

  const UpstreamSet& set() { return reader.Get(); }
  UpstreamInstance& at(size_t i) { return *set().instances[i]; }
  size_t IndexOf(const UpstreamInstance* instance) {
    const auto& all = set().instances;
    return static_cast<size_t>(
        std::find_if(all.begin(), all.end(), [&](const auto& p) { return p.get() == instance; }) -
        all.begin());
  }
  size_t Pick(MonoNanos now, const UpstreamInstance* avoid = nullptr) {
    return IndexOf(pool.Pick(set(), rng, now, avoid).get());
  }
  void Finished(size_t i, TryOutcome outcome, MonoNanos now) { pool.Finished(at(i), outcome, now); }
  // A try held on instance i (picks until it comes up, finishing the others).
  void Hold(size_t i, MonoNanos now) {
    for (size_t at = Pick(now); at != i; at = Pick(now))
      Finished(at, TryOutcome::kAnswered, now);
  }
  // One try of `outcome` on instance i.
  void TryOn(size_t i, TryOutcome outcome, MonoNanos now) {
    Hold(i, now);
    Finished(i, outcome, now);
  }
  std::array<int, 4> Spread(int tries, MonoNanos now) {
    std::array<int, 4> seen{};
    for (int i = 0; i < tries; ++i) {
      size_t at = Pick(now);
      ++seen[at];
      Finished(at, TryOutcome::kAnswered, now);
    }
    return seen;
  }

  UpstreamPool pool;
  UpstreamPool::Reader reader;
  std::mt19937_64 rng{7};
};

TEST(UpstreamPoolTest, EveryInstanceIsChosenAndRoundRobinTakesTurns) {
  Instances random(4, Ejecting(3), BalancePolicy::kLeastRequest);
  for (int n : random.Spread(4000, kStart))
    EXPECT_GT(n, 700);
  Instances turns(4, Ejecting(3), BalancePolicy::kRoundRobin);
  EXPECT_EQ(turns.Spread(400, kStart), (std::array<int, 4>{100, 100, 100, 100}));
}

TEST(UpstreamPoolTest, WeightsShareTheTrafficInBothPolicies) {
  Instances turns(3, Ejecting(3), BalancePolicy::kRoundRobin, {3, 1, 1});
  EXPECT_EQ(turns.Spread(500, kStart), (std::array<int, 4>{300, 100, 100, 0}));
  Instances random(3, Ejecting(3), BalancePolicy::kLeastRequest, {3, 1, 1});
  std::array<int, 4> seen = random.Spread(5000, kStart);
  EXPECT_GT(seen[0], 2500);  // 3/5 of the draws: 3,000
  EXPECT_GT(seen[1], 700);
  EXPECT_GT(seen[2], 700);
}

TEST(UpstreamPoolTest, LeastRequestWeighsOutstandingTriesByWeight) {
  // Instance 0 (weight 4) holds four tries, instance 1 (weight 1) two: 1 per unit of weight
  // against 2, so 1 is chosen only when both draws land on it (1/25 of the time), where the
  // bare counts would choose it whenever it is drawn at all (9/25).
  Instances pool(2, Ejecting(3), BalancePolicy::kLeastRequest, {4, 1});
  for (int i = 0; i < 4; ++i)
    pool.Hold(0, kStart);
  for (int i = 0; i < 2; ++i)
    pool.Hold(1, kStart);
  ASSERT_EQ(pool.at(0).outstanding(), 4u);
  ASSERT_EQ(pool.at(1).outstanding(), 2u);
  int on_one = 0;
  for (int i = 0; i < 1000; ++i) {
    size_t at = pool.Pick(kStart);
    on_one += at == 1 ? 1 : 0;
    pool.Finished(at, TryOutcome::kAnswered, kStart);
  }
  EXPECT_LT(on_one, 150);  // 40 expected; 360 if the weights were not counted
}

TEST(UpstreamPoolTest, LeastRequestAvoidsTheBusyInstance) {
  Instances pool(2, Ejecting(3), BalancePolicy::kLeastRequest);
  // Instance 0 holds ten tries that do not end; the next ones go to 1 but when both draws
  // land on 0 (a quarter of the time), so 1 gets far more.
  for (int i = 0; i < 10; ++i)
    pool.Hold(0, kStart);
  ASSERT_GE(pool.at(0).outstanding(), 10u);
  int on_one = 0;
  for (int i = 0; i < 1000; ++i) {
    size_t at = pool.Pick(kStart);
    on_one += at == 1 ? 1 : 0;
    pool.Finished(at, TryOutcome::kAnswered, kStart);
  }
  EXPECT_GT(on_one, 700);
}

TEST(UpstreamPoolTest, ConsecutiveFailuresEjectForAGrowingTimeThenItComesBack) {
  Instances pool(4, Ejecting(3), BalancePolicy::kRoundRobin);
  pool.TryOn(2, TryOutcome::kConnectFailure, kStart);
  pool.TryOn(2, TryOutcome::kConnectFailure, kStart);
  EXPECT_FALSE(pool.at(2).ejected(kStart));
  pool.TryOn(2, TryOutcome::kConnectFailure, kStart);
  EXPECT_TRUE(pool.at(2).ejected(kStart));
  EXPECT_EQ(pool.pool.counters().ejections.load(), 1u);
  EXPECT_EQ(pool.Spread(300, kStart)[2], 0);  // no traffic while ejected
  EXPECT_TRUE(pool.at(2).ejected(kStart + 9 * kSecond));
  EXPECT_FALSE(pool.at(2).ejected(kStart + 10 * kSecond));  // back after the base time
  // The second ejection lasts twice as long, the third is capped at the maximum (25 s).
  MonoNanos later = kStart + 11 * kSecond;
  for (int i = 0; i < 3; ++i)
    pool.TryOn(2, TryOutcome::kReset, later);
  EXPECT_TRUE(pool.at(2).ejected(later + 19 * kSecond));
  EXPECT_FALSE(pool.at(2).ejected(later + 20 * kSecond));
  MonoNanos third = later + 21 * kSecond;
  for (int i = 0; i < 3; ++i)
    pool.TryOn(2, TryOutcome::kServerError, third);
  EXPECT_TRUE(pool.at(2).ejected(third + 24 * kSecond));
  EXPECT_FALSE(pool.at(2).ejected(third + 25 * kSecond));
}

TEST(UpstreamPoolTest, AnAnswerInBetweenClearsTheCountAndKindsCountApart) {
  Instances pool(2, Ejecting(3), BalancePolicy::kRoundRobin);
  for (TryOutcome outcome : {TryOutcome::kConnectFailure, TryOutcome::kConnectFailure,
                             TryOutcome::kAnswered, TryOutcome::kConnectFailure, TryOutcome::kReset,
                             TryOutcome::kServerError, TryOutcome::kConnectFailure}) {
    pool.TryOn(0, outcome, kStart);
  }
  EXPECT_FALSE(pool.at(0).ejected(kStart));  // two connect failures since the answer
}

TEST(UpstreamPoolTest, NeverMoreThanTheMaximumShareEjectedAndAllEjectedMeansAllChosen) {
  OutlierOptions options = Ejecting(1);
  Instances pool(4, options, BalancePolicy::kRoundRobin);
  for (size_t i = 0; i < 4; ++i)
    pool.TryOn(i, TryOutcome::kConnectFailure, kStart);
  EXPECT_EQ(pool.pool.ejected_count(kStart), 2u);  // 50 % of four
  options.max_ejection_percent = 100;
  Instances all(2, options, BalancePolicy::kRoundRobin);
  for (size_t i = 0; i < 2; ++i)
    all.TryOn(i, TryOutcome::kConnectFailure, kStart);
  ASSERT_EQ(all.pool.ejected_count(kStart), 2u);
  EXPECT_FALSE(all.set().AnyAvailable(kStart));
  std::array<int, 4> seen = all.Spread(100, kStart);  // panic: traffic still goes to all
  EXPECT_EQ(seen[0] + seen[1], 100);
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
}

TEST(UpstreamPoolTest, ARetryAvoidsTheInstanceThatFailedWhenAnotherIsLeft) {
  Instances pool(3, Ejecting(3), BalancePolicy::kLeastRequest);
  for (int i = 0; i < 300; ++i) {
    size_t at = pool.Pick(kStart, &pool.at(1));
    EXPECT_NE(at, 1u);
    pool.Finished(at, TryOutcome::kAnswered, kStart);
  }
  EXPECT_TRUE(pool.set().AnyAvailable(kStart, &pool.at(1)));
  Instances one(1, Ejecting(3), BalancePolicy::kLeastRequest);
  EXPECT_EQ(one.Pick(kStart, &one.at(0)), 0u);  // nothing else to go to
  EXPECT_FALSE(one.set().AnyAvailable(kStart, &one.at(0)));
}

TEST(UpstreamPoolTest, UnhealthyAndUncheckedInstancesGetNoTrafficUnlessNoneIsHealthy) {
  Instances pool(3, Ejecting(3), BalancePolicy::kRoundRobin, {}, /*health_checked=*/true);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(pool.at(i).health(), Health::kUnchecked);
  // Nothing checked yet: a panic, all are chosen.
  std::array<int, 4> seen = pool.Spread(300, kStart);
  EXPECT_EQ(seen, (std::array<int, 4>{100, 100, 100, 0}));
  pool.at(1).set_health(Health::kHealthy);
  pool.at(2).set_health(Health::kUnhealthy);
  EXPECT_EQ(pool.Spread(300, kStart), (std::array<int, 4>{0, 300, 0, 0}));
  pool.at(0).set_health(Health::kHealthy);
  EXPECT_EQ(pool.Spread(300, kStart), (std::array<int, 4>{150, 150, 0, 0}));
  // Healthy but ejected is left out too.
  Instances ejecting(2, Ejecting(1), BalancePolicy::kRoundRobin, {}, true);
  ejecting.at(0).set_health(Health::kHealthy);
  ejecting.at(1).set_health(Health::kHealthy);
  ejecting.TryOn(0, TryOutcome::kConnectFailure, kStart);
  EXPECT_FALSE(ejecting.at(0).available(kStart));
  EXPECT_EQ(ejecting.Spread(100, kStart), (std::array<int, 4>{0, 100, 0, 0}));
}

TEST(UpstreamPoolTest, AnEmptySetPicksNothing) {
  UpstreamPool pool(1, Ejecting(3), BalancePolicy::kLeastRequest);
  UpstreamPool::Reader reader(pool);
  std::mt19937_64 rng(1);
  EXPECT_TRUE(reader.Get().empty());
  EXPECT_EQ(pool.Pick(reader.Get(), rng, kStart), nullptr);
}

TEST(UpstreamPoolTest, AChangeKeepsTheInstancesThatStayAndDrainsTheOnesThatLeave) {
  UpstreamPool pool(2, Ejecting(1), BalancePolicy::kRoundRobin);
  int changes = 0;
  pool.OnChange([&] { ++changes; });
  pool.SetInstances(0, {At(1), At(2)});
  pool.SetInstances(1, {At(3)});
  EXPECT_EQ(changes, 2);
  UpstreamPool::Reader reader(pool);
  std::mt19937_64 rng(1);
  ASSERT_EQ(reader.Get().size(), 3u);
  // A try in flight on each, and instance 2 ejected.
  std::vector<std::shared_ptr<UpstreamInstance>> held;
  for (int i = 0; i < 3; ++i)
    held.push_back(pool.Pick(reader.Get(), rng, kStart));
  std::shared_ptr<UpstreamInstance> one = reader.Get().instances[0];
  std::shared_ptr<UpstreamInstance> two = reader.Get().instances[1];
  pool.Finished(*two, TryOutcome::kConnectFailure, kStart);
  ASSERT_TRUE(two->ejected(kStart));
  const uint64_t before = reader.version();

  pool.SetInstances(0, {At(2), At(4)});  // 1 leaves, 4 comes, 2 stays
  pool.SetInstances(1, {At(3)});         // no change: no new version
  EXPECT_EQ(changes, 3);
  const UpstreamSet& now = reader.Get();
  EXPECT_NE(reader.version(), before);
  ASSERT_EQ(now.size(), 3u);
  EXPECT_EQ(now.instances[0], two);  // the same instance: its ejection and tries kept
  EXPECT_TRUE(now.instances[0]->ejected(kStart));
  EXPECT_EQ(now.instances[1]->name(), "http://10.0.0.4/");
  EXPECT_EQ(now.instances[2]->name(), "http://10.0.0.3/");
  EXPECT_TRUE(one->removed());
  EXPECT_FALSE(two->removed());
  EXPECT_EQ(pool.counters().added.load(), 4u);
  EXPECT_EQ(pool.counters().removed.load(), 1u);

  // The instance that left is draining while its try is in flight, and never chosen again.
  stats::PrometheusText out;
  pool.AppendMetrics(out, kStart);
  EXPECT_NE(out.text().find("hammer_dark_upstream_draining 1\n"), std::string::npos) << out.text();
  EXPECT_NE(out.text().find("hammer_dark_upstream_instances 3\n"), std::string::npos);
  for (int i = 0; i < 100; ++i) {
    std::shared_ptr<UpstreamInstance> at = pool.Pick(reader.Get(), rng, kStart);
    EXPECT_NE(at, one);
    pool.Finished(*at, TryOutcome::kAnswered, kStart);
  }
  pool.Finished(*one, TryOutcome::kAnswered, kStart);  // its try ends
  EXPECT_EQ(one->outstanding(), 0u);
  stats::PrometheusText after;
  pool.AppendMetrics(after, kStart);
  EXPECT_NE(after.text().find("hammer_dark_upstream_draining 0\n"), std::string::npos);
}

TEST(UpstreamPoolTest, AWeightChangeIsANewInstanceAndADuplicateIsOne) {
  UpstreamPool pool(2, Ejecting(3), BalancePolicy::kRoundRobin);
  pool.SetInstances(0, {At(1)});
  pool.SetInstances(1, {At(1, 5), At(2)});  // 10.0.0.1 listed twice: the first weight
  std::shared_ptr<const UpstreamSet> set = pool.Current();
  ASSERT_EQ(set->size(), 2u);
  EXPECT_EQ(set->instances[0]->weight(), 1u);
  std::shared_ptr<UpstreamInstance> first = set->instances[0];
  pool.SetInstances(0, {At(1, 3)});
  EXPECT_TRUE(first->removed());
  EXPECT_EQ(pool.Current()->instances[0]->weight(), 3u);
}

TEST(UpstreamPoolTest, PinnedAddressesAreInstancesOfTheirOwnNamedAfterTheirUrl) {
  UpstreamAddress a{*http::ParseUrl("https://api.internal:8443/"),
                    *net::SocketAddress::FromIp("10.1.0.5", 0), 1};
  UpstreamAddress b = a;
  b.address = *net::SocketAddress::FromIp("10.1.0.6", 0);
  EXPECT_NE(a.Key(), b.Key());
  EXPECT_EQ(a.Name(), "https://api.internal:8443/ (10.1.0.5:8443)");
  UpstreamPool pool(1, Ejecting(3), BalancePolicy::kRoundRobin);
  pool.SetInstances(0, {a, b});
  EXPECT_EQ(pool.Current()->size(), 2u);
}

// Loops pick and finish while a source keeps changing the set: every try ends on the instance
// it was counted on, whatever set is current by then (run under TSan by `make tsan`).
TEST(UpstreamPoolTest, PicksOnSeveralThreadsWhileTheSetChanges) {
  UpstreamPool pool(1, Ejecting(2), BalancePolicy::kLeastRequest);
  pool.SetInstances(0, {At(1), At(2), At(3)});
  std::atomic<bool> stop{false};
  std::vector<std::thread> loops;
  std::vector<std::shared_ptr<UpstreamInstance>> seen[3];
  for (int t = 0; t < 3; ++t) {
    loops.emplace_back([&, t] {
      UpstreamPool::Reader reader(pool);
      std::mt19937_64 rng(static_cast<uint64_t>(t));
      for (int i = 0; i < 20000 && !stop.load(); ++i) {
        std::shared_ptr<UpstreamInstance> at = pool.Pick(reader.Get(), rng, kStart);
        ASSERT_NE(at, nullptr);
        pool.Finished(*at, i % 7 == 0 ? TryOutcome::kReset : TryOutcome::kAnswered, kStart);
        if (i % 1000 == 0) seen[t].push_back(at);
      }
    });
  }
  for (int round = 0; round < 200; ++round) {
    pool.SetInstances(0, {At(1 + round % 4), At(2 + round % 3), At(9)});
  }
  for (auto& loop : loops)
    loop.join();
  for (const auto& instance : pool.Current()->instances)
    EXPECT_EQ(instance->outstanding(), 0u);
  for (const auto& list : seen) {
    for (const auto& instance : list)
      EXPECT_EQ(instance->outstanding(), 0u);
  }
}

}  // namespace
}  // namespace hammer::dark
