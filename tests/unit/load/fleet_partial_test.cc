#include "hammer/load/fleet_partial.h"

#include <gtest/gtest.h>

#include "hammer/stats/partial.h"

namespace hammer::load {
namespace {

stats::KeyStats Example(int64_t base_micros, int failures) {
  stats::KeyStats stats;
  stats.RecordSuccess(base_micros);
  stats.RecordSuccess(base_micros * 3);
  for (int i = 0; i < failures; ++i)
    stats.RecordFailure(Failure::kHttp5xx);
  return stats;
}

// The same figures write the same partial line: a way to compare KeyStats whole.
std::string AsPartial(const stats::KeyStats& stats) {
  std::string line;
  stats::AppendPartialRecord(line, "k", stats);
  return line;
}

TEST(FleetPartialTest, RoundTripKeepsEveryFigure) {
  FleetPartial partial;
  partial.worker = 3;
  partial.elapsed_ms = 12'345;
  partial.total = Example(1000, 2);
  partial.keys.emplace_back("http://127.0.0.1:8080/api", Example(250, 1));
  partial.keys.emplace_back("GET /json/{id}", Example(70, 0));
  const std::string payload = EncodeFleetPartial(partial);
  EXPECT_TRUE(payload.starts_with("hammer-fleet 1 3 12345\n*\t#hp1 2 2 4000 1000 3000 "))
      << payload;

  FleetPartial parsed;
  ASSERT_TRUE(ParseFleetPartial(payload, &parsed).ok());
  EXPECT_EQ(parsed.worker, 3);
  EXPECT_EQ(parsed.elapsed_ms, 12'345);
  EXPECT_EQ(AsPartial(parsed.total), AsPartial(partial.total));
  ASSERT_EQ(parsed.keys.size(), 2u);
  EXPECT_EQ(parsed.keys[0].first, "http://127.0.0.1:8080/api");
  EXPECT_EQ(AsPartial(parsed.keys[0].second), AsPartial(partial.keys[0].second));
  EXPECT_EQ(parsed.keys[1].first, "GET /json/{id}");
  EXPECT_EQ(AsPartial(parsed.keys[1].second), AsPartial(partial.keys[1].second));
}

TEST(FleetPartialTest, TotalOnly) {
  FleetPartial partial;
  partial.total = Example(5, 0);
  FleetPartial parsed;
  ASSERT_TRUE(ParseFleetPartial(EncodeFleetPartial(partial), &parsed).ok());
  EXPECT_EQ(parsed.total.count, 2u);
  EXPECT_TRUE(parsed.keys.empty());
}

TEST(FleetPartialTest, RejectsWhatIsNotAFleetPartial) {
  FleetPartial parsed;
  EXPECT_FALSE(ParseFleetPartial("", &parsed).ok());
  EXPECT_FALSE(ParseFleetPartial("hello\n", &parsed).ok());
  EXPECT_FALSE(ParseFleetPartial("hammer-fleet 1 x 5\n", &parsed).ok());
  EXPECT_FALSE(ParseFleetPartial("hammer-fleet 1 0 -5\n", &parsed).ok());
  // A header with no total.
  EXPECT_FALSE(ParseFleetPartial("hammer-fleet 1 0 5\n", &parsed).ok());
  // The total must come first.
  std::string keyed = "hammer-fleet 1 0 5\n";
  stats::AppendPartialRecord(keyed, "k", Example(5, 0));
  Status status = ParseFleetPartial(keyed, &parsed);
  EXPECT_NE(status.message().find("the total"), std::string::npos) << status.message();
  // A record that is not a partial.
  std::string record = "hammer-fleet 1 0 5\n";
  stats::AppendPartialRecord(record, "*", Example(5, 0));
  record += "k\t0.001\n";
  status = ParseFleetPartial(record, &parsed);
  EXPECT_NE(status.message().find("line 3"), std::string::npos) << status.message();
  // An inconsistent partial (count says 3, the histogram holds 2).
  std::string bad = "hammer-fleet 1 0 5\n";
  stats::AppendPartialRecord(bad, "*", Example(5, 0));
  bad.replace(bad.find("#hp1 2"), 6, "#hp1 3");
  EXPECT_FALSE(ParseFleetPartial(bad, &parsed).ok());
}

TEST(AbortReasonTest, RoundTripAndDescribe) {
  AbortReason reason;
  reason.threshold = "errors<5%";
  reason.actual = "7.3%";
  reason.message = "errors = 7.3% (73 of 1000 requests), limit < 5%\tover";
  reason.worker = 2;
  reason.fleet = true;
  const std::string payload = EncodeAbortReason(reason);
  EXPECT_EQ(payload,
            "threshold\terrors<5%\nactual\t7.3%\nworker\t2\nmessage\terrors = 7.3% (73 of 1000 "
            "requests), limit < 5% over\n");
  const AbortReason parsed = ParseAbortReason(payload);
  EXPECT_EQ(parsed.threshold, "errors<5%");
  EXPECT_EQ(parsed.actual, "7.3%");
  EXPECT_EQ(parsed.worker, 2);
  EXPECT_TRUE(parsed.fleet);
  EXPECT_EQ(parsed.Describe(),
            "threshold errors<5% failed on the fleet's figures (seen by worker 2): errors = 7.3% "
            "(73 of 1000 requests), limit < 5% over");
  reason.fleet = false;
  EXPECT_EQ(reason.Describe(),
            "threshold errors<5% failed on this worker's figures: errors = 7.3% (73 of 1000 "
            "requests), limit < 5%\tover");
}

TEST(AbortReasonTest, UnknownAndMissingFieldsAreTolerated) {
  const AbortReason parsed = ParseAbortReason("future\tx\nthreshold\tp99<1s\nworker\tnope\n");
  EXPECT_EQ(parsed.threshold, "p99<1s");
  EXPECT_EQ(parsed.worker, -1);
  EXPECT_EQ(parsed.actual, "");
}

}  // namespace
}  // namespace hammer::load
