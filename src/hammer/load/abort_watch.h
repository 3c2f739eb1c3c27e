// AbortWatch: `hammer load --abort-on-fail`. Judges the --threshold rules while the run goes
// on and says when the run should stop, on this worker's figures so far or, with --fleet, on
// the fleet's merged figures (FleetAbort, fleet_abort.h).
//
// Every kCheckEvery, from --abort-grace after the run's start (the grace counts from the
// start, --warmup included):
//   - alone: the thresholds are evaluated on this worker's figures so far (the same
//     EvaluateThresholds as the summary's, over the same per-key rows, with the measured time
//     so far as rps's run time);
//   - with a fleet: this worker publishes its total and the keys thresholds name
//     (FleetPartial), merges them with the other workers' last published ones (exact
//     histograms, KeyStats::Merge; rps's run time is the longest worker's) and evaluates the
//     thresholds on the merge; the first failure is written to the fleet's abort node.
// Only a threshold that fails on a measured value aborts: one that cannot be checked yet (no
// request so far, or none for its key) does not. With a fleet, an abort node written by any
// worker stops this one as soon as it is seen, grace or not. Once it has said to stop, the
// watch says so at every later Update with the same reason.
//
// Figures: the workers' per-key intervals, taken from the RunMonitor as one of its key readers
// (options.live_key_metrics must be set), merged into a table of the run so far.
//
// Threads: the run's controlling thread only (RunLoad's DriveWorkers). `fleet` (may be null)
// must outlive this object.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/load/fleet_abort.h"
#include "hammer/load/fleet_partial.h"
#include "hammer/load/run_monitor.h"
#include "hammer/stats/key_stats.h"
#include "hammer/stats/key_table.h"
#include "hammer/stats/threshold.h"

namespace hammer::load {

struct AbortOptions {
  std::vector<stats::Threshold> thresholds;
  Nanos grace = 10 * kSecond;  // --abort-grace
  Nanos warmup = 0;            // --warmup: not part of the measured time
  int worker = 0;              // this worker's index (for the abort's reason)
  size_t max_keys = 0;         // the key table's bounds (LoadOptions::max_keys, max_key_bytes)
  uint64_t max_key_bytes = 0;
};

class AbortWatch {
 public:
  static constexpr Nanos kCheckEvery = kSecond;

  AbortWatch(AbortOptions options, FleetAbort* fleet);

  // When the workers start; `key_reader` is this watch's reader of the RunMonitor's intervals.
  void BeginRun(MonoNanos start, size_t key_reader);
  // Merges what the workers queued and, every kCheckEvery, publishes and judges. Returns the
  // reason to stop once there is one (then at every call), else null.
  const AbortReason* Update(MonoNanos now, RunMonitor& monitor);

  // The decision alone, on given figures at `now` (Update's, after merging; public for tests):
  // null before the grace has passed or when every threshold holds or cannot be checked yet,
  // else the first threshold that failed, as judged by this worker (`fleet` marks figures that
  // are the fleet's merge).
  std::optional<AbortReason> Judge(MonoNanos now, const stats::ThresholdInputs& inputs,
                                   bool fleet) const;

  const std::optional<AbortReason>& reason() const { return reason_; }

 private:
  // This worker's figures so far: the total and the keys thresholds name.
  FleetPartial OwnFigures(MonoNanos now) const;
  void Check(MonoNanos now);

  const AbortOptions options_;
  FleetAbort* const fleet_;
  std::vector<std::string> named_keys_;  // keys named by @KEY thresholds, sorted, unique
  stats::KeyTable keys_;
  MonoNanos start_ = 0;
  MonoNanos next_check_ = 0;
  size_t key_reader_ = 0;
  std::optional<AbortReason> reason_;
};

}  // namespace hammer::load
