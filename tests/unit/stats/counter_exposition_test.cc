#include "hammer/stats/counter_exposition.h"

#include <gtest/gtest.h>

namespace hammer::stats {
namespace {

#define EXPOSED_COUNTERS(X)                                                              \
  X(requests, kCounter, "t_requests_total", "", "Requests.")                             \
  X(to_client, kCounter, "t_bytes_total", "direction=to_client", "Bytes, by direction.") \
  X(to_server, kCounter, "t_bytes_total", "direction=to_server", "")                     \
  X(failed, kByFailure, "t_failures_total", "", "Failures, by type.")                    \
  X(in_flight, kGauge, "t_in_flight", "", "In flight now.")

struct Exposed {
  HAMMER_PLAIN_COUNTERS(EXPOSED_COUNTERS)
};

TEST(CounterExpositionTest, EachFamilyOnceWithItsSamplesForEveryRowTogether) {
  Exposed a, b;
  a.requests = 1;
  a.to_client = 10;
  a.failed.Add(Failure::kTimeout, 2);
  b.requests = 3;
  b.in_flight = 4;
  const std::vector<uint64_t> va = a.CounterValues(), vb = b.CounterValues();
  const CounterRow rows[] = {{{{"cluster", "a\"b"}}, va}, {{{"cluster", "c\\d"}}, vb}};
  PrometheusText out;
  AppendCounterFamilies(out, Exposed::kCounterSpecs, rows);
  EXPECT_EQ(out.text(),
            "# HELP t_requests_total Requests.\n"
            "# TYPE t_requests_total counter\n"
            "t_requests_total{cluster=\"a\\\"b\"} 1\n"
            "t_requests_total{cluster=\"c\\\\d\"} 3\n"
            "# HELP t_bytes_total Bytes, by direction.\n"
            "# TYPE t_bytes_total counter\n"
            "t_bytes_total{cluster=\"a\\\"b\",direction=\"to_client\"} 10\n"
            "t_bytes_total{cluster=\"c\\\\d\",direction=\"to_client\"} 0\n"
            "t_bytes_total{cluster=\"a\\\"b\",direction=\"to_server\"} 0\n"
            "t_bytes_total{cluster=\"c\\\\d\",direction=\"to_server\"} 0\n"
            "# HELP t_failures_total Failures, by type.\n"
            "# TYPE t_failures_total counter\n"
            "t_failures_total{cluster=\"a\\\"b\",type=\"timeout\"} 2\n"
            "# HELP t_in_flight In flight now.\n"
            "# TYPE t_in_flight gauge\n"
            "t_in_flight{cluster=\"a\\\"b\"} 0\n"
            "t_in_flight{cluster=\"c\\\\d\"} 4\n");
}

TEST(CounterExpositionTest, JsonHasAMemberPerFieldAndFailuresByType) {
  Exposed a;
  a.requests = 5;
  a.failed.Add(Failure::kDns);
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  AddCounterJson(j, Exposed::kCounterSpecs, a.CounterValues());
  EXPECT_EQ(j.dump(),
            R"({"requests":5,"to_client":0,"to_server":0,"failed":{"dns":1},"in_flight":0})");
}

TEST(CounterExpositionTest, HelpTextIsEscaped) {
  PrometheusText out;
  out.Family("x_total", "counter", "a \\ b\nc");
  EXPECT_EQ(out.text(), "# HELP x_total a \\\\ b\\nc\n# TYPE x_total counter\n");
}

}  // namespace
}  // namespace hammer::stats
