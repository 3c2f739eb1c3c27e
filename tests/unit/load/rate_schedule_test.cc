#include "hammer/load/rate_schedule.h"

#include <gtest/gtest.h>

#include <cmath>

#include "hammer/load/pacer.h"
#include "hammer/load/think_time.h"

namespace hammer::load {
namespace {

RateSchedule MustParse(std::string_view text, double initial = 0) {
  Result<RateSchedule> s = RateSchedule::Parse(text, initial);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : RateSchedule();
}

// Per whole second, the requests due in it: what a server would count.
std::vector<uint64_t> PerSecond(const RateSchedule& s, int seconds) {
  std::vector<uint64_t> counts;
  for (int i = 0; i < seconds; ++i) {
    counts.push_back(s.DueCount((i + 1) * kSecond - 1) - s.DueCount(i * kSecond - 1));
  }
  return counts;
}

TEST(RateScheduleTest, ParsesStagesAndRejectsBadOnes) {
  RateSchedule s = MustParse("30s:100,1m30s:500,30s:0", 10);
  ASSERT_EQ(s.stages().size(), 3u);
  EXPECT_EQ(s.total_duration(), 150 * kSecond);
  EXPECT_EQ(s.peak_rate(), 500);
  for (std::string_view bad : {"", "30s", "30s:x", "0s:10", "30s:-1", "30s:10,", "x:10"}) {
    EXPECT_FALSE(RateSchedule::Parse(bad, 0).ok()) << bad;
  }
  EXPECT_FALSE(RateSchedule::Parse("10s:0", 0).ok());  // nothing would ever be sent
}

// k6's ramping-arrival-rate: linear from the previous rate; the count per second is the
// integral of the rate over that second, to within one request.
TEST(RateScheduleTest, LinearRampsFollowTheIntegral) {
  RateSchedule s = MustParse("4s:400,2s:400,2s:0");
  EXPECT_DOUBLE_EQ(s.RateAt(2 * kSecond), 200);
  // 0 -> 400 over 4 s: 50, 150, 250, 350 per second; then 400, 400; then 300, 100.
  std::vector<uint64_t> expected = {50, 150, 250, 350, 400, 400, 300, 100};
  std::vector<uint64_t> got = PerSecond(s, 8);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_LE(std::llabs(static_cast<long long>(got[i]) - static_cast<long long>(expected[i])), 1)
        << "second " << i;
  }
  // In total exactly the integral (+1: request 0 is due at 0).
  EXPECT_EQ(s.DueCount(8 * kSecond - 1), 2000u);
  EXPECT_EQ(s.DueTime(0), 0);
  EXPECT_EQ(s.DueTime(2000), 8 * kSecond);  // the integral reaches 2000 at the very end
  EXPECT_EQ(s.DueTime(2001), -1);           // the rate ended at 0: never
}

// Every due time solves integral(t) = n on its own: no drift however long the run.
TEST(RateScheduleTest, DueTimesAreExactAndAgreeWithDueCount) {
  RateSchedule s = MustParse("1h:1000,1h:1000", 10);
  for (uint64_t n : {1ull, 17ull, 1000ull, 999'999ull, 1'818'000ull, 5'000'000ull}) {
    Nanos t = s.DueTime(n);
    ASSERT_GE(t, 0);
    EXPECT_NEAR(static_cast<double>(s.RequestsBy(t)), static_cast<double>(n), 1e-3) << n;
    EXPECT_EQ(s.DueCount(t), n + 1) << n;
    EXPECT_EQ(s.DueCount(t - 1), n) << n;
    EXPECT_LT(s.DueTime(n - 1), t);
  }
  // Past the stages the last rate holds: 1000/s.
  EXPECT_NEAR(static_cast<double>(s.DueTime(6'001'000) - s.DueTime(6'000'000)), kSecond, 1);
}

TEST(RateScheduleTest, ThePacerSplitsTheScheduleOverThreads) {
  RateSchedule s = MustParse("2s:1000");
  OpenLoopPacer a(100, &s, 0, 2), b(100, &s, 1, 2);
  EXPECT_EQ(a.DueTime(0), 100 + s.DueTime(0));
  EXPECT_EQ(b.DueTime(0), 100 + s.DueTime(1));
  EXPECT_EQ(a.DueTime(5), 100 + s.DueTime(10));
  const MonoNanos end = 100 + 2 * kSecond - 1;
  EXPECT_EQ(a.DueCount(end) + b.DueCount(end), s.DueCount(2 * kSecond - 1));
}

TEST(ThinkTimeTest, FixedUniformExponential) {
  std::mt19937_64 rng(1);
  Result<ThinkTime> fixed = ThinkTime::Parse("250ms");
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->Sample(rng), 250 * kMillisecond);
  Result<ThinkTime> uniform = ThinkTime::Parse("uniform:100ms,200ms");
  ASSERT_TRUE(uniform.ok());
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    Nanos t = uniform->Sample(rng);
    ASSERT_GE(t, 100 * kMillisecond);
    ASSERT_LE(t, 200 * kMillisecond);
    sum += static_cast<double>(t);
  }
  EXPECT_NEAR(sum / 10000, 150.0 * kMillisecond, 2.0 * kMillisecond);
  Result<ThinkTime> exp = ThinkTime::Parse("exp:300ms");
  ASSERT_TRUE(exp.ok());
  sum = 0;
  for (int i = 0; i < 20000; ++i)
    sum += static_cast<double>(exp->Sample(rng));
  EXPECT_NEAR(sum / 20000, 300.0 * kMillisecond, 15.0 * kMillisecond);
  EXPECT_FALSE(ThinkTime::Parse("uniform:2s,1s").ok());
  EXPECT_FALSE(ThinkTime::Parse("exp:0").ok());
  EXPECT_FALSE(ThinkTime::Parse("sometimes").ok());
  EXPECT_FALSE(ThinkTime::Parse("0").value().enabled());
}

}  // namespace
}  // namespace hammer::load
