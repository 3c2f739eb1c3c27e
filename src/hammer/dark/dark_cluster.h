// DarkCluster: one dark cluster as one event loop sees it. It holds the cluster's shape (Ns,
// Nd, multiplier, target rate) and instances from the latest membership snapshot, its fork
// strategy's state (the relative strategy's fractional credit, the constant-qps feeder), its
// own HttpClient (own connection pools: isolation from the regular side), the number of its
// copies in flight and its back-off after refused connections.
//
// A cluster keeps its state across membership changes (Apply); one that leaves the snapshot
// stops its constant-qps schedule (Deactivate) but is kept, with its counters' slot, because
// copies in flight point to it.
//
// Ownership: owned by DarkProxyHandler and destroyed only with it, after every copy that
// points to it has finished or been abandoned. Threading: the handler's loop thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/failure.h"
#include "hammer/dark/cluster_shape.h"
#include "hammer/dark/constant_qps_feeder.h"
#include "hammer/dark/dark_options.h"
#include "hammer/dark/fork_strategy.h"
#include "hammer/dark/membership.h"
#include "hammer/http/client.h"

namespace hammer::dark {

// Whether a copy may be sent now.
enum class CopyAdmission : uint8_t {
  kSend,
  kNoInstances,  // the cluster has no instance to send to (not counted)
  kBudgetFull,   // --dark-max-in-flight copies already in flight: dropped and counted
  kBackingOff,   // connections were refused just before: not tried, counted
};

class DarkCluster {
 public:
  // `send` is how the constant-qps feeder sends a stored request to this cluster.
  using SendStoredFn = std::function<void(DarkCluster& cluster, const StoredRequest& request)>;

  // `client_options` configure the cluster's own HttpClient (timeouts, TLS).
  DarkCluster(std::string name, size_t index, net::EventLoop* loop, net::Resolver* resolver,
              const http::ClientOptions& client_options);

  // Takes the cluster's config, size and instances from a membership snapshot. `bernoulli`
  // forces rest.li's coin per request; `seeds` gives new strategy state its random seed.
  void Apply(const DarkClusterMembership& membership, uint32_t regular_instances, bool bernoulli,
             std::mt19937_64& seeds, const SendStoredFn& send);
  // The cluster left the snapshot: its constant-qps schedule stops.
  void Deactivate() { constant_qps_.reset(); }

  // How many copies one request gets (relative and identical strategies).
  uint32_t CopiesFor(const IdenticalSelector& identical);
  // constant-qps: the request is kept for the cluster's own schedule.
  void OfferForSchedule(const http::IncomingRequest& request);

  CopyAdmission Admit(uint32_t max_in_flight, MonoNanos now) const;
  // The next instance, round robin. Only after Admit() said kSend.
  const http::Url& NextUrl() { return urls_[next_url_++ % urls_.size()]; }
  // Book-keeping around one copy: started, then ended with its transport failure (if any) and
  // whether its HTTP answer counts as a success. Refused connections back the cluster off.
  void CopyStarted() { ++in_flight_; }
  void CopyEnded(std::optional<Failure> transport_failure);
  // A copy abandoned when the proxy stopped (no back-off bookkeeping).
  void CopyAbandoned() { --in_flight_; }

  const std::string& name() const { return name_; }
  size_t index() const { return index_; }
  ForkStrategyKind strategy() const { return strategy_; }
  const std::string& dark_header() const { return dark_header_; }
  http::HttpClient& client() { return *client_; }
  uint32_t in_flight() const { return in_flight_; }

 private:
  std::string name_;
  size_t index_;  // counter slot (ClusterRegistry)
  net::EventLoop* loop_;
  ClusterShape shape_;
  ForkStrategyKind strategy_ = ForkStrategyKind::kRelative;
  std::vector<http::Url> urls_;               // the dark instances, round robin
  std::unique_ptr<http::HttpClient> client_;  // own pools: isolation from the regular side
  std::optional<RelativeStrategy> relative_;
  bool bernoulli_ = false;
  std::unique_ptr<ConstantQpsFeeder> constant_qps_;
  std::string dark_header_;  // "X-Hammer-Dark: <name>"
  size_t next_url_ = 0;
  uint32_t in_flight_ = 0;
  // Back-off after refused connections, so a dead dark cluster costs the user path nothing:
  // after kRefusalsToBackOff refusals in a row, no copy is tried until `back_off_until_`.
  uint32_t refusals_in_row_ = 0;
  MonoNanos back_off_until_ = 0;
  Nanos back_off_ = 0;
};

}  // namespace hammer::dark
