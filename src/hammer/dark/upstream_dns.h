// UpstreamDns: the regular instances behind --upstream URLs that name a host rather than an
// IP: each address the name resolves to is an instance of its own (the URL's Host header and
// TLS name, that address for its connections), as Envoy's STRICT_DNS clusters see the pods of
// a Kubernetes headless Service.
//
// Each name is resolved by Start(), then again every `interval` on a thread of this object's
// own, and its addresses replace that URL's instances in the pool (UpstreamPool::SetInstances:
// an address still listed keeps its instance, state and connections; one no longer listed is
// drained; a new one is added). A lookup that fails changes nothing: the addresses found last
// stay in force (counted as the pool's dns_failures); a name that has never resolved has no
// instances until it does.
//
// Threading: Start() and the destructor on one thread (the proxy group's); the lookups run on
// this object's thread. The destructor waits for a lookup in progress (getaddrinfo cannot be
// interrupted). The pool must outlive it.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/dark/upstream_pool.h"

namespace hammer::dark {

class UpstreamDns {
 public:
  struct Name {
    size_t source;  // the pool's source number of this URL
    http::Url url;
    uint32_t weight = 1;
  };

  UpstreamDns(UpstreamPool* pool, std::vector<Name> names, Nanos interval);
  ~UpstreamDns();
  UpstreamDns(const UpstreamDns&) = delete;
  UpstreamDns& operator=(const UpstreamDns&) = delete;

  // Resolves every name once, now, then starts the thread. Returns one message per name that
  // did not resolve (the proxy starts anyway; those names are looked up again each interval).
  std::vector<std::string> Start();

 private:
  Status Resolve(const Name& name);
  void Run();

  UpstreamPool* pool_;
  const std::vector<Name> names_;
  const Nanos interval_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace hammer::dark
