// Name resolution that never blocks an event loop.
//
// Resolver runs getaddrinfo on its own worker thread(s), started by the first lookup, and is
// shared by every loop (it is thread-safe). HostCache is per loop (not thread-safe): it answers IP
// literals and fresh cache entries at once, coalesces concurrent lookups of one name, and delivers
// results on the loop's thread. getaddrinfo gives no TTL, so entries live for a fixed time (60 s
// default). The Resolver must outlive every HostCache using it and must be destroyed after the
// loops stop running; it joins its threads when destroyed.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/socket.h"

namespace hammer::net {

using AddressList = std::vector<SocketAddress>;  // ports are 0; callers set their own

class Resolver {
 public:
  explicit Resolver(size_t threads = 1);
  ~Resolver();
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  // Resolves `host` on a worker thread, then posts `done` to `loop`.
  void Lookup(std::string host, EventLoop* loop, std::function<void(Result<AddressList>)> done);

  // Blocking lookup (getaddrinfo); used by worker threads and by start-up code.
  static Result<AddressList> LookupNow(const std::string& host);

  // The threads started so far: none before the first Lookup.
  size_t started_threads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return workers_.size();
  }

 private:
  struct Job {
    std::string host;
    EventLoop* loop;
    std::function<void(Result<AddressList>)> done;
  };
  void WorkerMain();

  const size_t threads_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // started by the first Lookup
};

class HostCache {
 public:
  using Callback = std::function<void(const Result<AddressList>&)>;

  HostCache(EventLoop* loop, Resolver* resolver, Nanos ttl = 60 * kSecond);

  // The addresses of `host` if known now (an IP literal, or cached and fresh); else nullptr.
  const Result<AddressList>* Find(const std::string& host);
  // Starts (or joins) a lookup; `callback` runs later on the loop's thread, never inline.
  void Fetch(const std::string& host, Callback callback);

 private:
  struct Entry {
    Result<AddressList> addresses = Status::Error("pending");
    MonoNanos expires = 0;
    bool pending = false;
    std::vector<Callback> waiters;
  };

  EventLoop* loop_;
  Resolver* resolver_;
  Nanos ttl_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace hammer::net
