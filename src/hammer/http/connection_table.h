// ConnectionTable: every open connection of one HttpListener (internal to hammer/http), and the
// connections waiting for their client, in two queues, oldest first: idle keep-alive connections
// (nothing of a next request has arrived) and connections whose request head (or TLS handshake)
// is still coming in. They are the candidates for eviction at the connection cap, in that order,
// as nginx reuses its idle and header-waiting connections when worker_connections run out: an
// idle connection costs its client nothing it has sent, and the oldest head still trickling in
// is the likeliest to be a slowloris.
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

    IntrusiveLink<Entry> waiting_link;  // in one of the waiting queues
    MonoNanos waiting_since = 0;        // when it began waiting (while in a queue)
    bool waiting_for_head = false;      // in the queue of heads (else idle, while in a queue)
  };

  ConnectionTable() = default;
  ~ConnectionTable();
  ConnectionTable(const ConnectionTable&) = delete;
  ConnectionTable& operator=(const ConnectionTable&) = delete;

  void Add(std::unique_ptr<Entry> connection);
  // Hands the connection to DeleteLater (it has closed itself); it leaves the waiting queue.
  void Remove(Entry* connection, net::EventLoop* loop);
  // The connection waits for its client since `since`, idle or for the rest of a head: it joins
  // the back of that queue, or moves there when it waits anew, so each queue stays oldest first.
  void StartWaiting(Entry* connection, bool for_head, MonoNanos since);
  void StopWaiting(Entry* connection) { QueueOf(connection).Remove(connection); }
  // The connection to evict at the cap: the oldest idle one, else the oldest waiting for a head;
  // null when none waits (every connection is being served).
  Entry* EvictionCandidate() const { return idle_.empty() ? heads_.front() : idle_.front(); }
  size_t size() const { return all_.size(); }
  std::vector<Entry*> All() const;

 private:
  std::unordered_map<Entry*, std::unique_ptr<Entry>> all_;
  using Queue = IntrusiveList<Entry, &Entry::waiting_link>;
  Queue& QueueOf(Entry* connection) { return connection->waiting_for_head ? heads_ : idle_; }

  Queue idle_;
  Queue heads_;
};

}  // namespace hammer::http
