// ConnectionTable (server_connection.h): the listener's owner of its connections.
#include <memory>
#include <utility>
#include <vector>

#include "hammer/http/server_connection.h"

namespace hammer::http {

ConnectionTable::~ConnectionTable() {
  // Destroyed with the listener: connections go without touching the table.
  auto all = std::move(all_);
  all_.clear();
}

std::vector<ServerConnection*> ConnectionTable::All() const {
  std::vector<ServerConnection*> out;
  out.reserve(all_.size());
  for (const auto& [connection, owned] : all_)
    out.push_back(connection);
  return out;
}

void ConnectionTable::Add(std::unique_ptr<ServerConnection> connection) {
  ServerConnection* raw = connection.get();
  all_.emplace(raw, std::move(connection));
}

void ConnectionTable::Remove(ServerConnection* connection, net::EventLoop* loop) {
  auto it = all_.find(connection);
  if (it == all_.end()) return;
  std::unique_ptr<ServerConnection> owned = std::move(it->second);
  all_.erase(it);
  loop->DeleteLater(std::move(owned));
}

}  // namespace hammer::http
