#include "hammer/stats/threshold.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "hammer/base/clock.h"

namespace hammer::stats {
namespace {

Threshold Parse(std::string_view text) {
  Result<Threshold> t = ParseThreshold(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().message();
  return t.ok() ? *t : Threshold();
}

std::string ParseError(std::string_view text) {
  Result<Threshold> t = ParseThreshold(text);
  return t.ok() ? "ok" : t.status().message();
}

TEST(ThresholdTest, ParsesEveryMetric) {
  Threshold p99 = Parse("p99<250ms");
  EXPECT_EQ(p99.metric, ThresholdMetric::kPercentile);
  EXPECT_EQ(p99.percentile, 99);
  EXPECT_EQ(p99.op, ThresholdOp::kLess);
  EXPECT_EQ(p99.limit, 250.0 * kMillisecond);
  EXPECT_EQ(p99.limit_text, "250ms");
  EXPECT_EQ(p99.key, "");
  EXPECT_EQ(p99.text, "p99<250ms");

  Threshold p999 = Parse(" p99.9 <= 1s ");
  EXPECT_EQ(p999.percentile, 99.9);
  EXPECT_EQ(p999.op, ThresholdOp::kLessEqual);
  EXPECT_EQ(p999.limit, 1.0 * kSecond);

  EXPECT_EQ(Parse("p50<=20ms").percentile, 50);
  EXPECT_EQ(Parse("p100<3s").percentile, 100);
  EXPECT_EQ(Parse("max<2s").metric, ThresholdMetric::kMax);
  EXPECT_EQ(Parse("mean<50ms").metric, ThresholdMetric::kMean);

  Threshold rate = Parse("errors<1%");
  EXPECT_EQ(rate.metric, ThresholdMetric::kErrorRate);
  EXPECT_EQ(rate.limit, 1);
  EXPECT_EQ(Parse("errors<0.5%").limit, 0.5);
  Threshold count = Parse("errors<=10");
  EXPECT_EQ(count.metric, ThresholdMetric::kErrorCount);
  EXPECT_EQ(count.limit, 10);

  Threshold rps = Parse("rps>1000");
  EXPECT_EQ(rps.metric, ThresholdMetric::kRps);
  EXPECT_EQ(rps.op, ThresholdOp::kGreater);
  EXPECT_EQ(rps.limit, 1000);
  EXPECT_EQ(Parse("rps>=99.5").op, ThresholdOp::kGreaterEqual);
}

TEST(ThresholdTest, KeyScopeAfterTheFirstAt) {
  Threshold t = Parse("p99<100ms@http://127.0.0.1:8080/api");
  EXPECT_EQ(t.key, "http://127.0.0.1:8080/api");
  EXPECT_EQ(t.limit, 100.0 * kMillisecond);
  EXPECT_EQ(Parse("errors < 1% @ GET /a@b").key, "GET /a@b");
}

TEST(ThresholdTest, ParseErrorsNameTheText) {
  EXPECT_EQ(ParseError("p99"),
            "threshold 'p99': expected METRIC OP VALUE, e.g. p99<250ms or errors<1%");
  EXPECT_EQ(ParseError("p99<"), "threshold 'p99<': missing value after the operator");
  EXPECT_EQ(ParseError("p99<250"), "threshold 'p99<250': give the latency a unit, e.g. 250ms");
  EXPECT_EQ(ParseError("p99<250xs"),
            "threshold 'p99<250xs': invalid duration unit in '250xs' (use ns, us, ms, s, m or h, "
            "e.g. 1m30s)");
  EXPECT_EQ(ParseError("p0<1s"),
            "threshold 'p0<1s': percentile 'p0' must be p followed by a number above 0 and at "
            "most 100");
  EXPECT_EQ(ParseError("p100.1<1s").substr(0, 36), "threshold 'p100.1<1s': percentile 'p");
  EXPECT_FALSE(ParseThreshold("p<1s").ok());
  EXPECT_FALSE(ParseThreshold("p-5<1s").ok());
  EXPECT_EQ(ParseError("p99=<1s").substr(0, 38), "threshold 'p99=<1s': percentile 'p99='");
  EXPECT_EQ(ParseError("latency<1s"),
            "threshold 'latency<1s': unknown metric 'latency' (use pN such as p99, max, mean, "
            "errors or rps)");
  EXPECT_EQ(ParseError("errors<101%"),
            "threshold 'errors<101%': error rate '101%' is not a percentage from 0% to 100%");
  EXPECT_EQ(ParseError("errors<1.5"),
            "threshold 'errors<1.5': errors takes a count (10) or a percentage (1%), not '1.5'");
  EXPECT_EQ(ParseError("errors<-1"),
            "threshold 'errors<-1': errors takes a count (10) or a percentage (1%), not '-1'");
  EXPECT_EQ(ParseError("rps>fast"), "threshold 'rps>fast': rps takes a number, not 'fast'");
  EXPECT_EQ(ParseError("rps>1e3"), "threshold 'rps>1e3': rps takes a number, not '1e3'");
  EXPECT_EQ(ParseError("p99<1s@"), "threshold 'p99<1s@': empty key after '@'");
}

Threshold ParseCanary(std::string_view text) {
  Result<Threshold> t = ParseThreshold(text, ThresholdSubject::kCanary);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().message();
  return t.ok() ? *t : Threshold();
}

std::string CanaryError(std::string_view text) {
  Result<Threshold> t = ParseThreshold(text, ThresholdSubject::kCanary);
  return t.ok() ? "ok" : t.status().message();
}

TEST(ThresholdTest, ParsesCanaryMetrics) {
  Threshold diff = ParseCanary("diff_rate<1%");
  EXPECT_EQ(diff.metric, ThresholdMetric::kDiffRate);
  EXPECT_EQ(diff.limit, 1);
  EXPECT_EQ(ThresholdMetricName(diff), "diff_rate");

  Threshold errors = ParseCanary("error_increase <= 0.1%");
  EXPECT_EQ(errors.metric, ThresholdMetric::kErrorIncrease);
  EXPECT_EQ(errors.op, ThresholdOp::kLessEqual);
  EXPECT_EQ(errors.limit, 0.1);

  Threshold both = ParseCanary("latency_increase<10%+1ms");
  EXPECT_EQ(both.metric, ThresholdMetric::kLatencyIncrease);
  EXPECT_EQ(both.limit_percent, 10);
  EXPECT_EQ(both.limit, 1.0 * kMillisecond);
  EXPECT_EQ(both.limit_text, "10%+1ms");
  Threshold reversed = ParseCanary("latency_increase < 2ms + 5%");
  EXPECT_EQ(reversed.limit_percent, 5);
  EXPECT_EQ(reversed.limit, 2.0 * kMillisecond);
  Threshold relative = ParseCanary("latency_increase<20%");
  EXPECT_EQ(relative.limit_percent, 20);
  EXPECT_EQ(relative.limit, 0);
  Threshold absolute = ParseCanary("latency_increase<500us");
  EXPECT_EQ(absolute.limit_percent, 0);
  EXPECT_EQ(absolute.limit, 500.0 * kMicrosecond);

  Threshold ratio = ParseCanary("p99_ratio<1.5");
  EXPECT_EQ(ratio.metric, ThresholdMetric::kPercentileRatio);
  EXPECT_EQ(ratio.percentile, 99);
  EXPECT_EQ(ratio.limit, 1.5);
  EXPECT_EQ(ThresholdMetricName(ratio), "p99_ratio");
  EXPECT_EQ(ParseCanary("p99.9_ratio<3").percentile, 99.9);

  Threshold samples = ParseCanary("samples>=500");
  EXPECT_EQ(samples.metric, ThresholdMetric::kSamples);
  EXPECT_EQ(samples.op, ThresholdOp::kGreaterEqual);
  EXPECT_EQ(samples.limit, 500);

  // The load metrics are the dark side's, keys are endpoint groups.
  Threshold p99 = ParseCanary("p99<250ms@GET /json/{id}");
  EXPECT_EQ(p99.metric, ThresholdMetric::kPercentile);
  EXPECT_EQ(p99.key, "GET /json/{id}");
  EXPECT_EQ(ParseCanary("errors<1%").metric, ThresholdMetric::kErrorRate);
}

TEST(ThresholdTest, CanaryMetricsBelongToTheirSubject) {
  EXPECT_EQ(ParseError("diff_rate<1%"),
            "threshold 'diff_rate<1%': 'diff_rate' compares a canary with its baseline: it is a "
            "hammer dark --judge metric (use pN, max, mean, errors or rps)");
  EXPECT_FALSE(ParseThreshold("p99_ratio<2").ok());
  EXPECT_FALSE(ParseThreshold("samples>=10").ok());
  EXPECT_EQ(CanaryError("rps>10"),
            "threshold 'rps>10': rps is not a canary metric (the canary's traffic is a copy of "
            "the regular side's; use samples>=N for how much must be seen)");
  EXPECT_EQ(CanaryError("latency<1s"),
            "threshold 'latency<1s': unknown metric 'latency' (use diff_rate, error_increase, "
            "latency_increase, pN_ratio such as p99_ratio, samples, or pN, max, mean, errors of "
            "the dark side)");
}

TEST(ThresholdTest, CanaryParseErrorsNameTheText) {
  EXPECT_EQ(CanaryError("diff_rate>1%"),
            "threshold 'diff_rate>1%': diff_rate is an upper bound: use < or <=, e.g. "
            "diff_rate<1%");
  EXPECT_EQ(CanaryError("p99_ratio>=2"),
            "threshold 'p99_ratio>=2': p99_ratio is an upper bound: use < or <=, e.g. "
            "p99_ratio<2");
  EXPECT_EQ(CanaryError("samples<500"),
            "threshold 'samples<500': samples is a minimum: use > or >=, e.g. samples>=500");
  EXPECT_EQ(CanaryError("diff_rate<1"),
            "threshold 'diff_rate<1': diff_rate takes a percentage from 0% to 100%, not '1'");
  EXPECT_EQ(CanaryError("error_increase<200%"),
            "threshold 'error_increase<200%': error_increase takes a percentage from 0% to 100%, "
            "not '200%'");
  for (std::string_view bad :
       {"latency_increase<5", "latency_increase<10%+", "latency_increase<+1ms",
        "latency_increase<1ms+2ms", "latency_increase<10%+20%", "latency_increase<fast",
        "latency_increase<-1ms"}) {
    std::string error = CanaryError(bad);
    EXPECT_NE(error.find("latency_increase takes a percentage of the regular median (10%), a "
                         "duration (1ms) or both (10%+1ms)"),
              std::string::npos)
        << bad << ": " << error;
  }
  EXPECT_EQ(CanaryError("p99_ratio<0"),
            "threshold 'p99_ratio<0': p99_ratio takes a ratio above 0 (1.5), not '0'");
  EXPECT_EQ(CanaryError("p0_ratio<2").substr(0, 39), "threshold 'p0_ratio<2': percentile 'p0_");
  EXPECT_EQ(CanaryError("samples>=1.5"),
            "threshold 'samples>=1.5': samples takes a count (500), not '1.5'");
}

TEST(ThresholdTest, HoldsAndDistance) {
  Threshold diff = ParseCanary("diff_rate<1%");
  EXPECT_TRUE(ThresholdHolds(diff, 0.99));
  EXPECT_FALSE(ThresholdHolds(diff, 1));
  EXPECT_EQ(ThresholdDistance(diff, 5.1), " (over by 4.1 percentage points)");
  Threshold samples = ParseCanary("samples>=500");
  EXPECT_TRUE(ThresholdHolds(samples, 500));
  EXPECT_EQ(ThresholdDistance(samples, 120), " (under by 380, 76%)");
  EXPECT_EQ(ThresholdDistance(ParseCanary("p99_ratio<2"), 3), " (over by 1, 50%)");
  Threshold load = Parse("p99<250ms");
  EXPECT_EQ(ThresholdDistance(load, 312.0 * kMillisecond), " (over by 62ms, 25%)");
}

KeyStats Stats(const std::vector<int64_t>& micros, uint64_t errors) {
  KeyStats stats;
  for (int64_t v : micros)
    stats.RecordSuccess(v);
  for (uint64_t i = 0; i < errors; ++i)
    stats.RecordFailure(std::nullopt);
  return stats;
}

// 1000 requests in 10 s: latencies 1..990 ms, 10 errors.
struct Fixture {
  KeyStats total;
  std::vector<std::pair<std::string, KeyStats>> keys;
  Fixture() {
    std::vector<int64_t> micros;
    for (int i = 1; i <= 990; ++i)
      micros.push_back(i * 1000);
    total = Stats(micros, 10);
    keys.emplace_back("/a", Stats({1000, 2000, 3000}, 1));
    keys.emplace_back("/broken", Stats({}, 5));
  }
  ThresholdInputs Inputs() const { return ThresholdInputs{total, 10.0, keys}; }
};

ThresholdResult Check(std::string_view text) {
  static const Fixture fixture;
  return EvaluateThreshold(Parse(text), fixture.Inputs());
}

TEST(ThresholdTest, LatencyThresholds) {
  ThresholdResult pass = Check("p50<1s");
  EXPECT_TRUE(pass.passed);
  EXPECT_EQ(pass.text, "p50<1s");
  EXPECT_EQ(pass.actual, "495ms");
  EXPECT_EQ(pass.message, "p50 = 495ms, limit < 1s");

  ThresholdResult fail = Check("p99<250ms");
  EXPECT_FALSE(fail.passed);
  EXPECT_EQ(fail.actual, "982ms");  // the 981st value's bucket ends at 981.503 ms
  EXPECT_EQ(fail.message, "p99 = 982ms, limit < 250ms (over by 732ms, 293%)");

  EXPECT_EQ(Check("max<2s").message, "max = 990ms, limit < 2s");
  EXPECT_EQ(Check("max<990ms").message, "max = 990ms, limit < 990ms (at the limit)");
  EXPECT_TRUE(Check("max<=990ms").passed);
  EXPECT_EQ(Check("mean<=495.5ms").message, "mean = 496ms, limit <= 495.5ms");
  EXPECT_TRUE(Check("mean<=495.5ms").passed);
  EXPECT_FALSE(Check("mean<495.5ms").passed);
  // The bucket of 990 ms ends at 990.207 ms; percentiles are capped by the exact max.
  EXPECT_EQ(Check("p99.9>1s").message, "p99.9 = 990ms, limit > 1s (under by 10ms, 1%)");
}

TEST(ThresholdTest, ErrorAndRateThresholds) {
  ThresholdResult rate = Check("errors<1%");
  EXPECT_FALSE(rate.passed);
  EXPECT_EQ(rate.actual, "1%");
  EXPECT_EQ(rate.message, "errors = 1% (10 of 1000 requests), limit < 1% (at the limit)");
  EXPECT_TRUE(Check("errors<=1%").passed);
  EXPECT_EQ(Check("errors<0.5%").message,
            "errors = 1% (10 of 1000 requests), limit < 0.5% (over by 0.5 percentage points)");

  EXPECT_EQ(Check("errors<=10").message, "errors = 10, limit <= 10");
  EXPECT_EQ(Check("errors<5").message, "errors = 10, limit < 5 (over by 5, 100%)");
  EXPECT_EQ(Check("errors<0").message, "errors = 10, limit < 0 (over by 10)");

  ThresholdResult rps = Check("rps>1000");
  EXPECT_FALSE(rps.passed);
  EXPECT_EQ(rps.actual, "100.0");
  EXPECT_EQ(rps.message, "rps = 100.0, limit > 1000 (under by 900.0, 90%)");
  EXPECT_TRUE(Check("rps>=100").passed);
}

// hammer stats judges merged records and partials, which carry no run time: rps is refused
// there, and everything else parses as for hammer load.
TEST(ThresholdTest, MergedSubjectHasNoRps) {
  Result<Threshold> rps = ParseThreshold("rps>1000", ThresholdSubject::kMerged);
  ASSERT_FALSE(rps.ok());
  EXPECT_EQ(rps.status().message(),
            "threshold 'rps>1000': rps needs a run time, which records and partials do not "
            "carry (judge it in hammer load; use pN, max, mean or errors)");
  EXPECT_FALSE(ParseThreshold("diff_rate<1%", ThresholdSubject::kMerged).ok());
  for (const char* text : {"p99<250ms", "p99.9 < 1s", "max<2s", "mean<=5ms", "errors<1%",
                           "errors<=10", "p99<100ms@http://127.0.0.1:8080/api"}) {
    Result<Threshold> merged = ParseThreshold(text, ThresholdSubject::kMerged);
    ASSERT_TRUE(merged.ok()) << text;
    Threshold load = Parse(text);
    EXPECT_EQ(merged->metric, load.metric) << text;
    EXPECT_EQ(merged->limit, load.limit) << text;
    EXPECT_EQ(merged->key, load.key) << text;
  }
}

TEST(ThresholdTest, FormatThresholdLine) {
  std::vector<ThresholdResult> results = {Check("p99<=3ms@/a"), Check("errors<10%@/a")};
  EXPECT_EQ(FormatThresholdLine(results[0]),
            "  threshold p99<=3ms@/a              passed  p99 = 3ms, limit <= 3ms\n");
  EXPECT_EQ(FormatThresholdLine(results[1]),
            "  threshold errors<10%@/a            FAILED  errors = 25% (1 of 4 requests), limit < "
            "10% (over by 15 percentage points)\n");
  EXPECT_EQ(FailedCount(results), 1u);
}

TEST(ThresholdTest, PerKeyThresholds) {
  ThresholdResult a = Check("p99<=3ms@/a");
  EXPECT_TRUE(a.passed) << a.message;
  EXPECT_EQ(a.message, "p99 = 3ms, limit <= 3ms");
  EXPECT_EQ(Check("errors<10%@/a").message,
            "errors = 25% (1 of 4 requests), limit < 10% (over by 15 percentage points)");
  EXPECT_EQ(Check("rps>=0.4@/a").message, "rps = 0.4, limit >= 0.4");

  ThresholdResult missing = Check("p99<1s@/nope");
  EXPECT_FALSE(missing.passed);
  EXPECT_EQ(missing.actual, "");
  EXPECT_EQ(missing.message, "no requests with key '/nope'");

  ThresholdResult broken = Check("p99<1s@/broken");
  EXPECT_FALSE(broken.passed);
  EXPECT_EQ(broken.message, "no successful requests (5 failed)");
  EXPECT_EQ(Check("errors<=5@/broken").message, "errors = 5, limit <= 5");
}

TEST(ThresholdTest, EmptyRunFailsEveryThreshold) {
  KeyStats empty;
  std::vector<std::pair<std::string, KeyStats>> no_keys;
  ThresholdInputs inputs{empty, 0.0, no_keys};
  std::vector<Threshold> thresholds = {Parse("errors<1%"), Parse("rps>=0")};
  std::vector<ThresholdResult> results = EvaluateThresholds(thresholds, inputs);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].message, "no requests");
  EXPECT_FALSE(results[1].passed);
  EXPECT_FALSE(AllPassed(results));
  EXPECT_TRUE(AllPassed({}));
}

}  // namespace
}  // namespace hammer::stats
