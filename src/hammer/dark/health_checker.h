// HealthChecker: active health checks of `hammer dark`'s regular instances (--health-check
// PATH), as Envoy's health_checks and nginx's health_check do.
//
// Every `interval`, each instance of the pool's current set gets `GET PATH` with its URL's
// Host, sent to it as the user traffic is (its pinned address, HTTP/1.1 or HTTP/2, TLS: the
// ClientOptions given, keep-alive), and passes when a status within [status_min, status_max]
// comes within `timeout`. A healthy instance becomes unhealthy after unhealthy_threshold
// failures in a row, an unhealthy one healthy after healthy_threshold passes in a row; a new
// instance (unchecked: the pool does not choose it) is checked as soon as it appears and
// judged by its first check. The verdict is written into the UpstreamInstance, where every
// loop's picks read it (UpstreamPool leaves unhealthy instances out, and takes all of them
// when none is available). Checks are counted in the pool's UpstreamCounters.
//
// One checker per proxy, on one loop: N loops do not multiply the check traffic. A check in
// flight is never doubled: an instance slower than the interval is checked again once its
// check has ended.
//
// Ownership and threading: the pool must outlive the checker. Construct it anywhere; Start()
// and the destructor on its loop's thread (or the destructor after the loop has stopped).
// Notify() may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "hammer/dark/dark_options.h"
#include "hammer/dark/upstream_pool.h"
#include "hammer/http/client.h"
#include "hammer/net/event_loop.h"

namespace hammer::dark {

class HealthChecker {
 public:
  HealthChecker(net::EventLoop* loop, net::Resolver* resolver, UpstreamPool* pool,
                HealthCheckOptions options, http::ClientOptions client);
  ~HealthChecker();
  HealthChecker(const HealthChecker&) = delete;
  HealthChecker& operator=(const HealthChecker&) = delete;

  // Checks every instance now, then every interval.
  void Start();
  // The set has changed: its new instances are checked at once (on the loop, later).
  void Notify();

 private:
  class Check;

  void Round();  // the interval's checks
  void Sync();   // new instances checked now, removed ones forgotten
  void Send(Check& check);
  void Judge(Check& check, bool passed);
  void Forget(const UpstreamInstance* instance);  // its check is not in flight

  net::EventLoop* loop_;
  UpstreamPool* pool_;
  const HealthCheckOptions options_;
  std::unique_ptr<http::HttpClient> client_;
  net::Timer timer_;
  std::unordered_map<const UpstreamInstance*, std::unique_ptr<Check>> checks_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for tasks posted by Notify
};

}  // namespace hammer::dark
