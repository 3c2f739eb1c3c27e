#include "hammer/dark/dark_metrics.h"

#include <gtest/gtest.h>

namespace hammer::dark {
namespace {

TEST(DarkMetricsTest, TheTablesKeepTheRules) {
  Status proxy = CheckCounterSpecs(ProxyCounters::kCounterSpecs);
  EXPECT_TRUE(proxy.ok()) << proxy.message();
  Status cluster = CheckCounterSpecs(ClusterCounters::kCounterSpecs);
  EXPECT_TRUE(cluster.ok()) << cluster.message();
  Status upstream = CheckCounterSpecs(UpstreamCounters::kCounterSpecs);
  EXPECT_TRUE(upstream.ok()) << upstream.message();
  Status capture = CheckCounterSpecs(CaptureCounters::kCounterSpecs);
  EXPECT_TRUE(capture.ok()) << capture.message();
}

TEST(DarkMetricsTest, EveryLoopIsSummedAndEveryClusterLabelled) {
  DarkLoopCounters a(2), b(2);
  Bump(a.proxy.requests, 3);
  Bump(b.proxy.requests, 4);
  Bump(a.proxy.streamed_responses);
  Bump(b.proxy.upstream_failed[static_cast<size_t>(Failure::kConnect)], 2);
  Bump(a.clusters[1].sent, 5);
  Bump(b.clusters[1].sent, 6);
  Bump(b.clusters[0].in_flight, 2);
  const std::vector<ClusterGauge> gauges = {{"plain", 1, 1.0, 2.5},
                                            {"odd \"name\" \\ x", 2, 0.5, 0}};
  stats::PrometheusText out;
  AppendDarkMetrics(out, {&a, &b}, gauges, 3, false);
  const std::string& text = out.text();
  for (std::string_view line : {
           "hammer_dark_requests_total 7\n",
           "hammer_dark_streamed_bodies_total{direction=\"response\"} 1\n",
           "hammer_dark_upstream_failures_total{type=\"connect\"} 2\n",
           "hammer_dark_sent_total{cluster=\"odd \\\"name\\\" \\\\ x\"} 11\n",
           "hammer_dark_sent_total{cluster=\"plain\"} 0\n",
           "hammer_dark_copies_in_flight{cluster=\"plain\"} 2\n",
           "hammer_dark_regular_instances 3\n",
           "hammer_dark_effective_rate{cluster=\"plain\"} 2.5\n",
           "# TYPE hammer_dark_failed_total counter\n",
           "# HELP hammer_dark_effective_rate ",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nnot in:\n" << text;
  }
  // Each family once: its samples are adjacent (the text format's rule).
  EXPECT_EQ(text.find("# TYPE hammer_dark_sent_total"),
            text.rfind("# TYPE hammer_dark_sent_total"));
  EXPECT_LT(text.find("hammer_dark_sent_total{cluster=\"odd"),
            text.find("# TYPE hammer_dark_succeeded_total"));
}

}  // namespace
}  // namespace hammer::dark
