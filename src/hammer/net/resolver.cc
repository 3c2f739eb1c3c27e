#include "hammer/net/resolver.h"

#include <netdb.h>

#include <algorithm>
#include <system_error>
#include <utility>

namespace hammer::net {

Resolver::Resolver(size_t threads) : threads_(threads) {}

Resolver::~Resolver() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    jobs_.clear();
  }
  wake_.notify_all();
  for (std::thread& worker : workers_)
    worker.join();
}

void Resolver::Lookup(std::string host, EventLoop* loop,
                      std::function<void(Result<AddressList>)> done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The threads start with the first lookup: a run of IP literals has none to start, wake and
    // join (joining a thread asleep took up to a millisecond at a run's end here).
    try {
      while (workers_.size() < threads_)
        workers_.emplace_back([this] { WorkerMain(); });
    } catch (const std::system_error& e) {
      if (workers_.empty() && threads_ > 0) {
        // No thread to look the name up on: the lookup fails, answered as results are.
        std::string message =
            "resolve '" + host + "': no thread to look it up on (" + e.what() + ")";
        loop->Post([done = std::move(done), message = std::move(message)]() mutable {
          done(Status::Error(message));
        });
        return;
      }
    }
    jobs_.push_back(Job{std::move(host), loop, std::move(done)});
  }
  wake_.notify_one();
}

void Resolver::WorkerMain() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    Result<AddressList> result = LookupNow(job.host);
    job.loop->Post([done = std::move(job.done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  }
}

Result<AddressList> Resolver::LookupNow(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* info = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &info);
  if (rc != 0) return Status::Error("resolve '" + host + "': " + gai_strerror(rc));
  AddressList addresses;
  for (addrinfo* ai = info; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6) {
      addresses.emplace_back(ai->ai_addr, ai->ai_addrlen);
    }
  }
  freeaddrinfo(info);
  if (addresses.empty()) return Status::Error("resolve '" + host + "': no IPv4/IPv6 address");
  return addresses;
}

HostCache::HostCache(EventLoop* loop, Resolver* resolver, Nanos ttl)
    : loop_(loop), resolver_(resolver), ttl_(ttl) {}

const Result<AddressList>* HostCache::Find(const std::string& host) {
  auto it = entries_.find(host);
  if (it != entries_.end()) {
    Entry& entry = it->second;
    if (!entry.pending && entry.expires > loop_->now()) return &entry.addresses;
    return nullptr;
  }
  // IP literals never expire and never need a lookup.
  Result<SocketAddress> literal = SocketAddress::FromIp(host, 0);
  if (!literal.ok()) return nullptr;
  Entry& entry = entries_[host];
  entry.addresses = AddressList{*literal};
  entry.expires = INT64_MAX;
  return &entry.addresses;
}

void HostCache::Fetch(const std::string& host, Callback callback) {
  Entry& entry = entries_[host];
  entry.waiters.push_back(std::move(callback));
  if (entry.pending) return;
  entry.pending = true;
  resolver_->Lookup(host, loop_, [this, host](Result<AddressList> result) {
    Entry& done = entries_[host];
    done.addresses = std::move(result);
    done.pending = false;
    // Failures are cached briefly (a second, or the TTL if shorter) so a dead name does not
    // become a lookup storm.
    done.expires = loop_->now() + (done.addresses.ok() ? ttl_ : std::min(ttl_, kSecond));
    std::vector<Callback> waiters = std::move(done.waiters);
    done.waiters.clear();
    for (Callback& waiter : waiters)
      waiter(done.addresses);
  });
}

}  // namespace hammer::net
