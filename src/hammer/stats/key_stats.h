// KeyStats: everything hammer knows about one key (a URL, path or name) after any number of
// records: counts, exact sum/min/max of successful latencies, their histogram, and failures by
// type. The seed reducer's columns (sum, average, max, min, errors, count) come from here.
//
// Latencies are integer microseconds, so sums are exact and Merge is exact: merging the
// KeyStats of any split of a record stream gives a result equal (operator==) to recording the
// whole stream into one. A value type; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "hammer/base/failure.h"
#include "hammer/stats/histogram.h"

namespace hammer::stats {

struct KeyStats {
  uint64_t count = 0;   // successful requests (records with a time)
  uint64_t errors = 0;  // failed requests (records without a time)
  int64_t sum_micros = 0;
  int64_t min_micros = std::numeric_limits<int64_t>::max();  // exact; valid when count > 0
  int64_t max_micros = 0;                                    // exact; valid when count > 0
  Histogram histogram;                                       // successful latencies, µs
  LazyFailureCounts failures;  // by type where known; seed records carry no type, so
                               // failures.Total() <= errors

  void RecordSuccess(int64_t micros) {
    ++count;
    sum_micros += micros;
    if (micros < min_micros) min_micros = micros;
    if (micros > max_micros) max_micros = micros;
    histogram.Record(micros);
  }
  void RecordFailure(std::optional<Failure> type) {
    ++errors;
    if (type) failures.Add(*type);
  }
  void Merge(const KeyStats& other) {
    count += other.count;
    errors += other.errors;
    sum_micros += other.sum_micros;
    if (other.count > 0) {
      if (other.min_micros < min_micros) min_micros = other.min_micros;
      if (other.max_micros > max_micros) max_micros = other.max_micros;
    }
    histogram.Merge(other.histogram);
    failures.Merge(other.failures);
  }
  // False when RecordSuccess(micros) / Merge(other) would overflow the sum or a counter. Only
  // hostile input gets there (2^63 µs is 292,000 years); readers treat it as malformed.
  bool CanRecordSuccess(int64_t micros) const {
    int64_t sum = 0;
    return !__builtin_add_overflow(sum_micros, micros, &sum);
  }
  bool CanMerge(const KeyStats& other) const {
    uint64_t n = 0;
    int64_t sum = 0;
    return !__builtin_add_overflow(count, other.count, &n) &&
           !__builtin_add_overflow(errors, other.errors, &n) &&
           !__builtin_add_overflow(sum_micros, other.sum_micros, &sum);
  }
  uint64_t total() const { return count + errors; }
  // The successes' latency at `percentile`, held within the exact [min, max]: a histogram
  // bucket's highest equivalent value may lie up to 0.1% above the largest value recorded, and
  // a report with p99 > max reads as a bug. Every report takes its percentiles from here (or,
  // several at once, from ReportedPercentileValues). Meaningful when count > 0.
  int64_t Percentile(double percentile) const {
    if (min_micros >= max_micros) return min_micros;  // what clamping gives, without a lookup
    return std::clamp(histogram.ValueAtPercentile(percentile), min_micros, max_micros);
  }
  double MeanMicros() const {
    return count ? static_cast<double>(sum_micros) / static_cast<double>(count) : 0.0;
  }
  bool operator==(const KeyStats&) const = default;
};

}  // namespace hammer::stats
