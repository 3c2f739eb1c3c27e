// PairedIntervals: two sides answering the same requests (hammer dark's primary and dark copy),
// per interval of the monotonic clock: how many pairs there were, and how many had side b slower
// than side a by more than each step of a fixed ladder of thresholds. A verdict asks of them
// whether b was slower than a in most intervals, not only overall: a slowdown that persists,
// not a stall of a few hundred milliseconds (a descheduled process, a pause) that happened to
// cover much of a short observation. Requests within one interval share such a stall, so the
// intervals, not the requests, are the independent units for that question.
//
// Per interval, "b slower by more than T in more than half the pairs" says that the median of
// the paired differences exceeds T, unmoved by a few pairs that one side's hiccup made slow.
// T is any step of kThresholdsMicros (0, then 1-2-5 from 1 µs to 10 s), so the counts do not
// depend on the rule judging them and stay mergeable; a rule's margin is rounded down to a
// step (ThresholdAtMost), i.e. towards calling an interval slower.
//
// Bounded: at most kMaxIntervals intervals are kept; beyond that the interval length doubles and
// neighbouring intervals are added together, so hours of traffic cost what minutes do. Intervals
// are aligned on multiples of their length on the monotonic clock, so instances kept per thread
// with the same base length merge exactly (Merge brings both to the longer length first; an
// empty instance takes the other's length). A mergeable value type; not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "hammer/base/clock.h"

namespace hammer::stats {

class PairedIntervals {
 public:
  static constexpr size_t kMaxIntervals = 256;
  static constexpr std::array<int64_t, 23> kThresholdsMicros = {
      0,    1,     2,     5,     10,     20,     50,     100,     200,     500,     1000,    2000,
      5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000, 2000000, 5000000, 10000000};

  explicit PairedIntervals(Nanos interval = kSecond);

  // One request answered by both sides at `when`, taking a_micros and b_micros.
  void Record(MonoNanos when, int64_t a_micros, int64_t b_micros);
  void Merge(const PairedIntervals& other);

  struct Interval {
    MonoNanos start = 0;
    uint64_t pairs = 0;
    // slower[k]: pairs with b − a > kThresholdsMicros[k].
    std::array<uint64_t, kThresholdsMicros.size()> slower{};
  };
  std::vector<Interval> intervals() const;  // in time order, none empty
  Nanos interval() const { return interval_; }
  bool empty() const { return counts_.empty(); }

  // The index of the largest step not above `micros` (0 for anything below 1 µs).
  static size_t ThresholdAtMost(double micros);

 private:
  struct Counts {
    uint64_t pairs = 0;
    // beyond[k]: pairs whose b − a exceeds step k but not step k + 1 (the last: beyond it).
    std::array<uint64_t, kThresholdsMicros.size()> beyond{};
    void Add(const Counts& other);
  };
  void Coarsen(Nanos interval);

  Nanos interval_;
  std::map<int64_t, Counts> counts_;  // by start / interval_
};

}  // namespace hammer::stats
