// ConnectionTable's waiting queue: oldest first, whatever order connections come back to waiting
// in, since the listener evicts its front at the connection cap.
#include "hammer/http/connection_table.h"

#include <gtest/gtest.h>

#include <memory>

namespace hammer::http {
namespace {

class Connection final : public ConnectionTable::Entry {
 public:
  void Evict() override {}
  void Drain() override {}
};

class ConnectionTableTest : public ::testing::Test {
 protected:
  Connection* Add() {
    auto connection = std::make_unique<Connection>();
    Connection* raw = connection.get();
    table_.Add(std::move(connection));
    return raw;
  }

  ConnectionTable table_;
};

TEST_F(ConnectionTableTest, TheOldestWaitingConnectionIsFirst) {
  Connection* a = Add();
  Connection* b = Add();
  EXPECT_EQ(table_.oldest_waiting(), nullptr);
  table_.StartWaiting(a, 10);
  table_.StartWaiting(b, 20);
  EXPECT_EQ(table_.oldest_waiting(), a);
  EXPECT_EQ(a->waiting_since, 10);
  table_.StopWaiting(a);
  EXPECT_EQ(table_.oldest_waiting(), b);
  table_.StopWaiting(b);
  EXPECT_EQ(table_.oldest_waiting(), nullptr);
  EXPECT_EQ(table_.size(), 2u);
}

TEST_F(ConnectionTableTest, AConnectionThatWaitsAnewGoesToTheBack) {
  Connection* a = Add();
  Connection* b = Add();
  table_.StartWaiting(a, 10);
  table_.StartWaiting(b, 20);
  table_.StartWaiting(a, 10);  // still the same wait: it keeps its place
  EXPECT_EQ(table_.oldest_waiting(), a);
  table_.StartWaiting(a, 30);  // answered, then waiting for its next request
  EXPECT_EQ(table_.oldest_waiting(), b);
  EXPECT_EQ(a->waiting_since, 30);
}

TEST_F(ConnectionTableTest, ARemovedConnectionLeavesTheQueue) {
  net::EventLoop loop;
  ASSERT_TRUE(loop.Init().ok());
  Connection* a = Add();
  Connection* b = Add();
  table_.StartWaiting(a, 10);
  table_.StartWaiting(b, 20);
  table_.Remove(a, &loop);  // destroyed after the loop's iteration
  EXPECT_EQ(table_.oldest_waiting(), b);
  EXPECT_EQ(table_.size(), 1u);
}

}  // namespace
}  // namespace hammer::http
