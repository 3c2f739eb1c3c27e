// Diffy's noise cancellation (github.com/twitter-archive/diffy: analysis/
// JoinedDifferences.scala and InMemoryDifferenceCollector.scala): a field whose responses differ
// between the dark instance and the primary is reported only when that difference rate clearly
// exceeds the rate at which two regular instances (primary and secondary) differ on the
// same field — timestamps, request ids, random sampling are then cancelled as noise.
//
// For one endpoint with `total` compared requests, a field that differed `raw` times (dark vs
// primary) and `noise` times (secondary vs primary) is reported iff
//
//   raw > noise
//   AND 100·|raw − noise| / (raw + noise) > relative_percent   (default 20)
//   AND 100·|raw − noise| / total         > absolute_percent   (default 0.03)
//
// with strict comparisons, as Diffy's code does (its flag help says "inclusive"; the code does
// not). Worked examples with total = 1000: raw 1000 / noise 1000 is hidden; raw 50 / noise 0 is
// reported (100 %, 5 %); raw 110 / noise 100 is hidden (relative 4.8 %). Without a secondary,
// noise is 0 and a field is reported once it differs in more than absolute_percent of requests.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

namespace hammer::dark {

struct NoiseThresholds {
  double relative_percent = 20;
  double absolute_percent = 0.03;
};

struct NoiseVerdict {
  bool reported = false;
  double relative_percent = 0;  // 100·|raw − noise| / (raw + noise); 0 when both are 0
  double absolute_percent = 0;  // 100·|raw − noise| / total; 0 when total is 0
};

NoiseVerdict JudgeField(uint64_t raw, uint64_t noise, uint64_t total,
                        const NoiseThresholds& thresholds = {});

}  // namespace hammer::dark
