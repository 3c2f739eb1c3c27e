#include "hammer/load/run_monitor.h"

#include <utility>

namespace hammer::load {

void RunMonitor::Report(int index, IntervalSnapshot& interval) {
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
  }
  in_flight_[static_cast<size_t>(index)] = interval.in_flight;
  counters_[static_cast<size_t>(index)] = interval.counters;
  if (interval.keys.size() > 0) key_intervals_.push_back(std::move(interval.keys));
}

std::vector<stats::KeyTable> RunMonitor::TakeKeyIntervals() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(key_intervals_, {});
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
