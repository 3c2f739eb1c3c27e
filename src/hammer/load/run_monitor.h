// RunMonitor: how workers report progress to the thread that prints it.
//
// Each worker keeps its own statistics (nothing shared on the hot path) and, once per
// interval, hands a snapshot of that interval to the monitor, which is the only shared,
// locked object of a run. The main thread reads totals for the live line, Hadoop counters
// (`reporter:counter:error,<type>,<delta>`) and status lines. With --metrics-listen,
// --dashboard or --abort-on-fail the interval also carries its figures per key
// (IntervalSnapshot::keys), which the monitor only queues for the main thread to merge
// (TakeKeyIntervals): a move under the lock for one live reader; with more, every reader but
// the last gets a copy, made by the worker before it takes the lock. A worker never waits for
// that work, nor for a scrape or a page.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/failure.h"
#include "hammer/load/load_counters.h"
#include "hammer/stats/histogram.h"
#include "hammer/stats/key_table.h"
#include "hammer/stats/timeline.h"

namespace hammer::load {

struct IntervalSnapshot {
  uint64_t succeeded = 0;
  uint64_t failed = 0;
  FailureCounts failures;
  stats::Histogram latency;  // successful requests of the interval, µs
  uint64_t in_flight = 0;
  LoadCounters counters;      // the worker's, since the run began
  int64_t wall_start_ms = 0;  // when this interval began (Unix ms), for the timeline
  int64_t wall_end_ms = 0;    // when it ended; the timeline counts it at the midpoint
  // The interval's figures per key, filled only for --metrics-listen and --dashboard (bounded
  // by --max-keys like the worker's own table); empty otherwise.
  stats::KeyTable keys = stats::KeyTable(0);
};

class RunMonitor {
 public:
  // `key_readers`: how many live readers take the per-key intervals (TakeKeyIntervals): the
  // metrics, the dashboard, the abort watch (--abort-on-fail), each when asked for.
  explicit RunMonitor(int workers, size_t key_readers = 1)
      : in_flight_(static_cast<size_t>(workers), 0),
        counters_(static_cast<size_t>(workers)),
        key_intervals_(std::max<size_t>(1, key_readers)) {}

  // Called by worker `index` with the interval it just closed (its `keys` are moved out).
  void Report(int index, IntervalSnapshot& interval);

  struct View {
    uint64_t succeeded = 0;
    uint64_t failed = 0;
    uint64_t in_flight = 0;
    LoadCounters counters;  // every worker's, as last reported
    FailureCounts failures;
    stats::Histogram recent;  // everything reported since the previous TakeView
  };
  // Totals so far, plus the intervals reported since the last TakeView (which it consumes:
  // one reader, the live line).
  View TakeView();
  // Totals so far; `recent` left empty and untouched.
  View Totals();
  // Requests, errors and latency per second of the run (for the HTML report).
  stats::Timeline TakeTimeline();
  // The part of the timeline reported since the previous call (the live dashboard merges
  // these into its own copy). Kept only once called: a run without a live reader pays nothing.
  stats::Timeline TakeRecentTimeline();
  // The per-key tables of the intervals reported since reader `reader`'s last call, oldest
  // first (reader < key_readers).
  std::vector<stats::KeyTable> TakeKeyIntervals(size_t reader = 0);

 private:
  std::mutex mutex_;
  uint64_t succeeded_ = 0;
  uint64_t failed_ = 0;
  FailureCounts failures_;
  stats::Histogram recent_;
  stats::Timeline timeline_;
  std::vector<uint64_t> in_flight_;
  std::vector<LoadCounters> counters_;  // per worker
  bool recent_timeline_wanted_ = false;
  stats::Timeline recent_timeline_;
  std::vector<std::vector<stats::KeyTable>> key_intervals_;  // per reader
};

}  // namespace hammer::load
