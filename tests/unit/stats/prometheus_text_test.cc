#include "hammer/stats/prometheus_text.h"

#include <gtest/gtest.h>

#include <vector>

namespace hammer::stats {
namespace {

using Labels = std::vector<PrometheusLabelPair>;

TEST(PrometheusTextTest, LabelValuesAreEscaped) {
  EXPECT_EQ(PrometheusLabel("plain"), "plain");
  EXPECT_EQ(PrometheusLabel("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(PrometheusTextTest, FamiliesAndSamples) {
  PrometheusText out;
  out.Family("hammer_x_total", "counter", "Things.");
  out.Sample("hammer_x_total", Labels{{"key", "/a\"b"}, {"outcome", "success"}}, uint64_t{42});
  out.Sample("hammer_y", Labels{}, 2.5);
  EXPECT_EQ(out.text(),
            "# HELP hammer_x_total Things.\n# TYPE hammer_x_total counter\n"
            "hammer_x_total{key=\"/a\\\"b\",outcome=\"success\"} 42\n"
            "hammer_y 2.5\n");
}

TEST(PrometheusTextTest, CumulativeCountsPutEachValueUnderTheFirstBoundAtOrAboveIt) {
  Histogram h;
  for (int64_t v : {50, 100, 101, 250, 999, 5000, 20000})
    h.Record(v);
  const int64_t bounds[] = {100, 250, 1000, 10000};
  EXPECT_EQ(CumulativeCounts(h, bounds), (std::vector<uint64_t>{2, 4, 5, 6}));
  EXPECT_EQ(CumulativeCounts(Histogram(), bounds), (std::vector<uint64_t>{0, 0, 0, 0}));
}

TEST(PrometheusTextTest, HistogramSecondsWritesBucketsSumAndCount) {
  Histogram h;
  h.Record(80);
  h.Record(300);
  h.Record(2'000'000);  // above every bound: only in +Inf
  const int64_t bounds[] = {100, 500};
  PrometheusText out;
  out.HistogramSeconds("lat_seconds", Labels{{"key", "k"}}, h, 80 + 300 + 2'000'000, bounds);
  EXPECT_EQ(out.text(),
            "lat_seconds_bucket{key=\"k\",le=\"0.0001\"} 1\n"
            "lat_seconds_bucket{key=\"k\",le=\"0.0005\"} 2\n"
            "lat_seconds_bucket{key=\"k\",le=\"+Inf\"} 3\n"
            "lat_seconds_sum{key=\"k\"} 2.00038\n"
            "lat_seconds_count{key=\"k\"} 3\n");
}

TEST(PrometheusTextTest, KeptSamplesAreTheSeriesOfTheText) {
  Histogram h;
  h.Record(80);
  h.Record(300);
  const int64_t bounds[] = {100};
  PrometheusText out(/*keep_samples=*/true);
  out.Family("hammer_x_total", "counter", "Things.");
  out.Sample("hammer_x_total", Labels{{"key", "/a\"b"}}, uint64_t{42});
  out.Sample("hammer_y", Labels{}, 2.5);
  out.HistogramSeconds("lat_seconds", Labels{{"key", "k"}}, h, 380, bounds);
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  const std::vector<PrometheusSample> samples = out.TakeSamples();
  ASSERT_EQ(samples.size(), 6u);
  EXPECT_EQ(samples[0].name, "hammer_x_total");
  EXPECT_EQ(samples[0].labels, (Pairs{{"key", "/a\"b"}}));  // unescaped
  EXPECT_EQ(samples[0].value, 42);
  EXPECT_EQ(samples[1].name, "hammer_y");
  EXPECT_EQ(samples[1].labels, Pairs{});
  EXPECT_EQ(samples[1].value, 2.5);
  EXPECT_EQ(samples[2].name, "lat_seconds_bucket");
  EXPECT_EQ(samples[2].labels, (Pairs{{"key", "k"}, {"le", "0.0001"}}));
  EXPECT_EQ(samples[2].value, 1);
  EXPECT_EQ(samples[3].labels, (Pairs{{"key", "k"}, {"le", "+Inf"}}));
  EXPECT_EQ(samples[3].value, 2);
  EXPECT_EQ(samples[4].name, "lat_seconds_sum");
  EXPECT_DOUBLE_EQ(samples[4].value, 0.00038);
  EXPECT_EQ(samples[5].name, "lat_seconds_count");
  EXPECT_EQ(samples[5].value, 2);
  EXPECT_TRUE(PrometheusText().TakeSamples().empty());
}

}  // namespace
}  // namespace hammer::stats
