#include "hammer/load/load_counters.h"

#include <gtest/gtest.h>

#include "hammer/stats/counter_exposition.h"

namespace hammer::load {
namespace {

TEST(LoadCountersTest, TheTableKeepsTheRules) {
  Status table = CheckCounterSpecs(LoadCounters::kCounterSpecs);
  EXPECT_TRUE(table.ok()) << table.message();
}

TEST(LoadCountersTest, LateIsBothReasonsAndEachIsASampleOfOneFamily) {
  LoadCounters c;
  c.late_no_slot = 2;
  c.late_behind = 3;
  EXPECT_EQ(c.late(), 5u);
  stats::PrometheusText out;
  stats::AppendCounterFamilies(out, LoadCounters::kCounterSpecs, c.CounterValues());
  EXPECT_NE(out.text().find("hammer_load_late_total{reason=\"no_slot\"} 2\n"
                            "hammer_load_late_total{reason=\"behind\"} 3\n"),
            std::string::npos)
      << out.text();
}

}  // namespace
}  // namespace hammer::load
