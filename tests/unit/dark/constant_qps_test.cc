// ConstantQpsDispatcher and ConstantQpsSchedule on a simulated clock, against rest.li's
// TestConstantQpsDarkClusterStrategy and TestConstantQpsRateLimiter (github.com/linkedin/rest.li).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "hammer/dark/constant_qps_dispatcher.h"
#include "hammer/dark/fork_strategy.h"

namespace hammer::dark {
namespace {

constexpr Nanos kMs = kMillisecond;
constexpr Nanos kForever = INT64_MAX;
constexpr MonoNanos kNever = ConstantQpsSchedule::kNever;

ConstantQpsDispatcher<uint64_t> Dispatcher(size_t capacity, Nanos ttl, uint64_t seed,
                                           Nanos max_lag = kSecond) {
  auto dispatcher =
      ConstantQpsDispatcher<uint64_t>::Create(ConstantQpsOptions{capacity, ttl, max_lag}, seed);
  EXPECT_TRUE(dispatcher.ok());
  return std::move(dispatcher).value();
}

struct Send {
  MonoNanos time;
  uint64_t request;
};

// Drives a dispatcher like an event loop with a perfect timer: inbound requests (ids 0, 1, ...)
// every `inbound_every` from 0 while t < inbound_until, each preceded by SetShape(*shape) when
// `shape` is given (rest.li sets the rate on every request); Due() at every NextWakeup(), up to
// and including `end` (as rest.li's ClockedExecutor::runFor).
std::vector<Send> Simulate(ConstantQpsDispatcher<uint64_t>& dispatcher, const ClusterShape* shape,
                           Nanos inbound_every, MonoNanos inbound_until, MonoNanos end) {
  std::vector<Send> sends;
  MonoNanos next_inbound = 0;
  uint64_t id = 0;
  while (true) {
    MonoNanos wake = dispatcher.NextWakeup();
    if (next_inbound < inbound_until && next_inbound <= end && next_inbound <= wake) {
      if (shape != nullptr) dispatcher.SetShape(*shape, next_inbound);
      dispatcher.Offer(id++, next_inbound);
      next_inbound += inbound_every;
      continue;
    }
    if (wake > end) break;
    dispatcher.Due(wake, [&](uint64_t request) { sends.push_back(Send{wake, request}); });
  }
  return sends;
}

// TestConstantQpsDarkClusterStrategy: (duration ms, inbound QPS, target, Ns, Nd) ->
// expected = (int)(duration_s · target · Nd / Ns).
struct ConstantRow {
  int duration_ms;
  double inbound_qps;
  double target;
  uint32_t regular;
  uint32_t dark;
  int expected;
};

constexpr ConstantRow kConstantRows[] = {
    {0, 10, 0, 10, 10, 0},          {10, 10, 10, 10, 0, 0},
    {0, 10, 100, 10, 10, 0},        {1000, 10, 10, 10, 10, 10},
    {1000, 10, 30, 10, 10, 30},     {1000, 10, 50, 10, 10, 50},
    {1000, 10, 100, 10, 10, 100},   {1000, 10, 150, 10, 10, 150},
    {100, 10, 200, 10, 10, 20},     {3600000, 10, 9.5, 400, 10, 855},
    {1000, 10, 100, 10, 1, 10},     {1000, 10, 90, 10, 1, 9},
    {1000, 10, 120, 10, 1, 12},     {1000, 10, 100, 10, 2, 20},
    {1000, 10, 100, 40, 3, 7},      {1000, 10, 200, 10, 1, 20},
    {1000, 10, 250, 10, 1, 25},     {1000, 10, 400, 10, 1, 40},
    {3600000, 10, 10, 400, 2, 180},
};

TEST(ConstantQpsDispatcherTest, RestLiStrategyRowsWithinOneForEveryCapacity) {
  for (const ConstantRow& row : kConstantRows) {
    ClusterShape shape{0, row.regular, row.dark, row.target};
    double exact = row.duration_ms / 1000.0 * row.target * row.dark / row.regular;
    auto every = static_cast<Nanos>(1000 / row.inbound_qps) * kMs;
    // The inbound loop of the rest.li test runs whole steps: it ends at the first step >= duration.
    MonoNanos end = (row.duration_ms + every / kMs - 1) / (every / kMs) * every;
    for (size_t capacity : {1u, 1000u, 1000000u}) {
      for (uint64_t cluster = 1; cluster <= 3; ++cluster) {  // three clusters, own dispatchers
        auto dispatcher = Dispatcher(capacity, kForever, cluster * 7919 + capacity);
        auto sends = Simulate(dispatcher, &shape, every, row.duration_ms * kMs, end);
        auto count = static_cast<double>(sends.size());
        EXPECT_LE(std::abs(count - exact), 1.0)
            << row.duration_ms << " ms, target " << row.target << ", Ns " << row.regular << ", Nd "
            << row.dark << ", capacity " << capacity;
        // Whole-number rows come out exactly as rest.li's expected value; 7.5 gives 7 or 8.
        if (exact == std::floor(exact)) {
          EXPECT_EQ(count, row.expected) << row.duration_ms;
        }
      }
    }
  }
}

TEST(ConstantQpsDispatcherTest, JavadocRates) {
  EXPECT_DOUBLE_EQ(ConstantQpsSendRate({0, 10, 2, 50}), 10);
  EXPECT_NEAR(ConstantQpsSendRate({0, 7, 1, 75}), 10.714, 1e-3);
  EXPECT_DOUBLE_EQ(ConstantQpsSendRate({0, 1, 10, 50}), 500);
  EXPECT_EQ(ConstantQpsSendRate({0, 0, 10, 50}), 0);
}

TEST(ConstantQpsDispatcherTest, OneDispatchInEveryPeriod) {
  auto dispatcher = Dispatcher(16, kForever, 5);
  ClusterShape shape{0, 7, 1, 75};  // 10.714 per second
  auto sends = Simulate(dispatcher, &shape, 100 * kMs, 60 * kSecond, 60 * kSecond);
  double interval = 1e9 / ConstantQpsSendRate(shape);
  for (size_t i = 0; i < sends.size(); ++i) {
    ASSERT_EQ(static_cast<size_t>(std::floor(static_cast<double>(sends[i].time) / interval)), i);
  }
  EXPECT_NEAR(static_cast<double>(sends.size()), 60 * ConstantQpsSendRate(shape), 1);
}

// TestConstantQpsRateLimiter.submitOnceGetMany: one request at 5 QPS, capacity 1, is re-sent.
TEST(ConstantQpsDispatcherTest, SubmitOnceGetMany) {
  auto dispatcher = Dispatcher(1, kForever, 1);
  dispatcher.SetRate(5, 0);
  auto sends = Simulate(dispatcher, nullptr, kSecond, 1, 100 * kSecond);
  EXPECT_EQ(sends.size(), 500u);
  EXPECT_EQ(dispatcher.offered(), 1u);
}

// lowNonWholeRate: 0.05 QPS for 3 × 20 s − 1 ms gives exactly 3 dispatches, 100 times over.
TEST(ConstantQpsDispatcherTest, LowNonWholeRate) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    auto dispatcher = Dispatcher(1, kForever, seed);
    dispatcher.SetRate(0.05, 0);
    auto sends = Simulate(dispatcher, nullptr, kSecond, 1, 60 * kSecond - kMs);
    ASSERT_EQ(sends.size(), 3u) << "seed " << seed;
  }
}

// eventLoopStopsWhenTtlExpiresAllRequests: TTL 999 ms at 5 QPS -> 5 dispatches, then the
// schedule stops asking to be woken up.
TEST(ConstantQpsDispatcherTest, StopsWhenTheTtlExpiresEveryRequest) {
  int exactly_five = 0;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    auto dispatcher = Dispatcher(5, 999 * kMs, seed);
    dispatcher.SetRate(5, 0);
    auto sends = Simulate(dispatcher, nullptr, kSecond, 1, 100 * kSecond);
    // Periods of 200 ms from 0 with one dispatch each: the fifth lands at 800 ms + phase and
    // finds the request expired only if its phase exceeds 199 ms (probability 1/200).
    ASSERT_GE(sends.size(), 4u);
    ASSERT_LE(sends.size(), 5u);
    for (const Send& send : sends)
      ASSERT_LE(send.time, 999 * kMs);
    exactly_five += sends.size() == 5;
    ASSERT_EQ(dispatcher.NextWakeup(), kNever) << "seed " << seed;
    EXPECT_EQ(dispatcher.Due(200 * kSecond, [](uint64_t) { FAIL(); }), 0u);
  }
  EXPECT_GE(exactly_five, 985);
  auto dispatcher = Dispatcher(5, 999 * kMs, 1);
  dispatcher.SetRate(5, 0);
  EXPECT_EQ(Simulate(dispatcher, nullptr, kSecond, 1, 100 * kSecond).size(), 5u);
}

// ensureRandomButConstantRate: 200 QPS (burst 1) for 100 s; millisecond timestamps show 9 or 10
// distinct gaps (periods of 5 ms with a random phase each).
TEST(ConstantQpsDispatcherTest, JitterIsPresent) {
  auto dispatcher = Dispatcher(1, kForever, 3);
  dispatcher.SetRate(200, 0);
  auto sends = Simulate(dispatcher, nullptr, kSecond, 1, 100 * kSecond);
  EXPECT_EQ(sends.size(), 20000u);
  std::set<int64_t> gaps;
  int64_t previous = 0;
  for (const Send& send : sends) {
    gaps.insert(send.time / kMs - previous);
    previous = send.time / kMs;
  }
  EXPECT_GT(gaps.size(), 8u);
  EXPECT_LT(gaps.size(), 11u);
}

// testLowRateHighlyParallelConsistentRandomness: 400 replicas at 5/400 QPS (one request per
// 80 s each), 10 inbound QPS per replica with the rate set before each request. Each replica
// sends exactly once in the window; the fleet averages exactly 5 QPS; bursts and silences stay
// rare (each condition may fail in at most 1 of 100 cycles).
TEST(ConstantQpsDispatcherTest, FleetOfLowRateReplicas) {
  constexpr int kReplicas = 400;
  constexpr double kFleetQps = 5;
  constexpr int kCycles = 100;
  constexpr int64_t kWindowMs = 80000;
  int max_burst_fails = 0;
  int burst_frequency_fails = 0;
  int zero_frequency_fails = 0;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    std::vector<int> per_second(kWindowMs / 1000, 0);
    int total = 0;
    for (int replica = 0; replica < kReplicas; ++replica) {
      auto dispatcher = Dispatcher(1, kForever, static_cast<uint64_t>(cycle) * 100003 + replica);
      ClusterShape shape{0, kReplicas, 1, kFleetQps};  // 5/400 QPS from this replica
      auto sends = Simulate(dispatcher, &shape, 100 * kMs, kWindowMs * kMs, kWindowMs * kMs);
      int in_window = 0;
      for (const Send& send : sends) {
        if (send.time / kMs == kWindowMs) continue;  // the next window's first millisecond
        ++per_second[static_cast<size_t>(send.time / kSecond)];
        ++in_window;
      }
      ASSERT_EQ(in_window, 1) << "cycle " << cycle << " replica " << replica;
      total += in_window;
    }
    ASSERT_EQ(total / (kWindowMs / 1000.0), kFleetQps);
    int max = *std::max_element(per_second.begin(), per_second.end());
    auto high = std::count_if(per_second.begin(), per_second.end(),
                              [](int q) { return q > kFleetQps * 3 * 0.67; });
    auto zero = std::count(per_second.begin(), per_second.end(), 0);
    max_burst_fails += max > kFleetQps * 3;
    burst_frequency_fails += high > 5;
    zero_frequency_fails += zero > 5;
  }
  EXPECT_LE(max_burst_fails, 1);
  EXPECT_LE(burst_frequency_fails, 1);
  EXPECT_LE(zero_frequency_fails, 1);
}

// shutdownClearsBufferImmediately, and rest.li #1132: nothing keeps running after a refresh.
TEST(ConstantQpsDispatcherTest, ClearEmptiesTheBufferAndStopsTheSchedule) {
  auto dispatcher = Dispatcher(10, kForever, 1);
  dispatcher.SetRate(10, 0);
  for (uint64_t i = 0; i < 10; ++i)
    dispatcher.Offer(i, 0);
  EXPECT_NE(dispatcher.NextWakeup(), kNever);
  dispatcher.Clear();
  EXPECT_EQ(dispatcher.NextWakeup(), kNever);
  EXPECT_TRUE(dispatcher.buffer().empty());
  EXPECT_EQ(dispatcher.Due(kSecond, [](uint64_t) { FAIL(); }), 0u);
  // The next request starts it again.
  dispatcher.Offer(99, 2 * kSecond);
  EXPECT_GE(dispatcher.NextWakeup(), 2 * kSecond);
  EXPECT_LT(dispatcher.NextWakeup(), 2 * kSecond + 100 * kMs);
}

TEST(ConstantQpsDispatcherTest, InboundSlowerThanTargetIsResentFasterIsSampled) {
  // 2 inbound QPS, 20 dispatches per second, capacity 4: each request goes out ~10 times.
  auto slow = Dispatcher(4, kForever, 8);
  const ClusterShape twenty{0, 1, 1, 20};
  auto sends = Simulate(slow, &twenty, 500 * kMs, 10 * kSecond, 10 * kSecond);
  EXPECT_NEAR(static_cast<double>(sends.size()), 200, 1);
  std::set<uint64_t> distinct;
  for (const Send& send : sends)
    distinct.insert(send.request);
  EXPECT_EQ(distinct.size(), 20u);  // every request, each about 10 times

  // 1000 inbound QPS, 10 dispatches per second: most requests are never sent.
  auto fast = Dispatcher(4, kForever, 8);
  const ClusterShape ten{0, 1, 1, 10};
  sends = Simulate(fast, &ten, kMs, 10 * kSecond, 10 * kSecond);
  EXPECT_NEAR(static_cast<double>(sends.size()), 100, 1);
  EXPECT_EQ(fast.offered(), 10000u);
  distinct.clear();
  for (const Send& send : sends)
    distinct.insert(send.request);
  EXPECT_EQ(distinct.size(), sends.size());  // each sent once: the newest in a 4-deep ring
}

TEST(ConstantQpsDispatcherTest, KeepsSendingUntilTheTtlThenPausesAndResumes) {
  auto dispatcher = Dispatcher(100, 2 * kSecond, 4);
  const ClusterShape shape{0, 1, 1, 10};
  // Inbound for 5 s, then silence: sending continues for the TTL (2 s) after the last request.
  auto sends = Simulate(dispatcher, &shape, 100 * kMs, 5 * kSecond, 30 * kSecond);
  EXPECT_EQ(dispatcher.NextWakeup(), kNever);
  ASSERT_FALSE(sends.empty());
  EXPECT_LE(sends.back().time, 4900 * kMs + 2 * kSecond);
  EXPECT_NEAR(static_cast<double>(sends.size()), 69, 1);  // 6.9 s at 10 per second
  EXPECT_EQ(dispatcher.idle_pauses(), 1u);
  // A new request resumes within one period.
  dispatcher.Offer(1000, 40 * kSecond);
  MonoNanos wake = dispatcher.NextWakeup();
  EXPECT_GE(wake, 40 * kSecond);
  EXPECT_LT(wake, 40 * kSecond + 100 * kMs);
  EXPECT_EQ(dispatcher.Due(wake, [](uint64_t request) { EXPECT_EQ(request, 1000u); }), 1u);
}

TEST(ConstantQpsDispatcherTest, ZeroRateSendsNothing) {
  const ClusterShape no_regular{0, 0, 5, 10};
  const ClusterShape no_dark{0, 10, 0, 10};
  for (const ClusterShape* shape : {&no_regular, &no_dark}) {
    auto dispatcher = Dispatcher(10, kForever, 1);
    auto sends = Simulate(dispatcher, shape, 100 * kMs, 10 * kSecond, 10 * kSecond);
    EXPECT_TRUE(sends.empty());
    EXPECT_EQ(dispatcher.NextWakeup(), kNever);
    EXPECT_EQ(dispatcher.rate(), 0);
  }
}

TEST(ConstantQpsDispatcherTest, RateChangesNeitherBurstNorLose) {
  // The rate moves between 3, 20 and 0.5 per second every 1.7 s for a minute; the count stays
  // within one of the integral of the rate.
  auto dispatcher = Dispatcher(1, kForever, 12);
  const double rates[] = {3, 20, 0.5};
  dispatcher.SetRate(rates[0], 0);
  dispatcher.Offer(1, 0);
  double integral = 0;
  uint64_t count = 0;
  MonoNanos t = 0;
  int step = 0;
  for (MonoNanos change = 1700 * kMs; change <= 60 * kSecond; change += 1700 * kMs) {
    while (dispatcher.NextWakeup() <= change) {
      MonoNanos wake = dispatcher.NextWakeup();
      count += dispatcher.Due(wake, [](uint64_t) {});
    }
    integral += rates[step % 3] * static_cast<double>(change - t) / 1e9;
    t = change;
    ++step;
    dispatcher.SetRate(rates[step % 3], change);
    ASSERT_LE(std::abs(static_cast<double>(count) - integral), 1.0) << "at " << change;
  }
}

TEST(ConstantQpsDispatcherTest, LateCallersCatchUpWithinTheLagAndSkipBeyond) {
  auto dispatcher = Dispatcher(1, kForever, 2, kSecond);
  dispatcher.SetRate(100, 0);
  dispatcher.Offer(1, 0);
  // Called only every 300 ms: every dispatch still goes out, a few at a time.
  size_t sent = 0;
  for (MonoNanos t = 300 * kMs; t <= 3000 * kMs; t += 300 * kMs) {
    sent += dispatcher.Due(t, [](uint64_t) {});
  }
  EXPECT_NEAR(static_cast<double>(sent), 300, 1);
  EXPECT_EQ(dispatcher.skipped(), 0u);
  // A 10 s stall: only the last second's dispatches go out, the rest are counted as skipped.
  sent = dispatcher.Due(13 * kSecond, [](uint64_t) {});
  EXPECT_NEAR(static_cast<double>(sent), 100, 1);
  EXPECT_NEAR(static_cast<double>(dispatcher.skipped()), 900, 1);
  EXPECT_GT(dispatcher.NextWakeup(), 13 * kSecond);
}

TEST(ConstantQpsDispatcherTest, InvalidBufferOptionsAreRejected) {
  EXPECT_FALSE((ConstantQpsDispatcher<uint64_t>::Create({0, kSecond, kSecond}, 1).ok()));
  EXPECT_FALSE((ConstantQpsDispatcher<uint64_t>::Create({10, 0, kSecond}, 1).ok()));
}

TEST(ConstantQpsScheduleTest, PauseAndResumeWithinAPeriodAddNothing) {
  ConstantQpsSchedule schedule(1);
  schedule.SetRate(1, 0);
  schedule.Resume(0);
  MonoNanos first = schedule.next_dispatch();
  ASSERT_TRUE(schedule.TakeDue(first));
  schedule.Pause();
  EXPECT_EQ(schedule.next_dispatch(), ConstantQpsSchedule::kNever);
  schedule.Resume(first + 1);  // the next period's dispatch is still ahead: the plan is kept
  MonoNanos second = schedule.next_dispatch();
  EXPECT_GE(second, kSecond);
  EXPECT_LT(second, 2 * kSecond);
  EXPECT_FALSE(schedule.TakeDue(second - 1));
  EXPECT_TRUE(schedule.TakeDue(second));
  EXPECT_EQ(schedule.taken(), 2u);
}

TEST(ConstantQpsScheduleTest, UnchangedRateIsANoOp) {
  ConstantQpsSchedule schedule(1);
  schedule.SetRate(7, 0);
  schedule.Resume(0);
  MonoNanos planned = schedule.next_dispatch();
  for (int i = 0; i < 100; ++i)
    schedule.SetRate(7, i * kMs);
  EXPECT_EQ(schedule.next_dispatch(), planned);
}

}  // namespace
}  // namespace hammer::dark
