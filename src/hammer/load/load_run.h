// LoadRun: a whole `hammer load` run. Starts one LoadWorker per thread on a LoopGroup, shows
// progress while they work (LoadProgress through a ProgressReporter: a live line on a terminal,
// Hadoop Streaming counters and status when asked), stops them on a signal, and merges their
// results into a LoadSummary (per-thread statistics are merged only here, at the end).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hammer/base/progress.h"
#include "hammer/base/status.h"
#include "hammer/http/client.h"
#include "hammer/load/abort_watch.h"
#include "hammer/load/grpc_answer.h"
#include "hammer/load/http_status_counts.h"
#include "hammer/load/load_counters.h"
#include "hammer/load/load_dashboard.h"
#include "hammer/load/load_metrics.h"
#include "hammer/load/load_options.h"
#include "hammer/load/replay_timing.h"
#include "hammer/load/spec_source.h"
#include "hammer/load/target_source.h"
#include "hammer/stats/key_stats.h"
#include "hammer/stats/key_table.h"
#include "hammer/stats/threshold.h"
#include "hammer/stats/timeline.h"

namespace hammer::load {

struct LoadSummary {
  uint64_t succeeded = 0;
  uint64_t failed = 0;
  double seconds = 0;
  bool open_loop = false;
  double target_rate = 0;
  int concurrency = 0;
  // How long requests waited for input lines that had not arrived (TargetSource::waited): in
  // open loop, time the schedule paused and that no latency counts.
  double input_wait_seconds = 0;
  LoadCounters counters;  // late, dropped, aborted, warmup, redirects, connections, TLS
  bool interrupted = false;
  int signal = 0;                    // the first SIGINT/SIGTERM that stopped the run, 0 if none
  std::optional<AbortReason> abort;  // --abort-on-fail stopped the run: why
  stats::KeyStats total;             // every key merged
  stats::Histogram uncorrected;      // open loop only
  std::vector<std::pair<std::string, stats::KeyStats>> keys;  // sorted by key
  stats::KeyFolding key_folding;  // what --max-keys grouped (folded == false: nothing)
  std::vector<std::string> failure_examples[kFailureCount];
  std::string source_warning;
  std::optional<Status> input_error;  // a malformed request file ended the run
  Status records_error;          // records could not be written (the run stopped then); OK if none
  uint64_t records_written = 0;  // record or partial lines written whole
  std::map<std::string, uint64_t> skipped;  // request-file entries skipped, by reason
  stats::Histogram connect_time;            // TCP connects of new connections, µs
  stats::Histogram handshake_time;          // TLS handshakes, µs
  GrpcStatusCounts grpc_statuses;           // gRPC calls by grpc-status
  HttpStatusCounts status_codes;            // responses by HTTP status
  stats::Timeline timeline;   // per second of the run, from the workers' interval snapshots
  bool replayed = false;      // --replay: sent on a recorded schedule
  double speed = 1.0;         // --speed
  ReplayTiming replay;        // --replay: due, sent and late per second of the schedule
  int64_t wall_start_us = 0;  // the measured part of the run (after --warmup), Unix µs
  int64_t wall_end_us = 0;

  uint64_t requests() const { return succeeded + failed; }
  double rps() const { return seconds > 0 ? static_cast<double>(requests()) / seconds : 0; }
  // What --threshold rules judge; views into this summary.
  stats::ThresholdInputs threshold_inputs() const { return {total, seconds, keys}; }
};

// Where requests come from: a URL list, or a request file (exactly one is set).
struct LoadInput {
  std::unique_ptr<TargetSource> lines;
  std::unique_ptr<SpecSource> specs;
};

// Runs to completion. Records go to `records_fd` (stdout). Fails on set-up errors and on a
// malformed request file (the message names the file and line; what was sent is in summary).
// Records that cannot be written stop the run as a signal does (what was sent is in the
// summary, the error in records_error).
// `metrics` (--metrics-listen) and `dashboard` (--dashboard) (null: none; else
// options.live_key_metrics must be set) get the run's figures while it works and its final
// ones at the end; they keep serving them after. `abort` (--abort-on-fail; null: none; else
// options.live_key_metrics must be set) is asked every tick whether to stop: when it says so,
// the run stops as on a first signal (requests in flight finish) and summary.abort says why.
Result<LoadSummary> RunLoad(const LoadOptions& options, LoadInput input, int records_fd,
                            const ProgressOptions& progress, LoadMetrics* metrics = nullptr,
                            LoadDashboard* dashboard = nullptr, AbortWatch* abort = nullptr);

}  // namespace hammer::load
