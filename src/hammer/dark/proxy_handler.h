// DarkProxyHandler: one event loop's share of `hammer dark`.
//
// Every request received is sent to a regular upstream instance (UpstreamPool: least
// outstanding of two random choices by default, failing instances ejected for a while,
// unhealthy ones left out) as a PrimaryExchange, whose response goes back to the client
// unchanged (hop-by-hop headers aside). A try that failed before any byte of its answer
// reached the client and is safe to repeat goes to another instance (--retries, within a
// budget of retries in flight); an unreachable upstream gives 502, a timeout 504, and the
// failure is counted; 503 when there is no instance to send to (an empty set) or to retry on
// (every other one ejected or unhealthy). Independently,
// eligible requests are copied to the dark clusters as each cluster's fork strategy decides
// (DarkCopy); copies carry `X-Hammer-Dark: <cluster>`, go through the cluster's own HttpClient,
// count against a per-cluster in-flight budget (a full budget drops the copy and counts it), have
// their own timeout, and their responses are read and discarded, or kept, bounded, for
// comparison. Each side speaks HTTP/1.1, or HTTP/2 when asked (--upstream-http2 for the
// regular upstreams and the comparison secondary, --dark-http2 per dark cluster); nothing else
// here depends on the protocol. Nothing on the dark side can delay, alter or fail the client's
// response: the copies are started after the regular request and never awaited. A request whose
// body is streamed (above --stream-threshold) is never copied: it is not held to copy from. Each
// copy its strategy asked for is counted as `streamed` (like a dropped copy), and a compared
// request counts it as unsent.
//
// Ownership: the handler owns its HttpClients (regular side, comparison secondary, one per
// dark cluster inside each DarkCluster), the DarkClusters, and every exchange and copy in
// flight (two InFlightSets). AbandonCopies() cancels the copies in flight (their clients stop
// carrying them) and counts them as abandoned; the destructor does that and abandons the
// primary exchanges still in flight too (counted as abandoned requests): nothing is leaked and
// no callback can run after the handler is gone. The caller destroys the listener that feeds
// the handler first, so no Responder of an abandoned request is used afterwards.
//
// Threading: everything runs on the handler's loop (construct it anywhere, then use and
// destroy it on that loop's thread or after the loop has stopped). Counters are read by the
// admin listener through DarkLoopCounters (relaxed atomics). Which dark clusters exist and
// their shapes come from a Membership snapshot, checked once per request with one atomic
// load; a new version re-shapes the clusters without losing their fractional credit,
// in-flight copies or pools. Clusters get stable counter slots from a shared
// ClusterRegistry, so every loop counts the same cluster in the same slot.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hammer/dark/capture_writer.h"
#include "hammer/dark/cluster_registry.h"
#include "hammer/dark/comparison_report.h"
#include "hammer/dark/dark_cluster.h"
#include "hammer/dark/dark_copy.h"
#include "hammer/dark/dark_metrics.h"
#include "hammer/dark/dark_options.h"
#include "hammer/dark/eligibility.h"
#include "hammer/dark/forwarding.h"
#include "hammer/dark/in_flight_set.h"
#include "hammer/dark/json_diff.h"
#include "hammer/dark/membership.h"
#include "hammer/dark/primary_exchange.h"
#include "hammer/dark/tapped_request.h"
#include "hammer/dark/upstream_pool.h"
#include "hammer/http/client.h"
#include "hammer/http/server.h"

namespace hammer::dark {

class ComparisonJoin;

class DarkProxyHandler final : public http::RequestHandler, private TryObserver {
 public:
  // Everything pointed to must outlive the handler. `upstream_tls` holds the TLS settings of
  // every https upstream, dark cluster and secondary (loaded once, shared by every loop).
  // `pool`: the regular instances and their health, shared by the proxy's loops. `capture`
  // (--capture; may be null): where the requests it chooses are recorded once answered.
  DarkProxyHandler(net::EventLoop* loop, net::Resolver* resolver, const DarkOptions* options,
                   const Membership* membership, ClusterRegistry* registry,
                   DarkLoopCounters* counters, uint64_t seed,
                   std::shared_ptr<const http::TlsClientConfig> upstream_tls,
                   http::BufferBudget* budget, UpstreamPool* pool, CaptureWriter* capture);
  ~DarkProxyHandler() override;

  void OnRequest(const http::IncomingRequest& request, http::Responder responder) override;

  // Cancels every dark copy (and comparison secondary) in flight, counting them as abandoned
  // per cluster. Returns how many there were.
  size_t AbandonCopies();
  // The proxy is draining: copies in flight are abandoned and no new copy is forked; requests
  // still arriving are served from the regular upstream as usual.
  void StartDraining();

  size_t requests_in_flight() const { return primaries_.size(); }
  size_t copies_in_flight() const { return copies_.size(); }

  // This loop's comparison report for the dark cluster with registry index `cluster` (loop
  // thread only); null without --compare or before the cluster's first request here.
  const ComparisonReport* report(size_t cluster) const {
    return cluster < reports_.size() ? reports_[cluster].get() : nullptr;
  }

 private:
  void SyncClusters();
  DarkCluster* ClusterFor(const DarkClusterMembership& cluster);
  void Fork(const http::IncomingRequest& request, const std::shared_ptr<ComparisonJoin>& join,
            bool streamed);
  // A listed gRPC call (eligibility.h): each cluster's copies are decided now, and sent once
  // its body, copied as it streams to the primary, has ended as one message (TappedRequest).
  void ForkWhenWhole(const http::IncomingRequest& request,
                     const std::shared_ptr<ComparisonJoin>& join);
  void SendTapped(TappedRequest& tapped, bool whole);
  void SendCopy(DarkCluster& cluster, const http::RequestHead& head, std::string_view body,
                std::string_view client_ip, std::shared_ptr<ComparisonJoin> join);
  ForwardOptions ForwardOptionsFor(const http::IncomingRequest& request) const;
  void SendSecondary(const http::IncomingRequest& request, std::shared_ptr<ComparisonJoin> join);
  size_t AbandonRequests();
  // TryObserver: outlier accounting for every try, and the retry decision.
  bool TryEnded(PrimaryExchange& exchange, const http::ExchangeResult& result,
                bool retryable) override;
  void TryAbandoned(PrimaryExchange& exchange) override;
  // Sends `exchange`'s request to the instance Pick chose (exchange.instance).
  std::shared_ptr<http::BodyStream> UpstreamBody(const http::IncomingRequest& request);
  void SendTry(PrimaryExchange& exchange, MonoNanos deadline);
  // The set of regular instances now; when it changed, the idle connections to the instances
  // that left are closed.
  const UpstreamSet& Upstreams();

  net::EventLoop* loop_;
  net::Resolver* resolver_;
  const DarkOptions* options_;
  DarkLoopCounters* counters_;
  ClusterRegistry* registry_;
  SnapshotReader membership_;
  http::ClientOptions client_options_;  // of every HttpClient speaking HTTP/1.1
  // client_options_ in HTTP/2 (256 KiB stream window): the regular side and the secondary with
  // --upstream-http2, the --dark-http2 clusters.
  http::ClientOptions http2_options_;
  ResponseHolding holding_;  // of every PrimaryExchange
  uint64_t synced_version_ = 0;
  ForkEligibility eligibility_;
  std::mt19937_64 rng_;
  UpstreamPool* pool_;
  CaptureWriter* capture_;
  UpstreamPool::Reader upstreams_;
  std::shared_ptr<const UpstreamSet> upstreams_seen_;  // as of the last Upstreams()
  size_t retries_in_flight_ = 0;  // tries in flight that are retries (the budget's count)
  bool draining_ = false;
  size_t next_secondary_ = 0;
  std::vector<std::unique_ptr<ComparisonReport>> reports_;  // by cluster index; --compare only
  std::unique_ptr<JsonDiff> diff_;
  // Declared before what they carry, so they are destroyed after it (the destructor cancels
  // what is in flight explicitly anyway).
  std::unique_ptr<http::HttpClient> upstream_client_;
  std::unique_ptr<http::HttpClient> secondary_client_;  // --compare-secondary
  std::unique_ptr<http::HttpClient> tunnel_client_;     // upgrades: HTTP/1.1 always
  std::vector<std::unique_ptr<DarkCluster>> clusters_;  // never removed: copies point here
  std::vector<DarkCluster*> active_;                    // in the current snapshot
  InFlightSet<PrimaryExchange> primaries_;
  InFlightSet<DarkCopy> copies_;
  InFlightSet<TappedRequest> taps_;  // gRPC calls whose copies wait for their body
};

}  // namespace hammer::dark
