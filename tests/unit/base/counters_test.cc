#include "hammer/base/counters.h"

#include <gtest/gtest.h>

namespace hammer {
namespace {

#define TEST_COUNTERS(X)                                                                 \
  X(requests, kCounter, "t_requests_total", "", "Requests.")                             \
  X(in_flight, kGauge, "t_in_flight", "", "In flight now.")                              \
  X(to_client, kCounter, "t_bytes_total", "direction=to_client", "Bytes, by direction.") \
  X(to_server, kCounter, "t_bytes_total", "direction=to_server", "")                     \
  X(failed, kByFailure, "t_failures_total", "", "Failures, by type.")

struct PlainCounters {
  HAMMER_PLAIN_COUNTERS(TEST_COUNTERS)
};
struct AtomicCounters {
  HAMMER_ATOMIC_COUNTERS(TEST_COUNTERS)
};

TEST(CountersTest, ValuesFollowTheTableWithAFailureEntryAsOneValuePerType) {
  PlainCounters c;
  c.requests = 7;
  c.in_flight = 2;
  c.to_client = 30;
  c.to_server = 40;
  c.failed.Add(Failure::kTimeout, 3);
  std::vector<uint64_t> values = c.CounterValues();
  ASSERT_EQ(values.size(), 4 + kFailureCount);
  ASSERT_EQ(CounterValueCount(PlainCounters::kCounterSpecs), values.size());
  EXPECT_EQ(values[0], 7u);
  EXPECT_EQ(values[1], 2u);
  EXPECT_EQ(values[2], 30u);
  EXPECT_EQ(values[3], 40u);
  EXPECT_EQ(values[4 + static_cast<size_t>(Failure::kTimeout)], 3u);
  EXPECT_EQ(PlainCounters::kCounterSpecs[2].label_name(), "direction");
  EXPECT_EQ(PlainCounters::kCounterSpecs[2].label_value(), "to_client");
}

TEST(CountersTest, PlainCountersMergeEveryField) {
  PlainCounters a, b;
  a.requests = 1;
  a.failed.Add(Failure::kDns);
  b.requests = 2;
  b.to_server = 5;
  b.failed.Add(Failure::kDns, 2);
  a.MergeCounters(b);
  EXPECT_EQ(a.requests, 3u);
  EXPECT_EQ(a.to_server, 5u);
  EXPECT_EQ(a.failed.Get(Failure::kDns), 3u);
}

TEST(CountersTest, AtomicCountersReadAsThePlainOnes) {
  AtomicCounters c;
  Bump(c.requests, 4);
  Bump(c.in_flight, 3);
  Drop(c.in_flight);
  Bump(c.failed[static_cast<size_t>(Failure::kReset)]);
  std::vector<uint64_t> values = c.CounterValues();
  EXPECT_EQ(values[0], 4u);
  EXPECT_EQ(values[1], 2u);
  EXPECT_EQ(values[4 + static_cast<size_t>(Failure::kReset)], 1u);
  std::vector<uint64_t> sum;
  AddCounterValues(sum, values);
  AddCounterValues(sum, values);
  EXPECT_EQ(sum[0], 8u);
}

TEST(CountersTest, TheTestTableKeepsTheRules) {
  EXPECT_TRUE(CheckCounterSpecs(PlainCounters::kCounterSpecs).ok());
}

TEST(CountersTest, BrokenTablesAreNamed) {
  auto broken = [](std::vector<CounterSpec> specs) {
    Status s = CheckCounterSpecs(specs);
    return s.ok() ? std::string() : s.message();
  };
  using K = CounterKind;
  EXPECT_NE(broken({{"a", K::kCounter, "a_count", "", "A."}}).find("without _total"),
            std::string::npos);
  EXPECT_NE(broken({{"a", K::kGauge, "a_total", "", "A."}}).find("gauge named _total"),
            std::string::npos);
  EXPECT_NE(broken({{"a", K::kCounter, "a_total", "", ""}}).find("no help"), std::string::npos);
  EXPECT_NE(broken({{"a", K::kCounter, "x_total", "d=1", "X."},
                    {"b", K::kCounter, "y_total", "", "Y."},
                    {"c", K::kCounter, "x_total", "d=2", "X again."}})
                .find("apart"),
            std::string::npos);
  EXPECT_NE(broken({{"a", K::kCounter, "x_total", "d=1", "X."},
                    {"b", K::kCounter, "x_total", "d=2", "again"}})
                .find("help on an entry"),
            std::string::npos);
  EXPECT_NE(
      broken({{"a", K::kCounter, "x_total", "d=1", "X."}, {"b", K::kCounter, "x_total", "d=1", ""}})
          .find("two entries with one label"),
      std::string::npos);
  EXPECT_NE(broken({{"a", K::kCounter, "x_total", "d", "X."}}).find("name=value"),
            std::string::npos);
  EXPECT_NE(broken({{"a", K::kCounter, "x-y_total", "", "X."}}).find("no valid name"),
            std::string::npos);
}

}  // namespace
}  // namespace hammer
