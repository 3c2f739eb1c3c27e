// RetryBackoff: how long `hammer bulk` waits before sending a rejected or failed batch again.
//
// Exponential with "equal jitter": the nominal delay of attempt n (n = 1 for the first retry)
// is min(max_delay, initial_delay * 2^(n-1)); the actual delay is uniform in
// [nominal/2, nominal]. Half the delay is guaranteed, so a cluster shedding load (429) gets a
// real pause, and the random half spreads the writers that were rejected together.
// Attempts are bounded: Exhausted(n) is true once n retries have been made.
//
// Errors: none. Threads: a value type; Delay() is pure (the caller supplies the randomness).
#pragma once

#include <cstdint>

#include "hammer/base/clock.h"

namespace hammer::search {

struct RetryBackoff {
  Nanos initial_delay = 100 * kMillisecond;
  Nanos max_delay = 10 * kSecond;
  int max_retries = 8;  // retries after the first attempt; 0: never retry

  // The nominal (un-jittered) delay before retry `attempt` (>= 1).
  Nanos Nominal(int attempt) const;
  // The jittered delay before retry `attempt`; `random` is any uniformly distributed 64-bit
  // value (it picks the point in [nominal/2, nominal]).
  Nanos Delay(int attempt, uint64_t random) const;
  // True when `retries_made` retries have used up the budget.
  bool Exhausted(int retries_made) const { return retries_made >= max_retries; }
};

}  // namespace hammer::search
