// Time as plain integers: nanoseconds on the monotonic clock for everything measured, and
// microseconds since the Unix epoch where a wall-clock timestamp is written out. Integers keep
// the hot path free of conversions and make pacing arithmetic exact and testable.
#pragma once

#include <cstdint>
#include <ctime>

namespace hammer {

using MonoNanos = int64_t;  // CLOCK_MONOTONIC, nanoseconds
using Nanos = int64_t;      // a duration in nanoseconds

constexpr Nanos kMicrosecond = 1000;
constexpr Nanos kMillisecond = 1000 * kMicrosecond;
constexpr Nanos kSecond = 1000 * kMillisecond;

inline MonoNanos MonoNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kSecond + ts.tv_nsec;
}

// Microseconds since the Unix epoch.
inline int64_t WallNowMicros() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace hammer
