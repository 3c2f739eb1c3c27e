// ReplayTiming: --replay's per-second account of the schedule kept.
#include "hammer/load/replay_timing.h"

#include <gtest/gtest.h>

namespace hammer::load {
namespace {

TEST(ReplayTimingTest, CountsDueSentAndLatePerSecond) {
  ReplayTiming timing;
  timing.Sent(100 * kMillisecond, 100 * kMillisecond);                 // on time
  timing.Sent(900 * kMillisecond, 900 * kMillisecond + kMillisecond);  // 1 ms: not late
  timing.Sent(950 * kMillisecond, 1'200 * kMillisecond);               // 250 ms late
  timing.Sent(2'500 * kMillisecond, 2'502 * kMillisecond);             // 2 ms late
  ASSERT_EQ(timing.seconds().size(), 3u);
  EXPECT_EQ(timing.seconds()[0].due, 3u);
  EXPECT_EQ(timing.seconds()[0].sent, 2u);
  EXPECT_EQ(timing.seconds()[0].late, 1u);
  EXPECT_EQ(timing.seconds()[0].max_behind, 250 * kMillisecond);
  EXPECT_EQ(timing.seconds()[1].due, 0u);
  EXPECT_EQ(timing.seconds()[1].sent, 1u);  // the late one went out in second 1
  EXPECT_EQ(timing.seconds()[2].due, 1u);
  EXPECT_EQ(timing.seconds()[2].late, 1u);
  EXPECT_EQ(timing.late(), 2u);
  EXPECT_EQ(timing.max_behind(), 250 * kMillisecond);
}

TEST(ReplayTimingTest, KsIsZeroForTheSameRhythmAndOneForBunchedSends) {
  ReplayTiming kept, bunched;
  for (int i = 0; i < 1000; ++i) {
    const Nanos due = i * 3 * kMillisecond + (i % 7) * kMicrosecond * 100;
    kept.Sent(due, due + 50 * kMicrosecond);  // a constant delay keeps every gap
    bunched.Sent(due, 10 * kSecond + i);      // everything sent at once at the end
  }
  EXPECT_DOUBLE_EQ(kept.InterArrivalKs(), 0);
  EXPECT_DOUBLE_EQ(bunched.InterArrivalKs(), 1);
  EXPECT_DOUBLE_EQ(ReplayTiming().InterArrivalKs(), 0);
}

TEST(ReplayTimingTest, MergeAddsRows) {
  ReplayTiming a, b;
  a.Sent(0, 0);
  b.Sent(1'500 * kMillisecond, 1'600 * kMillisecond);
  a.Merge(b);
  ASSERT_EQ(a.seconds().size(), 2u);
  EXPECT_EQ(a.seconds()[1].due, 1u);
  EXPECT_EQ(a.seconds()[1].late, 1u);
  EXPECT_EQ(a.seconds()[1].max_behind, 100 * kMillisecond);
}

TEST(ReplayTimingTest, SecondsPastTheLimitGoToTheLastRow) {
  ReplayTiming timing;
  const Nanos far = static_cast<Nanos>(ReplayTiming::kMaxSeconds + 5) * kSecond;
  timing.Sent(far, far);
  EXPECT_EQ(timing.seconds().size(), ReplayTiming::kMaxSeconds);
  EXPECT_EQ(timing.seconds().back().due, 1u);
}

}  // namespace
}  // namespace hammer::load
