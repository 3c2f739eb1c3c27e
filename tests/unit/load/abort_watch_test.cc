#include "hammer/load/abort_watch.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace hammer::load {
namespace {

std::vector<stats::Threshold> Thresholds(std::initializer_list<const char*> texts) {
  std::vector<stats::Threshold> out;
  for (const char* text : texts) {
    Result<stats::Threshold> t = stats::ParseThreshold(text);
    EXPECT_TRUE(t.ok()) << text;
    out.push_back(*t);
  }
  return out;
}

stats::KeyStats Requests(int succeeded, int failed) {
  stats::KeyStats stats;
  for (int i = 0; i < succeeded; ++i)
    stats.RecordSuccess(1000);
  for (int i = 0; i < failed; ++i)
    stats.RecordFailure(Failure::kHttp5xx);
  return stats;
}

AbortOptions Options(std::vector<stats::Threshold> thresholds) {
  AbortOptions options;
  options.thresholds = std::move(thresholds);
  options.grace = 10 * kSecond;
  options.worker = 4;
  return options;
}

TEST(AbortWatchTest, JudgesOnlyAfterTheGrace) {
  AbortWatch watch(Options(Thresholds({"errors<5%"})), nullptr);
  watch.BeginRun(/*start=*/100 * kSecond, 0);
  const stats::KeyStats total = Requests(90, 10);
  const std::vector<std::pair<std::string, stats::KeyStats>> keys;
  const stats::ThresholdInputs inputs{total, 5.0, keys};
  EXPECT_FALSE(watch.Judge(100 * kSecond + 9 * kSecond, inputs, false));
  std::optional<AbortReason> reason = watch.Judge(100 * kSecond + 10 * kSecond, inputs, false);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->threshold, "errors<5%");
  EXPECT_EQ(reason->actual, "10%");
  EXPECT_EQ(reason->worker, 4);
  EXPECT_FALSE(reason->fleet);
  EXPECT_NE(reason->message.find("errors = 10%"), std::string::npos) << reason->message;
}

TEST(AbortWatchTest, PassingOrUncheckableThresholdsDoNotAbort) {
  AbortWatch watch(Options(Thresholds({"errors<5%", "p99<250ms@http://h/missing"})), nullptr);
  watch.BeginRun(0, 0);
  const std::vector<std::pair<std::string, stats::KeyStats>> keys;
  const stats::KeyStats passing = Requests(99, 1);
  // The @KEY threshold cannot be checked (the key has no requests): no abort.
  EXPECT_FALSE(watch.Judge(60 * kSecond, {passing, 60.0, keys}, false));
  // No request at all: nothing is judged.
  const stats::KeyStats none;
  EXPECT_FALSE(watch.Judge(60 * kSecond, {none, 60.0, keys}, false));
}

TEST(AbortWatchTest, TheFirstFailedThresholdIsTheReason) {
  AbortWatch watch(Options(Thresholds({"p99<250ms", "errors<=3", "errors<1%"})), nullptr);
  watch.BeginRun(0, 0);
  const std::vector<std::pair<std::string, stats::KeyStats>> keys;
  const stats::KeyStats total = Requests(10, 5);
  std::optional<AbortReason> reason = watch.Judge(10 * kSecond, {total, 1.0, keys}, true);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->threshold, "errors<=3");
  EXPECT_EQ(reason->actual, "5");
  EXPECT_TRUE(reason->fleet);
}

// Update merges what the workers report to the monitor and judges once a second.
TEST(AbortWatchTest, UpdateJudgesTheRunSoFar) {
  RunMonitor monitor(/*workers=*/1, /*key_readers=*/1);
  AbortOptions options = Options(Thresholds({"errors<5%@http://h/b"}));
  options.grace = 2 * kSecond;
  AbortWatch watch(std::move(options), nullptr);
  watch.BeginRun(0, 0);
  auto report = [&monitor](const char* key, int succeeded, int failed) {
    IntervalSnapshot interval;
    interval.succeeded = static_cast<uint64_t>(succeeded);
    interval.failed = static_cast<uint64_t>(failed);
    interval.keys.Add(key, Requests(succeeded, failed));
    monitor.Report(0, interval);
  };
  report("http://h/a", 100, 50);  // a failing key the threshold does not name
  report("http://h/b", 100, 1);
  EXPECT_EQ(watch.Update(1 * kSecond, monitor), nullptr);          // within the grace
  EXPECT_EQ(watch.Update(3 * kSecond, monitor), nullptr);          // b: 1%
  report("http://h/b", 0, 20);                                     // b: 21 of 121
  EXPECT_EQ(watch.Update(3500 * kMillisecond, monitor), nullptr);  // not a second since
  const AbortReason* reason = watch.Update(4 * kSecond, monitor);
  ASSERT_NE(reason, nullptr);
  EXPECT_EQ(reason->threshold, "errors<5%@http://h/b");
  EXPECT_EQ(reason->actual, "17.36%");
  // Said again at every later call.
  ASSERT_NE(watch.Update(5 * kSecond, monitor), nullptr);
  EXPECT_EQ(watch.reason()->threshold, "errors<5%@http://h/b");
}

}  // namespace
}  // namespace hammer::load
