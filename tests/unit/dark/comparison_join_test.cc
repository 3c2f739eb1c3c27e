// ComparisonJoin: the answers of one forked request meet, and each dark cluster's side of it is
// recorded in that cluster's report once every expected answer has settled.
#include "hammer/dark/comparison_join.h"

#include <gtest/gtest.h>

namespace hammer::dark {
namespace {

constexpr std::string_view kBody = R"({"id":1,"price":5})";
constexpr std::string_view kChanged = R"({"id":1,"price":6})";

struct Fixture {
  JsonDiff diff;
  ComparisonReport canary, other;
  ComparisonJoin join{&diff, "GET /items/{id}", "GET /items/1"};
  const EndpointComparison& Of(const ComparisonReport& report) {
    const EndpointComparison* e = report.Find("GET /items/{id}");
    EXPECT_NE(e, nullptr);
    static const EndpointComparison kNone;
    return e != nullptr ? *e : kNone;
  }
};

TEST(ComparisonJoinTest, EachClusterIsComparedWithTheSameNoise) {
  Fixture f;
  f.join.ExpectDark(0, &f.canary);
  f.join.ExpectDark(3, &f.other);
  f.join.ExpectSecondary();
  f.join.SetDark(3, 200, {}, kChanged, 900);
  f.join.SetPrimary(200, {}, kBody, 400);
  f.join.SetSecondary(200, {}, kBody);
  EXPECT_EQ(f.canary.Find("GET /items/{id}"), nullptr);  // cluster 0 has not answered yet
  f.join.SetDark(0, 200, {}, kBody, 500);
  const EndpointComparison& canary = f.Of(f.canary);
  EXPECT_EQ(canary.pairs, 1u);
  EXPECT_EQ(canary.total, 1u);
  EXPECT_EQ(canary.differences, 0u);
  EXPECT_EQ(canary.dark_latency_us.max(), 500);
  EXPECT_EQ(canary.primary_latency_us.max(), 400);
  const EndpointComparison& other = f.Of(f.other);
  EXPECT_EQ(other.total, 1u);
  EXPECT_EQ(other.differences, 1u);
  EXPECT_EQ(other.fields.at("body.price").raw, 1u);
  EXPECT_EQ(other.difference_sets.at("body.price"), 1u);
}

TEST(ComparisonJoinTest, FailuresAreCountedNotDiffed) {
  Fixture f;
  f.join.ExpectDark(0, &f.canary);
  f.join.SetPrimary(200, {}, kBody, 400);
  f.join.SetDark(0, 503, {}, "busy", 20);
  const EndpointComparison& e = f.Of(f.canary);
  EXPECT_EQ(e.pairs, 1u);
  EXPECT_EQ(e.dark_failures, 1u);
  EXPECT_EQ(e.primary_failures, 0u);
  EXPECT_EQ(e.total, 0u);
  EXPECT_EQ(e.dark_latency_us.total_count(), 0u);  // a failure's latency is not the dark's speed
  EXPECT_EQ(e.primary_latency_us.total_count(), 1u);
}

TEST(ComparisonJoinTest, APrimaryTransportFailureIsAPrimaryFailure) {
  Fixture f;
  f.join.ExpectDark(0, &f.canary);
  f.join.DarkFailed(0);
  f.join.PrimaryFailed();
  const EndpointComparison& e = f.Of(f.canary);
  EXPECT_EQ(e.pairs, 1u);
  EXPECT_EQ(e.primary_failures, 1u);
  EXPECT_EQ(e.dark_failures, 1u);
}

TEST(ComparisonJoinTest, ACopyNeverSentIsIncompleteNotAFailure) {
  Fixture f;
  f.join.ExpectDark(0, &f.canary);
  f.join.DarkNotSent(0);
  f.join.SetPrimary(200, {}, kBody, 400);
  const EndpointComparison& e = f.Of(f.canary);
  EXPECT_EQ(e.pairs, 0u);
  EXPECT_EQ(e.incomplete, 1u);
  EXPECT_EQ(e.unsent, 1u);
}

TEST(ComparisonJoinTest, AMissingSecondaryLeavesThePairUncompared) {
  Fixture f;
  f.join.ExpectDark(0, &f.canary);
  f.join.ExpectSecondary();
  f.join.SetPrimary(200, {}, kBody, 400);
  f.join.SetDark(0, 200, {}, kChanged, 450);
  f.join.SecondaryFailed();
  const EndpointComparison& e = f.Of(f.canary);
  EXPECT_EQ(e.pairs, 1u);
  EXPECT_EQ(e.incomplete, 1u);
  EXPECT_EQ(e.unsent, 0u);
  EXPECT_EQ(e.total, 0u);
  EXPECT_EQ(e.dark_latency_us.total_count(), 1u);
}

TEST(ComparisonJoinTest, LateAnswersAfterSettlingAreIgnored) {
  Fixture f;
  f.join.ExpectDark(0, &f.canary);
  f.join.SetPrimary(200, {}, kBody, 400);
  f.join.SetDark(0, 200, {}, kBody, 450);
  f.join.DarkFailed(0);
  f.join.SetDark(7, 200, {}, kBody, 1);  // not an expected cluster
  EXPECT_EQ(f.Of(f.canary).pairs, 1u);
  EXPECT_EQ(f.Of(f.canary).dark_failures, 0u);
}

}  // namespace
}  // namespace hammer::dark
