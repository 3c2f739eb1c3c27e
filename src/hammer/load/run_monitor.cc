#include "hammer/load/run_monitor.h"

#include <utility>

namespace hammer::load {

void RunMonitor::Report(int index, IntervalSnapshot& interval) {
  // Every reader but the last gets a copy, made before the lock; the last gets the table.
  std::vector<stats::KeyTable> copies;
  if (interval.keys.size() > 0) {
    for (size_t reader = 0; reader + 1 < key_intervals_.size(); ++reader)
      copies.push_back(interval.keys);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  succeeded_ += interval.succeeded;
  failed_ += interval.failed;
  failures_.Merge(interval.failures);
  recent_.Merge(interval.latency);
  if (interval.succeeded + interval.failed > 0) {
    // The midpoint: an interval that ends on a second boundary (LoadWorker aligns them) stays
    // in its second even when the timer fired a little early or late.
    const int64_t at =
        interval.wall_end_ms > interval.wall_start_ms
            ? interval.wall_start_ms + (interval.wall_end_ms - interval.wall_start_ms) / 2
            : interval.wall_start_ms;
    timeline_.Add(at, interval.succeeded, interval.failed, interval.latency);
    if (recent_timeline_wanted_)
      recent_timeline_.Add(at, interval.succeeded, interval.failed, interval.latency);
  }
  in_flight_[static_cast<size_t>(index)] = interval.in_flight;
  counters_[static_cast<size_t>(index)] = interval.counters;
  if (interval.keys.size() > 0) {
    for (size_t reader = 0; reader < copies.size(); ++reader)
      key_intervals_[reader].push_back(std::move(copies[reader]));
    key_intervals_.back().push_back(std::move(interval.keys));
  }
}

std::vector<stats::KeyTable> RunMonitor::TakeKeyIntervals(size_t reader) {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(key_intervals_[reader], {});
}

stats::Timeline RunMonitor::TakeRecentTimeline() {
  std::lock_guard<std::mutex> lock(mutex_);
  recent_timeline_wanted_ = true;
  return std::exchange(recent_timeline_, stats::Timeline());
}

RunMonitor::View RunMonitor::Totals() {
  std::lock_guard<std::mutex> lock(mutex_);
  View view;
  view.succeeded = succeeded_;
  view.failed = failed_;
  view.failures = failures_;
  for (uint64_t n : in_flight_)
    view.in_flight += n;
  for (const LoadCounters& counters : counters_)
    view.counters.MergeCounters(counters);
  return view;
}

stats::Timeline RunMonitor::TakeTimeline() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::move(timeline_);
}

RunMonitor::View RunMonitor::TakeView() {
  View view = Totals();
  std::lock_guard<std::mutex> lock(mutex_);
  view.recent = std::move(recent_);
  recent_ = stats::Histogram();
  return view;
}

}  // namespace hammer::load
