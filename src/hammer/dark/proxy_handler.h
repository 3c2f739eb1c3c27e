// DarkProxyHandler: one event loop's share of `hammer dark`.
//
// Every request received is sent to a regular upstream (round robin) and its response is
// returned to the client unchanged (hop-by-hop headers aside); an unreachable upstream gives
// 502, a timeout 504, and the failure is counted. Independently, eligible requests are copied
// to the dark clusters as the fork strategy decides; copies carry `X-Hammer-Dark: <cluster>`,
// go through their own HttpClient (own connection pools), count against a per-cluster
// in-flight budget (a full budget drops the copy and counts it), have their own timeout, and
// their responses are read and discarded — or kept, bounded, for comparison. Nothing on the
// dark side can delay, alter or fail the client's response: the copies are started after the
// regular request and never awaited.
//
// Threading: everything runs on the handler's loop; counters are read by the admin listener
// through DarkLoopCounters (relaxed atomics). Which dark clusters exist and their shapes (Ns,
// Nd, multiplier, strategy, instances) come from a Membership snapshot, checked once per
// request with one atomic load; a new version re-shapes the clusters without losing their
// fractional credit, in-flight copies or pools. Clusters get stable indices from a shared
// ClusterRegistry so every loop counts the same cluster in the same slot.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "hammer/dark/comparison_report.h"
#include "hammer/dark/dark_metrics.h"
#include "hammer/dark/dark_options.h"
#include "hammer/dark/eligibility.h"
#include "hammer/dark/fork_strategy.h"
#include "hammer/dark/json_diff.h"
#include "hammer/dark/membership.h"
#include "hammer/http/client.h"
#include "hammer/http/server.h"
#include "hammer/stats/histogram.h"

namespace hammer::dark {

class ComparisonJoin;
class ConstantQpsFeeder;

// Cluster name -> counter slot, shared by every loop (a lock, taken only when a loop meets a
// cluster for the first time). At most kMaxDarkClusters clusters are counted.
class ClusterRegistry {
 public:
  static constexpr size_t kMaxDarkClusters = 64;
  // The slot of `name`, or kMaxDarkClusters when the registry is full.
  size_t IndexOf(const std::string& name);
  std::vector<std::string> Names() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> names_;
};

class DarkProxyHandler final : public http::RequestHandler {
 public:
  DarkProxyHandler(net::EventLoop* loop, net::Resolver* resolver, const DarkOptions* options,
                   const Membership* membership, ClusterRegistry* registry,
                   DarkLoopCounters* counters, uint64_t seed);
  ~DarkProxyHandler() override;

  void OnRequest(const http::IncomingRequest& request, http::Responder responder) override;

  // This loop's comparison report (loop thread only); null without --compare.
  const ComparisonReport* report() const { return report_.get(); }

 private:
  friend class PrimaryExchange;
  friend class DarkCopy;
  friend class ConstantQpsFeeder;
  struct ClusterRuntime;

  void SyncClusters();
  ClusterRuntime* RuntimeFor(const DarkClusterMembership& cluster);
  void Fork(const http::IncomingRequest& request, std::shared_ptr<ComparisonJoin> join);
  void SendCopy(ClusterRuntime& cluster, const http::RequestHead& head, std::string_view body,
                std::shared_ptr<ComparisonJoin> join);
  void SendSecondary(const http::IncomingRequest& request, std::shared_ptr<ComparisonJoin> join);

  net::EventLoop* loop_;
  const DarkOptions* options_;
  DarkLoopCounters* counters_;
  std::unique_ptr<http::HttpClient> upstream_client_;
  SnapshotReader membership_;
  ClusterRegistry* registry_;
  net::Resolver* resolver_;
  uint64_t synced_version_ = 0;
  std::vector<std::unique_ptr<ClusterRuntime>> clusters_;  // never removed: copies point here
  std::vector<ClusterRuntime*> active_;                    // in the current snapshot
  ForkEligibility eligibility_;
  std::mt19937_64 rng_;
  size_t next_upstream_ = 0;
  size_t next_secondary_ = 0;
  std::unique_ptr<ComparisonReport> report_;
  std::unique_ptr<JsonDiff> diff_;
};

}  // namespace hammer::dark
