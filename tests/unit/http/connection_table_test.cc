// ConnectionTable's waiting queues: each oldest first, whatever order connections come back to
// waiting in, and idle connections before heads, since the listener evicts the candidate at the
// connection cap.
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

constexpr bool kHead = true;
constexpr bool kIdle = false;

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

TEST_F(ConnectionTableTest, TheOldestWaitingConnectionIsTheCandidate) {
  Connection* a = Add();
  Connection* b = Add();
  EXPECT_EQ(table_.EvictionCandidate(), nullptr);
  table_.StartWaiting(a, kHead, 10);
  table_.StartWaiting(b, kHead, 20);
  EXPECT_EQ(table_.EvictionCandidate(), a);
  EXPECT_EQ(a->waiting_since, 10);
  table_.StopWaiting(a);
  EXPECT_EQ(table_.EvictionCandidate(), b);
  table_.StopWaiting(b);
  EXPECT_EQ(table_.EvictionCandidate(), nullptr);
  EXPECT_EQ(table_.size(), 2u);
}

TEST_F(ConnectionTableTest, AConnectionThatWaitsAnewGoesToTheBack) {
  Connection* a = Add();
  Connection* b = Add();
  table_.StartWaiting(a, kHead, 10);
  table_.StartWaiting(b, kHead, 20);
  table_.StartWaiting(a, kHead, 10);  // still the same wait: it keeps its place
  EXPECT_EQ(table_.EvictionCandidate(), a);
  table_.StartWaiting(a, kHead, 30);  // answered, then waiting for its next request
  EXPECT_EQ(table_.EvictionCandidate(), b);
  EXPECT_EQ(a->waiting_since, 30);
}

TEST_F(ConnectionTableTest, IdleConnectionsAreCandidatesBeforeHeadsWhateverTheirAge) {
  Connection* head = Add();
  Connection* idle = Add();
  table_.StartWaiting(head, kHead, 10);
  table_.StartWaiting(idle, kIdle, 50);
  EXPECT_EQ(table_.EvictionCandidate(), idle);
  table_.StartWaiting(idle, kHead, 50);  // the next head began arriving: it changes queue
  EXPECT_EQ(table_.EvictionCandidate(), head);
  EXPECT_TRUE(idle->waiting_for_head);
  table_.StopWaiting(head);
  EXPECT_EQ(table_.EvictionCandidate(), idle);
  table_.StopWaiting(idle);
  EXPECT_EQ(table_.EvictionCandidate(), nullptr);
}

TEST_F(ConnectionTableTest, ARemovedConnectionLeavesTheQueue) {
  net::EventLoop loop;
  ASSERT_TRUE(loop.Init().ok());
  Connection* a = Add();
  Connection* b = Add();
  table_.StartWaiting(a, kHead, 10);
  table_.StartWaiting(b, kHead, 20);
  table_.Remove(a, &loop);  // destroyed after the loop's iteration
  EXPECT_EQ(table_.EvictionCandidate(), b);
  EXPECT_EQ(table_.size(), 1u);
}

}  // namespace
}  // namespace hammer::http
