// Counters of the dark proxy, declared once (the two tables below), and the /metrics text. Each
// event loop owns one DarkLoopCounters and is its only writer (relaxed atomics, so the admin
// listener can read them from another thread without locks); readers sum the loops.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/counters.h"
#include "hammer/base/failure.h"
#include "hammer/http/server_resources.h"
#include "hammer/http/tls_server.h"
#include "hammer/stats/prometheus_text.h"

namespace hammer::dark {

// Every counter of the dark proxy, one line each (base/counters.h: field, kind, Prometheus
// family, label within it, help). The proxy's own, per event loop:
#define HAMMER_DARK_PROXY_COUNTERS(X)                                                              \
  X(requests, kCounter, "hammer_dark_requests_total", "", "Requests received from clients.")       \
  X(http2_requests, kCounter, "hammer_dark_http2_requests_total", "",                              \
    "Requests received on HTTP/2 streams (--http2; counted in hammer_dark_requests_total too).")   \
  X(responses, kCounter, "hammer_dark_responses_total", "",                                        \
    "Responses sent back to clients (the upstream's, or the proxy's own 502, 503 and 504).")       \
  X(abandoned, kCounter, "hammer_dark_requests_abandoned_total", "",                               \
    "Requests in flight when the proxy stopped (never answered).")                                 \
  X(dark_headers_removed, kCounter, "hammer_dark_client_dark_headers_removed_total", "",           \
    "Requests whose own X-Hammer-Dark header was removed before forwarding.")                      \
  X(bad_targets, kCounter, "hammer_dark_bad_targets_total", "",                                    \
    "Requests refused 400: the target was neither origin-form nor absolute-form.")                 \
  X(streamed_requests, kCounter, "hammer_dark_streamed_bodies_total", "direction=request",         \
    "Bodies passed on as they arrived rather than kept whole, by direction.")                      \
  X(streamed_responses, kCounter, "hammer_dark_streamed_bodies_total", "direction=response", "")   \
  X(client_aborted, kCounter, "hammer_dark_stream_aborted_total", "by=client",                     \
    "Streamed exchanges cut short: by the client (gone mid-body; the upstream request was "        \
    "aborted) or by the upstream (failed after the response head was sent; the client "            \
    "connection was closed).")                                                                     \
  X(upstream_aborted, kCounter, "hammer_dark_stream_aborted_total", "by=upstream", "")             \
  X(upstream_failed, kByFailure, "hammer_dark_upstream_failures_total", "",                        \
    "Regular-side failures by type.")                                                              \
  X(tunnels, kCounter, "hammer_dark_tunnels_total", "",                                            \
    "Protocol upgrades (WebSocket, ...) the upstream accepted with 101: tunnels opened (never "    \
    "forked to dark clusters).")                                                                   \
  X(tunnels_open, kGauge, "hammer_dark_tunnels_open", "", "Tunnels open now.")                     \
  X(tunnel_bytes_to_upstream, kCounter, "hammer_dark_tunnel_bytes_total", "direction=to_upstream", \
    "Bytes carried by tunnels (counted as each closes), by direction.")                            \
  X(tunnel_bytes_to_client, kCounter, "hammer_dark_tunnel_bytes_total", "direction=to_client", "") \
  X(retries, kCounter, "hammer_dark_retries_total", "",                                            \
    "User requests sent again to another regular instance after a try that failed before any "     \
    "byte of its answer reached the client.")                                                      \
  X(not_forked_upgrade, kCounter, "hammer_dark_not_forked_total", "reason=upgrade",                \
    "Requests that may not be copied to the dark clusters, by reason: upgrade (a tunnel, "         \
    "WebSocket and others), grpc_streaming (a gRPC call whose request is not one message: "        \
    "client or bidirectional streaming), grpc_unlisted (a gRPC method --dark-grpc-methods does "   \
    "not name), too_large (a body over --stream-threshold). Counted while a dark cluster is "      \
    "active.")                                                                                     \
  X(not_forked_grpc_streaming, kCounter, "hammer_dark_not_forked_total", "reason=grpc_streaming",  \
    "")                                                                                            \
  X(not_forked_grpc_unlisted, kCounter, "hammer_dark_not_forked_total", "reason=grpc_unlisted",    \
    "")                                                                                            \
  X(not_forked_too_large, kCounter, "hammer_dark_not_forked_total", "reason=too_large", "")        \
  X(retries_over_budget, kCounter, "hammer_dark_retries_over_budget_total", "",                    \
    "Retryable failures not retried because the retries in flight were at their budget "           \
    "(--retry-budget).")                                                                           \
  X(retries_no_instance, kCounter, "hammer_dark_retries_no_instance_total", "",                    \
    "Retryable failures not retried because no other regular instance was available (every "       \
    "other one ejected or failing its health checks); answered 503.")                              \
  X(no_instance, kCounter, "hammer_dark_no_instance_total", "",                                    \
    "Requests answered 503 at once because the set of regular instances was empty (the "           \
    "upstream's DNS name or ZooKeeper members listed none).")

// Per dark cluster and event loop (labelled cluster="NAME" in /metrics):
#define HAMMER_DARK_CLUSTER_COUNTERS(X)                                                     \
  X(considered, kCounter, "hammer_dark_considered_total", "",                               \
    "Requests seen while the dark cluster was configured.")                                 \
  X(eligible, kCounter, "hammer_dark_eligible_total", "",                                   \
    "Requests whose method and path may be forked.")                                        \
  X(selected, kCounter, "hammer_dark_selected_total", "", "Copies the strategy asked for.") \
  X(sent, kCounter, "hammer_dark_sent_total", "", "Copies sent to the dark cluster.")       \
  X(succeeded, kCounter, "hammer_dark_succeeded_total", "", "Copies answered below 500.")   \
  X(dropped, kCounter, "hammer_dark_dropped_total", "",                                     \
    "Copies not sent because the in-flight budget was full.")                               \
  X(backed_off, kCounter, "hammer_dark_backed_off_total", "",                               \
    "Copies not sent while backing off from a cluster refusing connections.")               \
  X(abandoned, kCounter, "hammer_dark_abandoned_total", "",                                 \
    "Copies in flight when the proxy stopped or began draining.")                           \
  X(streamed, kCounter, "hammer_dark_skipped_streamed_total", "",                           \
    "Copies not sent because the request body was streamed (over --stream-threshold).")     \
  X(skipped_grpc_http1, kCounter, "hammer_dark_skipped_grpc_http1_total", "",               \
    "Copies of gRPC calls not sent because the cluster is spoken to in HTTP/1.1 (see "      \
    "--dark-http2).")                                                                       \
  X(failed, kByFailure, "hammer_dark_failed_total", "", "Copies that failed, by type.")     \
  X(in_flight, kGauge, "hammer_dark_copies_in_flight", "",                                  \
    "Copies sent and not yet answered, failed or abandoned.")

// The regular instances as a set (UpstreamPool, HealthChecker and the discovery sources):
// written from any thread, so with CountShared (fetch_add), never Bump.
#define HAMMER_DARK_UPSTREAM_COUNTERS(X)                                                       \
  X(ejections, kCounter, "hammer_dark_upstream_ejections_total", "",                           \
    "Regular instances ejected for consecutive failures (connect failures, resets and "        \
    "timeouts, or 5xx).")                                                                      \
  X(added, kCounter, "hammer_dark_upstream_changes_total", "change=added",                     \
    "Regular instances added to the set while running and removed from it (then drained), "    \
    "by DNS re-resolution or ZooKeeper.")                                                      \
  X(removed, kCounter, "hammer_dark_upstream_changes_total", "change=removed", "")             \
  X(dns_failures, kCounter, "hammer_dark_upstream_discovery_failures_total", "source=dns",     \
    "Lookups of an upstream's DNS name, and reads of its ZooKeeper members, that failed (the " \
    "instances found last stay in force).")                                                    \
  X(zookeeper_failures, kCounter, "hammer_dark_upstream_discovery_failures_total",             \
    "source=zookeeper", "")                                                                    \
  X(checks_passed, kCounter, "hammer_dark_health_checks_total", "result=passed",               \
    "Active health checks of regular instances (--health-check), by result.")                  \
  X(checks_failed, kCounter, "hammer_dark_health_checks_total", "result=failed", "")           \
  X(became_healthy, kCounter, "hammer_dark_health_transitions_total", "to=healthy",            \
    "Regular instances that passed or failed enough health checks in a row to change state.")  \
  X(became_unhealthy, kCounter, "hammer_dark_health_transitions_total", "to=unhealthy", "")

// The --capture writer (capture_writer.h): written from every loop and the writer thread, so
// with CountShared, never Bump.
#define HAMMER_DARK_CAPTURE_COUNTERS(X)                                                            \
  X(lines, kCounter, "hammer_dark_capture_lines_total", "",                                        \
    "Exchanges written to the --capture file, one line each.")                                     \
  X(bytes, kCounter, "hammer_dark_capture_bytes_total", "",                                        \
    "Bytes written to the --capture file.")                                                        \
  X(dropped_queue_full, kCounter, "hammer_dark_capture_dropped_total", "reason=queue_full",        \
    "Exchanges chosen for capture but not written, by reason: queue_full (the writer was behind, " \
    "a slow disk: the user's answer never waits for it), write_error (the file could not be "      \
    "written, e.g. a full disk; the lines of the failed write are removed whole).")                \
  X(dropped_write_error, kCounter, "hammer_dark_capture_dropped_total", "reason=write_error", "")  \
  X(skipped_filter, kCounter, "hammer_dark_capture_skipped_total", "reason=filter",                \
    "Requests not chosen for capture, by reason: filter (no --capture-filter matched), rate "      \
    "(--capture-rate), max_rps (over --capture-max-rps this second).")                             \
  X(skipped_rate, kCounter, "hammer_dark_capture_skipped_total", "reason=rate", "")                \
  X(skipped_max_rps, kCounter, "hammer_dark_capture_skipped_total", "reason=max_rps", "")          \
  X(truncated_bodies, kCounter, "hammer_dark_capture_truncated_bodies_total", "",                  \
    "Captured requests whose body was longer than --capture-body-limit (recorded cut, marked "     \
    "body_truncated).")                                                                            \
  X(files_completed, kCounter, "hammer_dark_capture_files_completed_total", "",                    \
    "Capture files completed by --capture-rotate (renamed to their final name).")

struct alignas(64) ProxyCounters {
  HAMMER_ATOMIC_COUNTERS(HAMMER_DARK_PROXY_COUNTERS)
};

struct alignas(64) ClusterCounters {
  HAMMER_ATOMIC_COUNTERS(HAMMER_DARK_CLUSTER_COUNTERS)
};

struct alignas(64) UpstreamCounters {
  HAMMER_ATOMIC_COUNTERS(HAMMER_DARK_UPSTREAM_COUNTERS)
};

struct alignas(64) CaptureCounters {
  HAMMER_ATOMIC_COUNTERS(HAMMER_DARK_CAPTURE_COUNTERS)
};

// Raises a counter that several threads write (UpstreamCounters, CaptureCounters).
inline void CountShared(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.fetch_add(n, std::memory_order_relaxed);
}

// One loop's counters: the proxy's and one set per dark cluster (by index in DarkOptions).
struct DarkLoopCounters {
  explicit DarkLoopCounters(size_t cluster_count) : clusters(cluster_count) {}
  ProxyCounters proxy;
  std::vector<ClusterCounters> clusters;
};

struct ClusterGauge {
  std::string name;
  uint32_t dark_instances = 0;  // Nd
  double multiplier = 0;
  double effective_rate = 0;  // copies per second sent over about the last 10 s
};

// Appends to `out` every loop's counters summed: the proxy's, each dark cluster's (labelled
// cluster="NAME", in the order of `gauges`) with its gauges, the regular instances and the
// membership's state, and the listener's TLS counters when it terminates TLS (`tls` not null).
void AppendDarkMetrics(stats::PrometheusText& out,
                       const std::vector<const DarkLoopCounters*>& loops,
                       const std::vector<ClusterGauge>& gauges, uint32_t regular_instances,
                       bool membership_stale, const http::TlsServerStats* tls = nullptr);

// Appends what clients make the proxy hold and what it refused:
// hammer_dark_connections_open, hammer_dark_connections_max,
// hammer_dark_connections_accepted_total, hammer_dark_buffered_bytes,
// hammer_dark_buffered_bytes_limit, and hammer_dark_rejected_total{reason} for every
// http::Rejection (zeros included).
void AppendServerResources(stats::PrometheusText& out, const http::ServerResources& resources);

}  // namespace hammer::dark
