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
#include "hammer/load/http_status_counts.h"
#include "hammer/load/load_counters.h"
#include "hammer/load/replay_timing.h"
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
  LoadCounters counters;
  stats::Histogram connect_time;    // TCP connects of new connections, µs
  stats::Histogram handshake_time;  // TLS handshakes of new connections, µs
  GrpcStatusCounts grpc_statuses;   // gRPC calls answered with a grpc-status (after --warmup)
  HttpStatusCounts status_codes;    // responses by HTTP status (after --warmup)
  ReplayTiming replay;              // --replay: the schedule kept, per second

  // Adds `other` (left valid but unspecified: its examples are moved).
  void Merge(WorkerResult&& other);
};

}  // namespace hammer::load
