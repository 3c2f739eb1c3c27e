// ConstantQpsSchedule: when a constant-qps dark cluster sends its next copy. It is the timing
// half of rest.li's ConstantQpsRateLimiter as the dark-cluster strategy configures it (burst 1;
// r2-core in github.com/linkedin/rest.li), with time passed in so that tests use a fake clock.
//
// At rate r (requests per second; fractional rates are fine: 0.05 is one every 20 s) time is
// cut into periods of 1/r. Each period holds exactly one dispatch, at a random phase in
// [0, 1/r) drawn per period (the jitter rest.li added so that a fleet of proxies does not send
// in lockstep). So over any window of length T starting at a period boundary, the number of
// dispatches is floor(T·r) or floor(T·r) + 1.
//
//  * The schedule runs only between Resume (there is something to send) and Pause (there was
//    nothing to send). Resuming after the next planned dispatch was missed starts a fresh period
//    at `now`; resuming earlier keeps the plan, so pausing and resuming within a period never
//    adds a dispatch.
//  * SetRate with an unchanged rate does nothing (callers may call it on every request). A new
//    rate rescales the current period and its planned dispatch around `now`: the fraction of the
//    period already elapsed, and whether its dispatch already happened, carry over. A rate
//    change therefore neither bursts nor loses a dispatch.
//  * A caller that is late (its timer fired after the dispatch time) gets the missed dispatches
//    on its next TakeDue calls, except those planned more than `max_lag` before `now`, which are
//    skipped and counted: a stalled loop does not come back with a burst.
//
// Not thread-safe: one per dark cluster and event loop.
#pragma once

#include <cstdint>
#include <limits>

#include "hammer/base/clock.h"
#include "hammer/dark/uniform.h"

namespace hammer::dark {

class ConstantQpsSchedule {
 public:
  static constexpr MonoNanos kNever = std::numeric_limits<MonoNanos>::max();

  explicit ConstantQpsSchedule(uint64_t seed, Nanos max_lag = kSecond);

  // Requests per second; not positive or not finite means 0 (nothing is sent). Clamped to
  // kMaxConstantQpsRate.
  void SetRate(double per_second, MonoNanos now);
  double rate() const { return rate_; }
  double interval_nanos() const { return interval_; }

  void Resume(MonoNanos now);
  void Pause() { running_ = false; }
  bool running() const { return running_; }

  // If a dispatch is due at or before `now`, consumes it and returns true. Call repeatedly until
  // it returns false.
  bool TakeDue(MonoNanos now);

  // When the next dispatch is planned; kNever while paused or at rate 0.
  MonoNanos next_dispatch() const { return running_ && anchored_ ? dispatch_at_ : kNever; }

  uint64_t taken() const { return taken_; }
  uint64_t skipped() const { return skipped_; }  // dispatches dropped for lateness

  // Paused, with no plan: the next Resume starts afresh (used on refresh and shutdown).
  void Reset();

 private:
  MonoNanos PeriodStart(int64_t index) const;
  void StartAt(MonoNanos start);  // period 0 begins at `start`
  void DrawDispatch();            // plans the current period's dispatch
  void Advance(MonoNanos now);    // moves to the next period, skipping hopelessly late ones

  SplitMix64 rng_;
  Nanos max_lag_;
  double rate_ = 0;
  double interval_ = 0;  // nanoseconds per period
  bool running_ = false;
  bool anchored_ = false;  // a period plan exists (rate > 0 and started)
  MonoNanos anchor_ = 0;   // start of period 0
  int64_t index_ = 0;      // current period
  MonoNanos dispatch_at_ = 0;
  uint64_t taken_ = 0;
  uint64_t skipped_ = 0;
};

}  // namespace hammer::dark
