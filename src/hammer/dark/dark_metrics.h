// Counters of the dark proxy, declared in one place with their names and meaning. Each event
// loop owns one DarkLoopCounters and is its only writer (relaxed atomics, so the admin
// listener can read them from another thread without locks); readers sum the loops.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/failure.h"
#include "hammer/http/server_resources.h"
#include "hammer/http/tls_server.h"
#include "hammer/stats/prometheus_text.h"

namespace hammer::dark {

struct alignas(64) ClusterCounters {
  std::atomic<uint64_t> considered{0};  // requests seen while this cluster was configured
  std::atomic<uint64_t> eligible{0};    // ... whose method/path may be forked
  std::atomic<uint64_t> selected{0};    // copies the strategy asked for
  std::atomic<uint64_t> sent{0};        // copies sent
  std::atomic<uint64_t> succeeded{0};   // copies answered (any HTTP status below 500)
  std::atomic<uint64_t> dropped{0};     // copies not sent: the in-flight budget was full
  std::atomic<uint64_t> backed_off{0};  // copies not sent: connections were refused just before
  std::atomic<uint64_t> abandoned{0};   // copies in flight when the proxy stopped or drained
  std::atomic<uint64_t> streamed{0};    // copies not sent: the request body was streamed
  std::atomic<uint64_t> in_flight{0};   // gauge: copies sent and not yet finished or abandoned
  std::array<std::atomic<uint64_t>, kFailureCount> failed{};  // copies failed, by type
};

struct alignas(64) ProxyCounters {
  std::atomic<uint64_t> requests{0};   // requests received from clients
  std::atomic<uint64_t> responses{0};  // responses sent back (from upstream or 502/504)
  std::atomic<uint64_t> abandoned{0};  // requests in flight when the proxy stopped: no response
  std::atomic<uint64_t> dark_headers_removed{0};  // requests that came with their own X-Hammer-Dark
  std::atomic<uint64_t> bad_targets{0};     // requests refused 400: target not origin/absolute-form
  std::atomic<uint64_t> http2_requests{0};  // of `requests`, those received on HTTP/2 streams
  std::atomic<uint64_t> streamed_requests{0};   // request bodies streamed (over the threshold)
  std::atomic<uint64_t> streamed_responses{0};  // response bodies streamed
  // The client went away mid-stream (request body or response): the upstream request aborted.
  std::atomic<uint64_t> client_aborted{0};
  // The upstream failed after the response head was sent: the client's connection closed.
  std::atomic<uint64_t> upstream_aborted{0};
  std::array<std::atomic<uint64_t>, kFailureCount> upstream_failed{};  // regular side, by type
  std::atomic<uint64_t> tunnels{0};       // upgrades the upstream accepted (101): tunnels opened
  std::atomic<uint64_t> tunnels_open{0};  // gauge
  std::atomic<uint64_t> tunnel_bytes_to_upstream{0};
  std::atomic<uint64_t> tunnel_bytes_to_client{0};
  std::atomic<uint64_t> retries{0};              // tries sent again to another instance
  std::atomic<uint64_t> retries_over_budget{0};  // retryable failures not retried: over budget
};

inline void Bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}
// Lowers a gauge (the loop is its only writer).
inline void Drop(std::atomic<uint64_t>& gauge, uint64_t n = 1) {
  gauge.store(gauge.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
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
  double effective_rate = 0;  // copies per second sent over the last interval
};

// Prometheus text exposition of every loop's counters plus the gauges, and the listener's TLS
// counters when it terminates TLS (`tls` not null).
std::string PrometheusText(const std::vector<const DarkLoopCounters*>& loops,
                           const std::vector<ClusterGauge>& gauges, uint32_t regular_instances,
                           bool membership_stale, const http::TlsServerStats* tls = nullptr);

// Prometheus text of what clients make the proxy hold and what it refused:
// hammer_dark_connections_open, hammer_dark_connections_max,
// hammer_dark_connections_accepted_total, hammer_dark_buffered_bytes,
// hammer_dark_buffered_bytes_limit, and hammer_dark_rejected_total{reason} for every
// http::Rejection (zeros included).
std::string ServerResourcesText(const http::ServerResources& resources);

}  // namespace hammer::dark
