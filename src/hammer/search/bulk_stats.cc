#include "hammer/search/bulk_stats.h"

#include <fmt/format.h>

#include <algorithm>

#include "hammer/stats/counter_exposition.h"
#include "hammer/stats/report/json.h"

namespace hammer::search {
namespace {

double Percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

std::string Megabytes(uint64_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

}  // namespace

void NodeTraffic::Merge(const NodeTraffic& other) {
  requests += other.requests;
  documents += other.documents;
  body_bytes += other.body_bytes;
  requests_since_placement_change += other.requests_since_placement_change;
}

NodeTraffic& BulkStats::Node(const std::string& address, const std::string& name) {
  for (NodeTraffic& node : nodes) {
    if (node.address == address) {
      if (!name.empty()) node.name = name;
      return node;
    }
  }
  nodes.push_back(NodeTraffic{name, address});
  return nodes.back();
}

void BulkStats::Merge(const BulkStats& o) {
  if (target.empty()) target = o.target;
  if (routing_mode.empty()) routing_mode = o.routing_mode;
  if (shards == 0) shards = o.shards;
  if (partitions_per_shard == 0) partitions_per_shard = o.partitions_per_shard;
  MergeCounters(o);
  request_latency.Merge(o.request_latency);
  for (const auto& [reason, n] : o.unroutable_reasons)
    unroutable_reasons[reason] += n;
  for (const NodeTraffic& node : o.nodes)
    Node(node.address, node.name).Merge(node);
  seconds = std::max(seconds, o.seconds);
  stopped_by_signal = stopped_by_signal || o.stopped_by_signal;
}

std::string FormatBulkSummary(const BulkStats& s) {
  std::string out = fmt::format(
      "hammer bulk: {} documents read = {} indexed + {} dead-lettered{}\n", s.documents_read,
      s.indexed, s.dead_lettered(), s.balanced() ? "" : "  (UNBALANCED: a bug, please report)");
  out += fmt::format(
      "  dead-lettered: {} invalid input, {} rejected by the server, {} retries exhausted, "
      "{} outcome unknown, {} interrupted\n",
      s.invalid_input, s.rejected_by_server, s.retries_exhausted, s.outcome_unknown, s.interrupted);
  const double docs_per_second = s.seconds > 0 ? static_cast<double>(s.indexed) / s.seconds : 0;
  out += fmt::format("  {:.2f} s, {:.0f} docs/s; {} of documents, {} sent{}\n", s.seconds,
                     docs_per_second, Megabytes(s.input_bytes), Megabytes(s.body_bytes_sent),
                     s.body_bytes_sent != s.body_bytes_uncompressed
                         ? fmt::format(" ({} before gzip)", Megabytes(s.body_bytes_uncompressed))
                         : "");
  out += fmt::format(
      "  {} bulk requests to {} ({} routing, {} shards): {} to a node not holding the shard's "
      "primary, {} of unroutable documents\n",
      s.requests, s.target, s.routing_mode, s.shards, s.requests_off_primary,
      s.requests_unroutable);
  out += fmt::format(
      "  shard requests: {}, of which {} had their primary on another node than the receiver "
      "({:.1f}% forwarded)\n",
      s.shard_requests, s.shard_requests_remote,
      Percent(s.shard_requests_remote, s.shard_requests));
  out += fmt::format(
      "  retries: {} items; requests: {} transport failures, {} answered 429/5xx, {} split "
      "(400/413); {} cluster-view refreshes ({} failed, {} changed the placement)\n",
      s.items_retried, s.requests_failed, s.requests_rejected, s.requests_split, s.discoveries,
      s.discovery_failures, s.placement_changes);
  if (s.conflicts_after_retry > 0) {
    out += fmt::format("  {} creates answered 409 after a retry: counted as indexed\n",
                       s.conflicts_after_retry);
  }
  std::string reasons;
  for (const auto& [reason, n] : s.unroutable_reasons) {
    reasons += fmt::format("{}{} {}", reasons.empty() ? "" : ", ", n, reason);
  }
  out += fmt::format("  unroutable: {} documents{}{}{}\n", s.unroutable,
                     reasons.empty() ? "" : " (", reasons, reasons.empty() ? "" : ")");
  uint64_t total_documents = 0;
  for (const NodeTraffic& node : s.nodes)
    total_documents += node.documents;
  for (const NodeTraffic& node : s.nodes) {
    out += fmt::format("  node {:<12} {:<22} {:5.1f}% of documents  {} requests{}  {}\n", node.name,
                       node.address, Percent(node.documents, total_documents), node.requests,
                       s.placement_changes > 0 ? fmt::format(" ({} since the placement changed)",
                                                             node.requests_since_placement_change)
                                               : "",
                       Megabytes(node.body_bytes));
  }
  return out;
}

std::string BulkSummaryJson(const BulkStats& s) {
  // The fields every hammer summary shares (schema hammer.summary.v1, stats/report/json.h):
  // here the requests are POST _bulk calls; a failed one was not answered (transport) or was
  // answered 429/5xx as a whole (rejected); the latency is that of the others.
  const uint64_t failed = s.requests_failed + s.requests_rejected;
  nlohmann::ordered_json j = stats::SummaryHeader("bulk");
  j["requests"] = s.requests;
  j["succeeded"] = s.requests - std::min(failed, s.requests);
  j["failed"] = failed;
  nlohmann::ordered_json failures = nlohmann::ordered_json::object();
  if (s.requests_failed > 0) failures["transport"] = s.requests_failed;
  if (s.requests_rejected > 0) failures["rejected"] = s.requests_rejected;
  j["failures"] = std::move(failures);
  j["latency"] = stats::LatencyJson(s.request_latency);
  j["thresholds"] = nlohmann::ordered_json::array();
  j["target"] = s.target;
  j["routing"] = s.routing_mode;
  j["shards"] = s.shards;
  stats::AddCounterJson(j, BulkStats::kCounterSpecs, s.CounterValues());
  j["dead_lettered"] = s.dead_lettered();
  j["seconds"] = s.seconds;
  j["docs_per_second"] = s.seconds > 0 ? static_cast<double>(s.indexed) / s.seconds : 0.0;
  j["balanced"] = s.balanced();
  j["stopped_by_signal"] = s.stopped_by_signal;
  j["unroutable_reasons"] = s.unroutable_reasons;
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const NodeTraffic& node : s.nodes) {
    nodes.push_back({{"name", node.name},
                     {"address", node.address},
                     {"requests", node.requests},
                     {"requests_since_placement_change", node.requests_since_placement_change},
                     {"documents", node.documents},
                     {"body_bytes", node.body_bytes}});
  }
  j["nodes"] = std::move(nodes);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace hammer::search
