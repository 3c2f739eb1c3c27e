// ClusterShape: what a fork strategy needs to know about one dark cluster at one moment — the
// multiplier, the instance counts of the regular (Ns) and dark (Nd) clusters, and for
// constant-qps the rate each dark instance should receive — and the two rates derived from
// it (rest.li D2 dark clusters, github.com/linkedin/rest.li darkcluster strategies):
//
//   copies per request (relative, identical) = m · Nd / Ns
//   requests per second (constant-qps)       = Nd · target / Ns
//
// Both are 0 when Ns is 0 (membership unknown or empty: send nothing) or when the multiplier
// or target is not a positive finite number. Pure functions; thread-safe.
#pragma once

#include <cmath>
#include <cstdint>

namespace hammer::dark {

struct ClusterShape {
  double multiplier = 0;           // m
  uint32_t regular_instances = 0;  // Ns
  uint32_t dark_instances = 0;     // Nd
  double target_rate = 0;          // constant-qps: requests per second per dark instance

  bool operator==(const ClusterShape&) const = default;
};

// A guard against misconfiguration (m = 1000 with Nd/Ns = 1000 would ask for a million copies
// of every request): the copies-per-request average is clamped to this.
inline constexpr double kMaxCopiesPerRequest = 1000;
// Constant-qps rates are clamped to this many requests per second (one per microsecond).
inline constexpr double kMaxConstantQpsRate = 1e6;

// m · Nd / Ns, in [0, kMaxCopiesPerRequest].
inline double CopiesPerRequest(const ClusterShape& shape) {
  if (shape.regular_instances == 0 || !(shape.multiplier > 0) || !std::isfinite(shape.multiplier))
    return 0;
  double average = shape.multiplier * static_cast<double>(shape.dark_instances) /
                   static_cast<double>(shape.regular_instances);
  return average < kMaxCopiesPerRequest ? average : kMaxCopiesPerRequest;
}

// Nd · target / Ns requests per second, in [0, kMaxConstantQpsRate].
inline double ConstantQpsSendRate(const ClusterShape& shape) {
  if (shape.regular_instances == 0 || !(shape.target_rate > 0) || !std::isfinite(shape.target_rate))
    return 0;
  double rate = static_cast<double>(shape.dark_instances) * shape.target_rate /
                static_cast<double>(shape.regular_instances);
  return rate < kMaxConstantQpsRate ? rate : kMaxConstantQpsRate;
}

}  // namespace hammer::dark
