// ConnectionTable: every open connection of one HttpListener (internal to hammer/http), and the
// queue of those waiting for their client, oldest first: the candidates for eviction at the
// connection cap (see DecideAdmission in server_resources.h).
//
// Ownership: the table owns its connections. A connection closes itself and is then removed,
// which hands it to EventLoop::DeleteLater (never destroyed inside its own callback). Destroyed
// with its listener, the table destroys the connections still open. Threading: the listener's
// loop thread only.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/intrusive_list.h"
#include "hammer/net/event_loop.h"

namespace hammer::http {

class ConnectionTable {
 public:
  // A connection as its listener sees it.
  class Entry : public net::Deletable {
   public:
    // Closed to admit a new connection at the connection cap (counted as kEvicted).
    virtual void Evict() = 0;
    // The listener is draining: an idle connection closes now; a busy one once its requests
    // are answered, saying so ("Connection: close", GOAWAY).
    virtual void Drain() = 0;

    IntrusiveLink<Entry> waiting_link;  // in the waiting queue
    MonoNanos waiting_since = 0;        // when it began waiting (while in the queue)
  };

  ConnectionTable() = default;
  ~ConnectionTable();
  ConnectionTable(const ConnectionTable&) = delete;
  ConnectionTable& operator=(const ConnectionTable&) = delete;

  void Add(std::unique_ptr<Entry> connection);
  // Hands the connection to DeleteLater (it has closed itself); it leaves the waiting queue.
  void Remove(Entry* connection, net::EventLoop* loop);
  // The connection waits for its client since `since`: it joins the back of the queue, or
  // moves there when it waits anew (a later `since`), so the queue stays oldest first.
  void StartWaiting(Entry* connection, MonoNanos since) {
    if (decltype(waiting_)::Contains(*connection)) {
      if (connection->waiting_since == since) return;
      waiting_.Remove(connection);
    }
    connection->waiting_since = since;
    waiting_.PushBack(connection);
  }
  void StopWaiting(Entry* connection) { waiting_.Remove(connection); }
  Entry* oldest_waiting() const { return waiting_.front(); }
  size_t size() const { return all_.size(); }
  std::vector<Entry*> All() const;

 private:
  std::unordered_map<Entry*, std::unique_ptr<Entry>> all_;
  IntrusiveList<Entry, &Entry::waiting_link> waiting_;
};

}  // namespace hammer::http
