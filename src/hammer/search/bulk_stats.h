// BulkStats: every counter of a `hammer bulk` run, their meaning and units in one place, and
// the end-of-run report (text for people, JSON for scripts and tests).
//
// The balance that must always hold at the end: documents_read = indexed + dead_lettered().
// A "document" is one action (+ source) pair, one line with --id-field, or one rejected input
// record. Bytes are NDJSON body bytes (action + source lines with their newlines).
//
// Threads: a value type. The reader thread and the loop thread each fill their own copy; the
// run merges them at the end (Merge).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hammer/base/counters.h"
#include "hammer/stats/histogram.h"

namespace hammer::search {

struct NodeTraffic {
  std::string name;
  std::string address;  // host:port
  uint64_t requests = 0;
  uint64_t documents = 0;   // items sent (a retried item counts again)
  uint64_t body_bytes = 0;  // as sent
  // Requests sent to this node since the latest placement change (BulkStats::
  // placement_changes); equal to `requests` while the placement never changed. After a node
  // is lost, the lost node's figure is 0 once the view without it is in use.
  uint64_t requests_since_placement_change = 0;

  void Merge(const NodeTraffic& other);
};

// Every counter of a bulk run, one line each (base/counters.h: field, kind, Prometheus family,
// label, help): the fields of BulkStats, its merge, the summary's JSON members and the Hadoop
// counters (group hammer_bulk) follow from this table.
#define HAMMER_BULK_COUNTERS(X)                                                                    \
  /* The reader thread's. */                                                                       \
  X(documents_read, kCounter, "hammer_bulk_documents_read_total", "",                              \
    "Documents read from the input (valid or not).")                                               \
  X(input_bytes, kCounter, "hammer_bulk_input_bytes_total", "",                                    \
    "Bytes of the documents accepted for sending.")                                                \
  X(invalid_input, kCounter, "hammer_bulk_invalid_input_total", "",                                \
    "Documents rejected before sending (dead-lettered).")                                          \
  X(unroutable, kCounter, "hammer_bulk_unroutable_total", "",                                      \
    "Documents without a predictable shard (sent to any node).")                                   \
  /* The loop thread's: outcomes. */                                                               \
  X(indexed, kCounter, "hammer_bulk_indexed_total", "",                                            \
    "Items answered 2xx (a delete of a missing document included).")                               \
  X(conflicts_after_retry, kCounter, "hammer_bulk_conflicts_after_retry_total", "",                \
    "Creates answered 409 after an attempt with an unknown outcome (counted as indexed).")         \
  X(rejected_by_server, kCounter, "hammer_bulk_rejected_by_server_total", "",                      \
    "Items or requests failed with an error that is not retried (dead-lettered).")                 \
  X(retries_exhausted, kCounter, "hammer_bulk_retries_exhausted_total", "",                        \
    "Items dead-lettered after the last retry.")                                                   \
  X(outcome_unknown, kCounter, "hammer_bulk_outcome_unknown_total", "",                            \
    "Documents without _id in a request whose fate is unknown (dead-lettered).")                   \
  X(interrupted, kCounter, "hammer_bulk_interrupted_total", "",                                    \
    "Documents not written because the run was stopped (dead-lettered).")                          \
  /* The loop thread's: traffic. */                                                                \
  X(requests, kCounter, "hammer_bulk_requests_total", "", "POST _bulk sent (retries included).")   \
  X(requests_failed, kCounter, "hammer_bulk_requests_failed_total", "",                            \
    "Requests failed in transport (connect, reset, timeout).")                                     \
  X(requests_rejected, kCounter, "hammer_bulk_requests_rejected_total", "",                        \
    "Requests answered 429 or 5xx as a whole.")                                                    \
  X(requests_split, kCounter, "hammer_bulk_requests_split_total", "",                              \
    "Requests answered 400 or 413 and split in halves.")                                           \
  X(items_retried, kCounter, "hammer_bulk_items_retried_total", "", "Item sends after the first.") \
  X(requests_off_primary, kCounter, "hammer_bulk_requests_off_primary_total", "",                  \
    "Shard batches sent to a node not holding that shard's primary.")                              \
  X(requests_unroutable, kCounter, "hammer_bulk_requests_unroutable_total", "",                    \
    "Batches of documents whose shard is unknown.")                                                \
  X(shard_requests, kCounter, "hammer_bulk_shard_requests_total", "",                              \
    "(request, shard) pairs: the shard-level requests the cluster fans a bulk out to.")            \
  X(shard_requests_remote, kCounter, "hammer_bulk_shard_requests_remote_total", "",                \
    "Shard-level requests whose primary was on another node than the one receiving the bulk.")     \
  X(body_bytes_sent, kCounter, "hammer_bulk_body_bytes_sent_total", "",                            \
    "Request body bytes as sent (gzip-compressed with --gzip).")                                   \
  X(body_bytes_uncompressed, kCounter, "hammer_bulk_body_bytes_uncompressed_total", "",            \
    "Request body bytes before compression.")                                                      \
  X(discoveries, kCounter, "hammer_bulk_discoveries_total", "",                                    \
    "Successful refreshes of the cluster view.")                                                   \
  X(placement_changes, kCounter, "hammer_bulk_placement_changes_total", "",                        \
    "Refreshes that moved a primary or changed the node list.")                                    \
  X(refreshes_started, kCounter, "hammer_bulk_refreshes_started_total", "",                        \
    "Cluster-view reads begun, the first included (a run may end before a late one ends).")        \
  X(discovery_failures, kCounter, "hammer_bulk_discovery_failures_total", "",                      \
    "Cluster-view reads that failed.")

struct BulkStats {
  // What was written, for the report.
  std::string target;
  std::string routing_mode;  // "shard-aware" or "round-robin"
  int32_t shards = 0;
  int32_t partitions_per_shard = 0;
  std::map<std::string, uint64_t> unroutable_reasons;  // of `unroutable`, by reason

  HAMMER_PLAIN_COUNTERS(HAMMER_BULK_COUNTERS)
  std::vector<NodeTraffic> nodes;
  // Latency of the POST _bulk requests not counted as failed (answered, but neither 429 nor
  // 5xx), from the send to the end of the response, µs: the summary's "latency".
  stats::Histogram request_latency;

  double seconds = 0;
  bool stopped_by_signal = false;

  uint64_t dead_lettered() const {
    return invalid_input + rejected_by_server + retries_exhausted + outcome_unknown + interrupted;
  }
  bool balanced() const { return documents_read == indexed + dead_lettered(); }

  NodeTraffic& Node(const std::string& address, const std::string& name);
  void Merge(const BulkStats& other);
};

// Live totals for the progress line, written with relaxed atomics by the reader (read) and the
// loop (the rest), read by the main thread once a second.
struct BulkProgress {
  std::atomic<uint64_t> read{0};
  std::atomic<uint64_t> indexed{0};
  std::atomic<uint64_t> dead_lettered{0};
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> retries{0};
  std::atomic<uint64_t> in_flight{0};
};

// The human report (several lines, ending with '\n').
std::string FormatBulkSummary(const BulkStats& stats);
// The same figures as one JSON object (with '\n').
std::string BulkSummaryJson(const BulkStats& stats);

}  // namespace hammer::search
