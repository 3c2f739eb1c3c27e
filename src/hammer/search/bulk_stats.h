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

struct BulkStats {
  // What was written, for the report.
  std::string target;
  std::string routing_mode;  // "shard-aware" or "round-robin"
  int32_t shards = 0;
  int32_t partitions_per_shard = 0;

  // Reader thread.
  uint64_t documents_read = 0;
  uint64_t input_bytes = 0;    // of the documents accepted for sending
  uint64_t invalid_input = 0;  // rejected before sending (dead-lettered)
  uint64_t unroutable = 0;     // documents without a predictable shard (sent anywhere)
  std::map<std::string, uint64_t> unroutable_reasons;

  // Loop thread: outcomes.
  uint64_t indexed = 0;                // 2xx items (a delete of a missing document included)
  uint64_t conflicts_after_retry = 0;  // create answered 409 after an attempt with unknown outcome
  uint64_t rejected_by_server = 0;     // non-retryable item or request errors (dead-lettered)
  uint64_t retries_exhausted = 0;      // dead-lettered after max retries
  uint64_t outcome_unknown = 0;        // id-less documents in a request whose fate is unknown
  uint64_t interrupted = 0;            // not written because the run was stopped

  // Loop thread: traffic.
  uint64_t requests = 0;               // POST _bulk sent (retries included)
  uint64_t requests_failed = 0;        // transport failures (connect, reset, timeout)
  uint64_t requests_rejected = 0;      // whole request answered 429 or 5xx
  uint64_t requests_split = 0;         // answered 400/413 and split in halves
  uint64_t items_retried = 0;          // item sends after the first
  uint64_t requests_off_primary = 0;   // shard batches sent to a node not holding that primary
  uint64_t requests_unroutable = 0;    // batches of documents whose shard is unknown
  uint64_t shard_requests = 0;         // (request, shard) pairs: what the server fans out to
  uint64_t shard_requests_remote = 0;  // ... whose primary was on another node than the receiver
  uint64_t body_bytes_sent = 0;        // as sent (gzip-compressed with --gzip)
  uint64_t body_bytes_uncompressed = 0;
  uint64_t discoveries = 0;        // successful cluster-view refreshes
  uint64_t placement_changes = 0;  // refreshes that moved a primary or changed the node list
  uint64_t refreshes_started = 0;  // cluster-view reads begun (the first one included); a
                                   // run may end before a late one completes
  uint64_t discovery_failures = 0;
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
