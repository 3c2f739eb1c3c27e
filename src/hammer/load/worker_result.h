// WorkerResult: what one LoadWorker measured over a run, and what a run measured once merged.
// A mergeable value: merging the results of every worker, in any order, gives the run's figures
// (the counts, sums and histograms exactly; failure examples are the first kFailureExamples per
// type in merge order). Written by its worker's loop thread only; merged by the main thread
// after the loops have returned.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hammer/base/failure.h"
#include "hammer/http/client.h"
#include "hammer/http/tls.h"
#include "hammer/load/grpc_answer.h"
#include "hammer/stats/histogram.h"
#include "hammer/stats/key_stats.h"
#include "hammer/stats/key_table.h"

namespace hammer::load {

// Up to this many distinct failure details are kept per type for the summary.
inline constexpr size_t kFailureExamples = 3;

struct WorkerResult {
  stats::KeyTable keys;          // bounded by LoadOptions::max_keys (set by whoever creates it)
  stats::Histogram uncorrected;  // open loop: latency from the actual send time
  FailureCounts failures;
  std::array<std::vector<std::string>, kFailureCount> failure_examples;
  uint64_t late_no_slot = 0;        // open loop: sent > 1 ms late because every slot was busy
  uint64_t late_behind = 0;         // open loop: sent > 1 ms late because the loop was behind (CPU)
  uint64_t dropped = 0;             // open loop: due before the end, never sent (slots busy)
  uint64_t redirects = 0;           // redirect hops followed
  uint64_t aborted = 0;             // in flight when a second signal abandoned them
  uint64_t warmup = 0;              // ended, but due or sent during --warmup: not counted
  stats::Histogram connect_time;    // TCP connects of new connections, µs
  stats::Histogram handshake_time;  // TLS handshakes of new connections, µs
  http::ClientCounters client;
  http::TlsCounters tls;
  GrpcStatusCounts grpc_statuses;  // gRPC calls answered with a grpc-status (after --warmup)

  // Adds `other` (left valid but unspecified: its examples are moved).
  void Merge(WorkerResult&& other);
};

}  // namespace hammer::load
