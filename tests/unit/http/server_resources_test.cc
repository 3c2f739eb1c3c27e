// The pure decisions behind the server's limits, with time passed in (no clocks, no sockets).
#include "hammer/http/server_resources.h"

#include <gtest/gtest.h>

namespace hammer::http {
namespace {

constexpr MonoNanos kT0 = 1000 * kSecond;

TEST(HeadDeadlineTest, TheFirstHeadCountsFromTheAcceptAndBytesDoNotExtendIt) {
  HeadClock clock;
  clock.accepted = kT0;
  EXPECT_EQ(HeadDeadline(clock, 10 * kSecond, 120 * kSecond), kT0 + 10 * kSecond);
  clock.head_started = kT0 + 9 * kSecond;  // a first byte late does not buy more time
  EXPECT_EQ(HeadDeadline(clock, 10 * kSecond, 120 * kSecond), kT0 + 10 * kSecond);
}

TEST(HeadDeadlineTest, LaterHeadsAreIdleUntilTheirFirstByteThenHaveTheHeaderTimeout) {
  HeadClock clock;
  clock.accepted = kT0;
  clock.first_request = false;
  clock.idle_since = kT0 + 30 * kSecond;  // the previous answer
  EXPECT_EQ(HeadDeadline(clock, 10 * kSecond, 120 * kSecond), kT0 + 150 * kSecond);
  clock.head_started = kT0 + 100 * kSecond;
  EXPECT_EQ(HeadDeadline(clock, 10 * kSecond, 120 * kSecond), kT0 + 110 * kSecond);
}

TEST(DefaultMaxConnectionsTest, LeavesAReserveAndSharesTheRestPerConnection) {
  EXPECT_EQ(DefaultMaxConnections(1024, 1), 1024u - 64);
  EXPECT_EQ(DefaultMaxConnections(1024, 3), (1024u - 64) / 3);
  EXPECT_EQ(DefaultMaxConnections(1 << 20, 3), ((1u << 20) - 64) / 3);
  EXPECT_EQ(DefaultMaxConnections(100, 1), 50u);  // tiny limits keep half for the rest
  EXPECT_EQ(DefaultMaxConnections(10, 3), 16u);   // never below a usable minimum
}

TEST(ServerResourcesTest, ConnectionSlotsStopAtTheCap) {
  ServerResources resources({.max_connections = 2, .max_buffered_bytes = 0});
  EXPECT_TRUE(resources.TryOpenConnection());
  EXPECT_TRUE(resources.TryOpenConnection());
  EXPECT_FALSE(resources.TryOpenConnection());
  EXPECT_EQ(resources.open_connections(), 2u);
  EXPECT_EQ(resources.accepted_connections(), 2u);
  resources.CloseConnection();
  EXPECT_TRUE(resources.TryOpenConnection());
  EXPECT_EQ(resources.accepted_connections(), 3u);
  resources.Count(Rejection::kConnectionLimit);
  resources.Count(Rejection::kConnectionLimit);
  EXPECT_EQ(resources.rejected(Rejection::kConnectionLimit), 2u);
  EXPECT_EQ(resources.rejected(Rejection::kEvicted), 0u);
}

TEST(ServerResourcesTest, EveryRejectionHasAMetricName) {
  for (size_t i = 0; i < kRejectionCount; ++i) {
    std::string_view name = RejectionName(static_cast<Rejection>(i));
    EXPECT_NE(name, "unknown");
    EXPECT_EQ(name.find(' '), std::string_view::npos);
  }
  EXPECT_EQ(RejectionName(Rejection::kHeaderTimeout), "header_timeout");
  EXPECT_EQ(RejectionName(Rejection::kOverBudget), "over_budget");
}

TEST(BufferBudgetTest, ChargesFollowTheirHoldersAndComeBackWhenTheyGo) {
  BufferBudget budget(100);
  {
    BufferCharge a(&budget);
    BufferCharge b(&budget);
    a.Set(60);
    EXPECT_EQ(budget.used(), 60u);
    EXPECT_FALSE(budget.exhausted());
    EXPECT_TRUE(budget.WouldExceed(41));
    EXPECT_FALSE(budget.WouldExceed(40));
    b.Set(40);
    EXPECT_TRUE(budget.exhausted());
    a.Set(10);  // a holder shrinks
    EXPECT_EQ(budget.used(), 50u);
    BufferCharge moved = std::move(b);
    EXPECT_EQ(budget.used(), 50u);  // moving a charge keeps it counted once
  }
  EXPECT_EQ(budget.used(), 0u);
  BufferBudget unlimited(0);
  BufferCharge big(&unlimited);
  big.Set(1ull << 40);
  EXPECT_FALSE(unlimited.exhausted());
  EXPECT_FALSE(unlimited.WouldExceed(1ull << 40));
  EXPECT_EQ(unlimited.used(), 1ull << 40);
  BufferCharge none;  // no budget: nothing to charge
  none.Set(5);
  EXPECT_EQ(none.charged(), 0u);
}

}  // namespace
}  // namespace hammer::http
