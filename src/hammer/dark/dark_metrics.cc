#include "hammer/dark/dark_metrics.h"

#include <fmt/format.h>

namespace hammer::dark {

namespace {

uint64_t Load(const std::atomic<uint64_t>& a) {
  return a.load(std::memory_order_relaxed);
}

void AppendTlsMetrics(const http::TlsServerStats& tls, std::string& out) {
  out += "# HELP hammer_dark_tls_handshakes_total TLS handshakes completed on the listener.\n";
  out += "# TYPE hammer_dark_tls_handshakes_total counter\n";
  out += fmt::format("hammer_dark_tls_handshakes_total {}\n", tls.handshakes);
  out += "# HELP hammer_dark_tls_resumed_total Handshakes that resumed an earlier session.\n";
  out += "# TYPE hammer_dark_tls_resumed_total counter\n";
  out += fmt::format("hammer_dark_tls_resumed_total {}\n", tls.resumed);
  out +=
      "# HELP hammer_dark_tls_handshake_failures_total Listener handshakes that failed: "
      "error (alert, protocol, no common ALPN or version), closed (by the client), timeout.\n";
  out += "# TYPE hammer_dark_tls_handshake_failures_total counter\n";
  for (auto [reason, value] :
       {std::pair{"error", tls.failed_error}, std::pair{"closed", tls.failed_closed},
        std::pair{"timeout", tls.failed_timeout}}) {
    out += fmt::format("hammer_dark_tls_handshake_failures_total{{reason=\"{}\"}} {}\n", reason,
                       value);
  }
  out +=
      "# HELP hammer_dark_tls_reloads_total Certificate reloads (SIGHUP); a failed one keeps "
      "the previous certificate.\n";
  out += "# TYPE hammer_dark_tls_reloads_total counter\n";
  out += fmt::format("hammer_dark_tls_reloads_total{{result=\"ok\"}} {}\n", tls.reloads);
  out +=
      fmt::format("hammer_dark_tls_reloads_total{{result=\"failed\"}} {}\n", tls.reload_failures);
  out +=
      "# HELP hammer_dark_tls_certificate_expiry_seconds When the listener's certificate "
      "expires (Unix time).\n";
  out += "# TYPE hammer_dark_tls_certificate_expiry_seconds gauge\n";
  out += fmt::format("hammer_dark_tls_certificate_expiry_seconds {}\n", tls.not_after_unix);
}

}  // namespace

std::string PrometheusText(const std::vector<const DarkLoopCounters*>& loops,
                           const std::vector<ClusterGauge>& gauges, uint32_t regular_instances,
                           bool membership_stale, const http::TlsServerStats* tls) {
  std::string out;
  uint64_t requests = 0, responses = 0, abandoned = 0, dark_headers_removed = 0, bad_targets = 0;
  uint64_t http2_requests = 0;
  uint64_t streamed_requests = 0, streamed_responses = 0, client_aborted = 0, upstream_aborted = 0;
  uint64_t retries = 0, retries_over_budget = 0;
  uint64_t tunnels = 0, tunnels_open = 0, tunnel_to_upstream = 0, tunnel_to_client = 0;
  std::array<uint64_t, kFailureCount> upstream_failed{};
  for (const DarkLoopCounters* loop : loops) {
    requests += Load(loop->proxy.requests);
    http2_requests += Load(loop->proxy.http2_requests);
    responses += Load(loop->proxy.responses);
    abandoned += Load(loop->proxy.abandoned);
    dark_headers_removed += Load(loop->proxy.dark_headers_removed);
    bad_targets += Load(loop->proxy.bad_targets);
    streamed_requests += Load(loop->proxy.streamed_requests);
    streamed_responses += Load(loop->proxy.streamed_responses);
    client_aborted += Load(loop->proxy.client_aborted);
    upstream_aborted += Load(loop->proxy.upstream_aborted);
    retries += Load(loop->proxy.retries);
    tunnels += Load(loop->proxy.tunnels);
    tunnels_open += Load(loop->proxy.tunnels_open);
    tunnel_to_upstream += Load(loop->proxy.tunnel_bytes_to_upstream);
    tunnel_to_client += Load(loop->proxy.tunnel_bytes_to_client);
    retries_over_budget += Load(loop->proxy.retries_over_budget);
    for (size_t i = 0; i < kFailureCount; ++i)
      upstream_failed[i] += Load(loop->proxy.upstream_failed[i]);
  }
  out += "# HELP hammer_dark_requests_total Requests received from clients.\n";
  out += "# TYPE hammer_dark_requests_total counter\n";
  out += fmt::format("hammer_dark_requests_total {}\n", requests);
  out +=
      "# HELP hammer_dark_http2_requests_total Requests received on HTTP/2 streams (--http2; "
      "counted in hammer_dark_requests_total too).\n";
  out += "# TYPE hammer_dark_http2_requests_total counter\n";
  out += fmt::format("hammer_dark_http2_requests_total {}\n", http2_requests);
  out += "# TYPE hammer_dark_responses_total counter\n";
  out += fmt::format("hammer_dark_responses_total {}\n", responses);
  out +=
      "# HELP hammer_dark_requests_abandoned_total Requests in flight when the proxy stopped "
      "(never answered).\n";
  out += "# TYPE hammer_dark_requests_abandoned_total counter\n";
  out += fmt::format("hammer_dark_requests_abandoned_total {}\n", abandoned);
  out +=
      "# HELP hammer_dark_client_dark_headers_removed_total Requests whose own X-Hammer-Dark "
      "header was removed before forwarding.\n";
  out += "# TYPE hammer_dark_client_dark_headers_removed_total counter\n";
  out += fmt::format("hammer_dark_client_dark_headers_removed_total {}\n", dark_headers_removed);
  out +=
      "# HELP hammer_dark_bad_targets_total Requests refused 400: the target was neither "
      "origin-form nor absolute-form.\n";
  out += "# TYPE hammer_dark_bad_targets_total counter\n";
  out += fmt::format("hammer_dark_bad_targets_total {}\n", bad_targets);
  out +=
      "# HELP hammer_dark_streamed_bodies_total Bodies passed on as they arrived rather than kept "
      "whole (over --stream-threshold), by direction.\n";
  out += "# TYPE hammer_dark_streamed_bodies_total counter\n";
  out += fmt::format("hammer_dark_streamed_bodies_total{{direction=\"request\"}} {}\n",
                     streamed_requests);
  out += fmt::format("hammer_dark_streamed_bodies_total{{direction=\"response\"}} {}\n",
                     streamed_responses);
  out +=
      "# HELP hammer_dark_stream_aborted_total Streamed exchanges cut short: by the client "
      "(gone mid-body; the upstream request was aborted) or by the upstream (failed after the "
      "response head was sent; the client connection was closed).\n";
  out += "# TYPE hammer_dark_stream_aborted_total counter\n";
  out += fmt::format("hammer_dark_stream_aborted_total{{by=\"client\"}} {}\n", client_aborted);
  out += fmt::format("hammer_dark_stream_aborted_total{{by=\"upstream\"}} {}\n", upstream_aborted);
  out += "# HELP hammer_dark_upstream_failures_total Regular-side failures by type.\n";
  out += "# TYPE hammer_dark_upstream_failures_total counter\n";
  for (size_t i = 0; i < kFailureCount; ++i) {
    if (upstream_failed[i] == 0) continue;
    out += fmt::format("hammer_dark_upstream_failures_total{{type=\"{}\"}} {}\n", kFailureNames[i],
                       upstream_failed[i]);
  }
  out +=
      "# HELP hammer_dark_tunnels_total Protocol upgrades (WebSocket, ...) the upstream "
      "accepted with 101: tunnels opened (never forked to dark clusters).\n";
  out += "# TYPE hammer_dark_tunnels_total counter\n";
  out += fmt::format("hammer_dark_tunnels_total {}\n", tunnels);
  out += "# HELP hammer_dark_tunnels_open Tunnels open now.\n";
  out += "# TYPE hammer_dark_tunnels_open gauge\n";
  out += fmt::format("hammer_dark_tunnels_open {}\n", tunnels_open);
  out +=
      "# HELP hammer_dark_tunnel_bytes_total Bytes carried by tunnels (counted when each "
      "closes), by direction.\n";
  out += "# TYPE hammer_dark_tunnel_bytes_total counter\n";
  out += fmt::format("hammer_dark_tunnel_bytes_total{{direction=\"to_upstream\"}} {}\n",
                     tunnel_to_upstream);
  out += fmt::format("hammer_dark_tunnel_bytes_total{{direction=\"to_client\"}} {}\n",
                     tunnel_to_client);
  out +=
      "# HELP hammer_dark_retries_total User requests sent again to another regular instance "
      "after a try that failed before any byte of its answer reached the client.\n";
  out += "# TYPE hammer_dark_retries_total counter\n";
  out += fmt::format("hammer_dark_retries_total {}\n", retries);
  out +=
      "# HELP hammer_dark_retries_over_budget_total Retryable failures not retried because the "
      "retries in flight were at their budget (--retry-budget).\n";
  out += "# TYPE hammer_dark_retries_over_budget_total counter\n";
  out += fmt::format("hammer_dark_retries_over_budget_total {}\n", retries_over_budget);
  out += "# HELP hammer_dark_regular_instances Ns, instances of the regular cluster.\n";
  out += "# TYPE hammer_dark_regular_instances gauge\n";
  out += fmt::format("hammer_dark_regular_instances {}\n", regular_instances);
  out += "# HELP hammer_dark_membership_stale 1 while the membership source is unreachable.\n";
  out += "# TYPE hammer_dark_membership_stale gauge\n";
  out += fmt::format("hammer_dark_membership_stale {}\n", membership_stale ? 1 : 0);
  if (tls != nullptr) AppendTlsMetrics(*tls, out);

  static constexpr std::pair<const char*, const char*> kCounters[] = {
      {"considered", "Requests seen while the dark cluster was configured."},
      {"eligible", "Requests whose method and path may be forked."},
      {"selected", "Copies the strategy asked for."},
      {"sent", "Copies sent to the dark cluster."},
      {"succeeded", "Copies answered below 500."},
      {"dropped", "Copies not sent because the in-flight budget was full."},
      {"backed_off", "Copies not sent while backing off from a cluster refusing connections."},
      {"abandoned", "Copies in flight when the proxy stopped or began draining."},
      {"skipped_streamed",
       "Copies not sent because the request body was streamed (over --stream-threshold)."},
  };
  constexpr size_t kCounterCount = std::size(kCounters);
  for (size_t c = 0; c < gauges.size(); ++c) {
    std::string cluster = stats::PrometheusLabel(gauges[c].name);
    uint64_t values[kCounterCount] = {};
    uint64_t in_flight = 0;
    std::array<uint64_t, kFailureCount> failed{};
    for (const DarkLoopCounters* loop : loops) {
      if (c >= loop->clusters.size()) continue;
      const ClusterCounters& k = loop->clusters[c];
      values[0] += Load(k.considered);
      values[1] += Load(k.eligible);
      values[2] += Load(k.selected);
      values[3] += Load(k.sent);
      values[4] += Load(k.succeeded);
      values[5] += Load(k.dropped);
      values[6] += Load(k.backed_off);
      values[7] += Load(k.abandoned);
      values[8] += Load(k.streamed);
      in_flight += Load(k.in_flight);
      for (size_t i = 0; i < kFailureCount; ++i)
        failed[i] += Load(k.failed[i]);
    }
    for (size_t i = 0; i < kCounterCount; ++i) {
      if (c == 0) {
        out += fmt::format("# HELP hammer_dark_{}_total {}\n", kCounters[i].first,
                           kCounters[i].second);
        out += fmt::format("# TYPE hammer_dark_{}_total counter\n", kCounters[i].first);
      }
      out += fmt::format("hammer_dark_{}_total{{cluster=\"{}\"}} {}\n", kCounters[i].first, cluster,
                         values[i]);
    }
    for (size_t i = 0; i < kFailureCount; ++i) {
      if (failed[i] == 0) continue;
      out += fmt::format("hammer_dark_failed_total{{cluster=\"{}\",type=\"{}\"}} {}\n", cluster,
                         kFailureNames[i], failed[i]);
    }
    if (c == 0) {
      out +=
          "# HELP hammer_dark_copies_in_flight Copies sent and not yet answered, failed or "
          "abandoned.\n";
      out += "# TYPE hammer_dark_copies_in_flight gauge\n";
    }
    out += fmt::format("hammer_dark_copies_in_flight{{cluster=\"{}\"}} {}\n", cluster, in_flight);
    out += fmt::format("hammer_dark_instances{{cluster=\"{}\"}} {}\n", cluster,
                       gauges[c].dark_instances);
    out +=
        fmt::format("hammer_dark_multiplier{{cluster=\"{}\"}} {}\n", cluster, gauges[c].multiplier);
    out += fmt::format("hammer_dark_effective_rate{{cluster=\"{}\"}} {:.3f}\n", cluster,
                       gauges[c].effective_rate);
  }
  return out;
}

std::string ServerResourcesText(const http::ServerResources& resources) {
  std::string out;
  out += "# HELP hammer_dark_connections_open Client connections open now.\n";
  out += "# TYPE hammer_dark_connections_open gauge\n";
  out += fmt::format("hammer_dark_connections_open {}\n", resources.open_connections());
  out += "# HELP hammer_dark_connections_max --max-connections (0: no limit).\n";
  out += "# TYPE hammer_dark_connections_max gauge\n";
  out += fmt::format("hammer_dark_connections_max {}\n", resources.limits().max_connections);
  out += "# HELP hammer_dark_connections_accepted_total Client connections admitted.\n";
  out += "# TYPE hammer_dark_connections_accepted_total counter\n";
  out +=
      fmt::format("hammer_dark_connections_accepted_total {}\n", resources.accepted_connections());
  out += "# HELP hammer_dark_buffered_bytes Bytes held in buffers for clients.\n";
  out += "# TYPE hammer_dark_buffered_bytes gauge\n";
  out += fmt::format("hammer_dark_buffered_bytes {}\n", resources.budget().used());
  out += "# HELP hammer_dark_buffered_bytes_limit --max-buffered-bytes (0: no limit).\n";
  out += "# TYPE hammer_dark_buffered_bytes_limit gauge\n";
  out += fmt::format("hammer_dark_buffered_bytes_limit {}\n", resources.budget().limit());
  out +=
      "# HELP hammer_dark_rejected_total Connections and requests refused, by reason "
      "(connection_limit, evicted, out_of_descriptors: connections closed; header_timeout, "
      "body_timeout: 408; over_budget: 503; bad_request: 400; unsupported_transfer_coding: 501; "
      "head_too_large: 431; body_too_large: 413).\n";
  out += "# TYPE hammer_dark_rejected_total counter\n";
  for (size_t i = 0; i < http::kRejectionCount; ++i) {
    auto reason = static_cast<http::Rejection>(i);
    out += fmt::format("hammer_dark_rejected_total{{reason=\"{}\"}} {}\n",
                       http::RejectionName(reason), resources.rejected(reason));
  }
  return out;
}

}  // namespace hammer::dark
