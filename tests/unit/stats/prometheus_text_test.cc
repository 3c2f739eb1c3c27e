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

}  // namespace
}  // namespace hammer::stats
