#include "hammer/dark/dark_metrics.h"

#include "hammer/stats/counter_exposition.h"

namespace hammer::dark {

namespace {

using Labels = std::initializer_list<stats::PrometheusLabelPair>;

void AppendTlsMetrics(stats::PrometheusText& out, const http::TlsServerStats& tls) {
  out.Family("hammer_dark_tls_handshakes_total", "counter",
             "TLS handshakes completed on the listener.");
  out.Sample("hammer_dark_tls_handshakes_total", Labels{}, tls.handshakes);
  out.Family("hammer_dark_tls_resumed_total", "counter",
             "Handshakes that resumed an earlier session.");
  out.Sample("hammer_dark_tls_resumed_total", Labels{}, tls.resumed);
  out.Family("hammer_dark_tls_handshake_failures_total", "counter",
             "Listener handshakes that failed: error (alert, protocol, no common ALPN or "
             "version), closed (by the client), timeout.");
  for (auto [reason, value] :
       {std::pair{"error", tls.failed_error}, std::pair{"closed", tls.failed_closed},
        std::pair{"timeout", tls.failed_timeout}}) {
    out.Sample("hammer_dark_tls_handshake_failures_total", Labels{{"reason", reason}}, value);
  }
  out.Family("hammer_dark_tls_reloads_total", "counter",
             "Certificate reloads (SIGHUP); a failed one keeps the previous certificate.");
  out.Sample("hammer_dark_tls_reloads_total", Labels{{"result", "ok"}}, tls.reloads);
  out.Sample("hammer_dark_tls_reloads_total", Labels{{"result", "failed"}}, tls.reload_failures);
  out.Family("hammer_dark_tls_certificate_expiry_seconds", "gauge",
             "When the listener's certificate expires (Unix time).");
  out.Sample("hammer_dark_tls_certificate_expiry_seconds", Labels{},
             static_cast<uint64_t>(std::max<int64_t>(tls.not_after_unix, 0)));
}

}  // namespace

void AppendDarkMetrics(stats::PrometheusText& out,
                       const std::vector<const DarkLoopCounters*>& loops,
                       const std::vector<ClusterGauge>& gauges, uint32_t regular_instances,
                       bool membership_stale, const http::TlsServerStats* tls) {
  std::vector<uint64_t> proxy;
  for (const DarkLoopCounters* loop : loops)
    AddCounterValues(proxy, loop->proxy.CounterValues());
  proxy.resize(CounterValueCount(ProxyCounters::kCounterSpecs), 0);  // no loops: zeros
  stats::AppendCounterFamilies(out, ProxyCounters::kCounterSpecs, proxy);

  out.Family("hammer_dark_regular_instances", "gauge", "Ns, instances of the regular cluster.");
  out.Sample("hammer_dark_regular_instances", Labels{}, uint64_t{regular_instances});
  out.Family("hammer_dark_membership_stale", "gauge",
             "1 while the membership source is unreachable.");
  out.Sample("hammer_dark_membership_stale", Labels{}, uint64_t{membership_stale ? 1u : 0u});
  if (tls != nullptr) AppendTlsMetrics(out, *tls);

  std::vector<std::vector<uint64_t>> values(gauges.size());
  std::vector<stats::CounterRow> rows;
  for (size_t c = 0; c < gauges.size(); ++c) {
    for (const DarkLoopCounters* loop : loops) {
      if (c < loop->clusters.size()) AddCounterValues(values[c], loop->clusters[c].CounterValues());
    }
    values[c].resize(CounterValueCount(ClusterCounters::kCounterSpecs), 0);
    rows.push_back({{{"cluster", gauges[c].name}}, values[c]});
  }
  if (rows.empty()) return;  // families without samples are left out
  stats::AppendCounterFamilies(out, ClusterCounters::kCounterSpecs, rows);
  out.Family("hammer_dark_instances", "gauge",
             "Nd, instances of each dark cluster (from its membership).");
  for (const ClusterGauge& gauge : gauges) {
    out.Sample("hammer_dark_instances", Labels{{"cluster", gauge.name}},
               uint64_t{gauge.dark_instances});
  }
  out.Family("hammer_dark_multiplier", "gauge",
             "Each dark cluster's multiplier: its copies per second relative to its share of "
             "the traffic.");
  for (const ClusterGauge& gauge : gauges)
    out.Sample("hammer_dark_multiplier", Labels{{"cluster", gauge.name}}, gauge.multiplier);
  out.Family("hammer_dark_effective_rate", "gauge",
             "Copies per second sent to each dark cluster over about the last 10 s (since the "
             "start at first).");
  for (const ClusterGauge& gauge : gauges)
    out.Sample("hammer_dark_effective_rate", Labels{{"cluster", gauge.name}}, gauge.effective_rate);
}

void AppendServerResources(stats::PrometheusText& out, const http::ServerResources& resources) {
  out.Family("hammer_dark_connections_open", "gauge", "Client connections open now.");
  out.Sample("hammer_dark_connections_open", Labels{}, uint64_t{resources.open_connections()});
  out.Family("hammer_dark_connections_max", "gauge", "--max-connections (0: no limit).");
  out.Sample("hammer_dark_connections_max", Labels{}, uint64_t{resources.limits().max_connections});
  out.Family("hammer_dark_connections_accepted_total", "counter", "Client connections admitted.");
  out.Sample("hammer_dark_connections_accepted_total", Labels{},
             uint64_t{resources.accepted_connections()});
  out.Family("hammer_dark_buffered_bytes", "gauge", "Bytes held in buffers for clients.");
  out.Sample("hammer_dark_buffered_bytes", Labels{}, uint64_t{resources.budget().used()});
  out.Family("hammer_dark_buffered_bytes_limit", "gauge", "--max-buffered-bytes (0: no limit).");
  out.Sample("hammer_dark_buffered_bytes_limit", Labels{}, uint64_t{resources.budget().limit()});
  out.Family("hammer_dark_rejected_total", "counter",
             "Connections and requests refused, by reason (connection_limit, evicted, "
             "out_of_descriptors: connections closed; header_timeout, body_timeout: 408; "
             "over_budget: 503; bad_request: 400; unsupported_transfer_coding: 501; "
             "head_too_large: 431; body_too_large: 413).");
  for (size_t i = 0; i < http::kRejectionCount; ++i) {
    auto reason = static_cast<http::Rejection>(i);
    out.Sample("hammer_dark_rejected_total", Labels{{"reason", http::RejectionName(reason)}},
               uint64_t{resources.rejected(reason)});
  }
}

}  // namespace hammer::dark
