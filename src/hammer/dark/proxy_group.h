// DarkProxyGroup: `hammer dark` as a library. N event loops, each with an SO_REUSEPORT
// listener and its own DarkProxyHandler, all reading one Membership (static or ZooKeeper).
// An optional admin listener on the first loop (loopback unless a bearer token protects it:
// admin_access.h) serves `GET /metrics` (Prometheus text, with the canary verdict under
// --compare), `GET /hammer/dark/report[?cluster=NAME]` (one dark cluster's comparison report,
// merged from every loop on request, with its verdict; the first cluster without ?cluster),
// `GET /hammer/dark/verdict` (the canary verdict, canary_verdict.h) and
// `GET /hammer/dark/membership` (what the proxy currently believes). Start() returns once every
// listener is bound; the Membership must outlive the group.
//
// TLS: with options.listener_tls the listener terminates TLS (one TlsServerContext shared by
// every loop; ReloadTls() swaps its certificate). Every outgoing connection uses one
// TlsClientConfig loaded at Start (trust store, client certificate), shared by every loop's
// clients, each of which keeps its own session cache. Start fails, naming the file, when a
// certificate, key or CA file cannot be used.
//
// Regular instances: one UpstreamPool shared by every loop, filled from --upstream (fixed
// URLs, DNS names re-resolved, ZooKeeper clusters) while running, and health-checked from the
// first loop with --health-check (HealthChecker).
//
// Start() raises the open-file limit. The proxy listeners share one ServerResources (the
// connection cap, derived from the open-file limit at 3 descriptors per client connection
// unless given, and the buffer budget); the admin listener has its own, unlimited, so that
// /metrics stays reachable while the proxy sheds load.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/dark/canary_verdict.h"
#include "hammer/dark/capture_writer.h"
#include "hammer/dark/dark_metrics.h"
#include "hammer/dark/dark_options.h"
#include "hammer/dark/health_checker.h"
#include "hammer/dark/membership.h"
#include "hammer/dark/proxy_handler.h"
#include "hammer/dark/upstream_dns.h"
#include "hammer/dark/upstream_pool.h"
#include "hammer/dark/upstream_zookeeper.h"
#include "hammer/http/server.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/resolver.h"

namespace hammer::dark {

class DarkProxyGroup {
 public:
  static Result<std::unique_ptr<DarkProxyGroup>> Start(const DarkOptions& options,
                                                       const Membership* membership);
  ~DarkProxyGroup();

  const net::SocketAddress& address() const { return address_; }
  const net::SocketAddress& admin_address() const { return admin_address_; }
  // Stops the loops and joins their threads; whatever is still in flight is abandoned and
  // counted. Idempotent.
  void Stop();

  // Graceful stop (SIGTERM): every listener stops accepting and closes its idle connections,
  // dark copies in flight are abandoned (counted), and the requests in flight are let finish
  // with their real responses (each sent with "Connection: close"), for at most `timeout`.
  // `interrupted` is polled about every 10 ms (it may block that long, e.g. waiting for a
  // signal); when it returns true the drain ends at once. Then Stop() abandons and counts what
  // is left. Returns true when every client connection had closed by itself. Not from a loop
  // thread.
  bool Drain(Nanos timeout, const std::function<bool()>& interrupted);

  // One line per figure for the operator at exit: requests, responses, abandoned requests and,
  // per dark cluster, copies sent, succeeded, failed and abandoned.
  std::string Summary() const;

  // Reads the listener's certificate and key again (SIGHUP) and returns a description of the
  // certificate now in force. On error the previous ones stay in force; either way the outcome
  // is counted in /metrics. Thread-safe.
  Result<std::string> ReloadTls();
  // The listener's TLS state: the certificate in force and the counters (null without TLS).
  std::optional<http::TlsServerStats> listener_tls_stats() const;

  // What the start found wrong without stopping it (a named upstream that did not resolve),
  // one line each, for the operator.
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Prometheus text of every loop's counters and the current gauges (thread-safe).
  std::string MetricsText();
  std::string MembershipJson() const;

  // Every loop's comparison reports merged per dark cluster (in registry order), handed to
  // `done` on the first loop's thread. Any thread; --compare only (else `done` gets none).
  using ReportsDone =
      std::function<void(std::vector<std::string> names, std::vector<ComparisonReport> reports)>;
  void CollectReports(ReportsDone done);
  // The canary verdict now. Blocks the calling thread, which must not be one of the group's
  // loops, until every loop has handed over its reports; an insufficient verdict without
  // --compare or once the group has stopped.
  CanaryVerdict JudgeNow();

 private:
  class AdminHandler;
  DarkProxyGroup(const DarkOptions& options, const Membership* membership);
  // Fills the pool: fixed URLs at once, named ones from DNS (UpstreamDns), zk:// ones from
  // ZooKeeper (UpstreamZooKeeper, whose first read it waits for).
  Status StartUpstreams();

  DarkOptions options_;
  const Membership* membership_;
  net::Resolver resolver_;
  net::LoopGroup loops_;
  ClusterRegistry registry_;
  std::unique_ptr<UpstreamPool> upstreams_;        // shared by the handlers
  std::unique_ptr<CaptureWriter> capture_;         // --capture; outlives the handlers
  std::unique_ptr<HealthChecker> health_checker_;  // --health-check; on the first loop
  // Where the instances come from besides fixed URLs (stopped before the checker goes).
  std::unique_ptr<UpstreamDns> upstream_dns_;
  std::vector<std::unique_ptr<UpstreamZooKeeper>> upstream_zookeeper_;
  std::vector<std::string> warnings_;
  std::vector<std::unique_ptr<DarkLoopCounters>> counters_;
  std::shared_ptr<http::ServerResources> resources_;  // the proxy listeners' (not the admin's)
  std::vector<std::unique_ptr<DarkProxyHandler>> handlers_;
  std::vector<std::unique_ptr<http::HttpListener>> listeners_;
  std::unique_ptr<AdminHandler> admin_handler_;
  std::unique_ptr<http::HttpListener> admin_listener_;
  net::SocketAddress address_;
  net::SocketAddress admin_address_;
  std::string admin_token_;  // empty: admin requests need no token (loopback only)

  std::shared_ptr<http::TlsServerContext> listener_tls_;
  MonoNanos started_ = 0;
  // The effective-rate gauge: copies sent per cluster as seen by scrapes (one a second at
  // most), oldest first, the first being the start. The rate is taken against the newest
  // sample at least 10 s old (else the start), so two scrapes a moment apart do not read a
  // rate of 0 over a window of no time.
  struct SentSample {
    MonoNanos at = 0;
    std::vector<uint64_t> sent;
  };
  std::mutex rate_mutex_;
  std::deque<SentSample> sent_samples_;
  bool stopped_ = false;
};

}  // namespace hammer::dark
