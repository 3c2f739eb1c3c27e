// RateSchedule: a request rate that changes over time (`--stages 'DUR:RATE,...'`, k6's
// ramping-arrival-rate). Each stage ramps the rate linearly from where the previous one ended
// (the first from the initial rate: --rate, or 0) to its target over its duration; after the
// last stage the rate stays at the last target.
//
// Request n (0-based, all threads together) is due when the integral of the rate from the
// start reaches n. The due time of every request is computed on its own from the closed form of
// that integral (a quadratic within a ramp), never by adding intervals, so there is no drift
// however long the run. A value type; immutable after Parse, so any thread may read it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"

namespace hammer::load {

class RateSchedule {
 public:
  struct Stage {
    Nanos duration = 0;
    double target = 0;  // requests per second at the stage's end
  };

  // "30s:100,1m30s:500,30s:0". Errors name the stage: "stage 2 '1m:x': expected DUR:RATE ...".
  static Result<RateSchedule> Parse(std::string_view text, double initial_rate);

  // When request n is due, in ns from the start; -1 when it never is (the rate has ended at 0).
  Nanos DueTime(uint64_t n) const;
  // How many requests are due by `elapsed` ns (the n with DueTime(n) <= elapsed).
  uint64_t DueCount(Nanos elapsed) const;
  // The integral of the rate over [0, elapsed]: requests due by then, as a real number.
  long double RequestsBy(Nanos elapsed) const;
  // The rate at `elapsed`.
  double RateAt(Nanos elapsed) const;

  Nanos total_duration() const { return total_; }
  double initial_rate() const { return initial_; }
  double peak_rate() const;
  const std::vector<Stage>& stages() const { return stages_; }

 private:
  struct Segment {
    Nanos start = 0;
    Nanos duration = 0;
    double from = 0;
    double to = 0;
    long double requests_before = 0;  // the integral up to `start`
  };
  static long double Integral(const Segment& s, long double seconds);

  double initial_ = 0;
  std::vector<Stage> stages_;
  std::vector<Segment> segments_;
  Nanos total_ = 0;
  long double total_requests_ = 0;
};

}  // namespace hammer::load
