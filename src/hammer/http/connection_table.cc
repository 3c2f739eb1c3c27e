#include "hammer/http/connection_table.h"

#include <utility>

namespace hammer::http {

ConnectionTable::~ConnectionTable() {
  // Destroyed with the listener: connections go without touching the table.
  auto all = std::move(all_);
  all_.clear();
}

std::vector<ConnectionTable::Entry*> ConnectionTable::All() const {
  std::vector<Entry*> out;
  out.reserve(all_.size());
  for (const auto& [connection, owned] : all_)
    out.push_back(connection);
  return out;
}

void ConnectionTable::Add(std::unique_ptr<Entry> connection) {
  Entry* raw = connection.get();
  all_.emplace(raw, std::move(connection));
}

void ConnectionTable::StartWaiting(Entry* connection, bool for_head, MonoNanos since) {
  if (Queue::Contains(*connection)) {
    if (connection->waiting_for_head == for_head && connection->waiting_since == since) return;
    QueueOf(connection).Remove(connection);
  }
  connection->waiting_for_head = for_head;
  connection->waiting_since = since;
  QueueOf(connection).PushBack(connection);
}

void ConnectionTable::Remove(Entry* connection, net::EventLoop* loop) {
  StopWaiting(connection);
  auto it = all_.find(connection);
  if (it == all_.end()) return;
  std::unique_ptr<Entry> owned = std::move(it->second);
  all_.erase(it);
  loop->DeleteLater(std::move(owned));
}

}  // namespace hammer::http
