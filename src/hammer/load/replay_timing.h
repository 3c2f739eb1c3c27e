// ReplayTiming: how closely a --replay run kept to its recorded schedule, per second of the
// schedule, so that a run the machine could not hold says how far behind it fell and when,
// rather than quietly sending the recording compressed.
//
// For each send: its due time and its actual send time, both as offsets from the run's start.
// Per second of the schedule (second k holds [k s, k+1 s) of the schedule at --speed):
//   due         entries due in it
//   sent        entries actually sent in it (whatever their due time): the achieved pace
//   late        entries due in it and sent more than kLateThreshold after their due time
//   max_behind  the most any entry due in it was sent after its due time
// Seconds past kMaxSeconds are counted in the last row. The gaps between consecutive due times
// and between consecutive send times go into two histograms (nanoseconds, 3 significant
// digits): InterArrivalKs() compares their distributions.
//
// A mergeable value (row by row, histograms added); a replay runs on one thread, so merging
// is of one worker's timing into an empty one. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/stats/histogram.h"

namespace hammer::load {

class ReplayTiming {
 public:
  static constexpr size_t kMaxSeconds = 86'400;
  static constexpr Nanos kLateThreshold = kMillisecond;

  struct Second {
    uint64_t due = 0;
    uint64_t sent = 0;
    uint64_t late = 0;
    Nanos max_behind = 0;
  };

  // One entry due `due` after the start and sent `sent` after it, in send order.
  void Sent(Nanos due, Nanos sent);
  void Merge(const ReplayTiming& other);

  bool empty() const { return seconds_.empty(); }
  const std::vector<Second>& seconds() const { return seconds_; }
  uint64_t late() const;
  Nanos max_behind() const;
  // The two-sample Kolmogorov-Smirnov statistic (the largest difference between the two
  // empirical distribution functions) of the scheduled and the achieved gaps between
  // consecutive sends: 0 when the achieved sends have the schedule's rhythm, towards 1 as they
  // bunch or spread. Computed over the histograms' buckets (within 0.1 % of each gap). 0 with
  // fewer than two sends.
  double InterArrivalKs() const;

 private:
  Second& Row(Nanos offset);

  std::vector<Second> seconds_;
  stats::Histogram scheduled_gaps_;  // ns
  stats::Histogram achieved_gaps_;   // ns
  Nanos last_due_ = -1;
  Nanos last_sent_ = -1;
};

}  // namespace hammer::load
