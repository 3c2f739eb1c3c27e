// OpenLoopPacer: when each request of an open-loop (--rate) run is due.
//
// Request n of the whole run (all threads) is due at start + n / rate, computed exactly in
// integer nanoseconds (the rate is held as requests per 1000 s, so there is no drift over long
// runs). With T threads, thread i sends requests i, i+T, i+2T...: the schedule interleaves
// perfectly and the total rate is exact. Latency is measured from the due time, not from when
// the request could actually be sent (no coordinated omission).
//
// The schedule counts only time when a request could have been sent: while the input has no
// line for the request that is due (a pipe or terminal that is idle), no request can be sent
// and the target is not to blame, so the thread's schedule pauses (Delay): that request and
// every later one become due as much later as the wait lasted. A request's intended send time
// therefore starts when its input is available; time lost to busy slots or a busy generator is
// not a pause and still counts as latency. A value type; thread-compatible.
#pragma once

#include <cstdint>

#include "hammer/base/clock.h"
#include "hammer/load/rate_schedule.h"

namespace hammer::load {

class OpenLoopPacer {
 public:
  // `rate` requests per second in total (> 0); this pacer serves thread `index` of `threads`.
  OpenLoopPacer(MonoNanos start, double rate, int index, int threads);
  // A rate that changes over time (--stages): request n is due at start + schedule.DueTime(n).
  // `schedule` must outlive the pacer.
  OpenLoopPacer(MonoNanos start, const RateSchedule* schedule, int index, int threads);

  // Global sequence number of this thread's k-th request.
  uint64_t GlobalIndex(uint64_t k) const { return k * threads_ + index_; }
  // When this thread's k-th request is due (kNever when a schedule's rate has ended at 0).
  static constexpr MonoNanos kNever = INT64_MAX / 2;
  MonoNanos DueTime(uint64_t k) const;
  // Requests of this thread due at or before `now` (i.e. the k of the first not yet due).
  uint64_t DueCount(MonoNanos now) const;
  int64_t millirate() const { return millirate_; }
  // Pauses the schedule: every request not yet sent becomes due `pause` later (>= 0).
  void Delay(Nanos pause) { start_ += pause; }

 private:
  MonoNanos start_;
  int64_t millirate_;                       // requests per 1000 seconds (constant rate)
  const RateSchedule* schedule_ = nullptr;  // set: the rate follows it instead
  uint64_t index_;
  uint64_t threads_;
};

// Splits `total` as evenly as possible over `parts`; part i gets the i-th share (earlier
// parts get the remainder). Used for concurrency per thread and rate per worker.
uint64_t ShareOf(uint64_t total, int parts, int i);

}  // namespace hammer::load
