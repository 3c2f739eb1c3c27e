// Timeline: requests, errors and the latency histogram of a run, per time bucket, for
// throughput and percentiles over time (the HTML report's time charts, `--hdr-log`).
//
// Buckets are aligned to multiples of their width in Unix epoch milliseconds (a 10 s bucket
// starts at a multiple of 10 000 ms since the epoch). The width starts at 1 s. When the span
// from the first to the last bucket would exceed max_buckets, the width grows along the ladder
// 1, 2, 10, 20, 60, 120, 600, 1200, 3600, 7200, 21600, 43200, 86400 s and then doubles; each
// width divides the next, so coarsening merges whole buckets and stays exact (no sample changes
// bucket boundaries). Memory is therefore bounded by max_buckets histograms whatever the span.
//
// A value type: copyable, mergeable. Merge() of the timelines of any split of a record stream
// equals (operator==) adding the whole stream to one timeline with the same max_buckets: a
// merge coarsens to the wider of the two widths, then as the joint span needs, which is the
// width one timeline would have reached. Not thread-safe; keep one per thread and merge at the
// end. Timestamps below 0 are recorded as 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "hammer/stats/histogram.h"

namespace hammer::stats {

class Timeline {
 public:
  static constexpr size_t kDefaultMaxBuckets = 300;

  struct Bucket {
    uint64_t requests = 0;  // successes + failures that ended in this bucket
    uint64_t errors = 0;    // failures
    Histogram latency;      // successes' latencies, µs
    bool operator==(const Bucket&) const = default;
  };

  // max_buckets >= 2.
  explicit Timeline(size_t max_buckets = kDefaultMaxBuckets);

  // One timestamped record (record.h): a success of `micros` or a failure, ended at epoch_ms.
  void AddSuccess(int64_t epoch_ms, int64_t micros);
  void AddFailure(int64_t epoch_ms);
  // An interval summary, e.g. one of `hammer load`'s per-second snapshots: `ok` successes with
  // latencies `latency` and `errors` failures, counted in the bucket holding epoch_ms_start.
  // `latency` normally holds `ok` values; only the counts given here go into requests/errors.
  void Add(int64_t epoch_ms_start, uint64_t ok, uint64_t errors, const Histogram& latency);
  void Merge(const Timeline& other);

  bool empty() const { return buckets_.empty(); }
  size_t max_buckets() const { return max_buckets_; }
  int64_t bucket_ms() const { return bucket_ms_; }  // current width
  // Buckets from the first to the last one touched, empty ones in between included.
  size_t size() const { return buckets_.size(); }
  const Bucket& bucket(size_t i) const { return buckets_[i]; }
  int64_t bucket_start_ms(size_t i) const {
    return (first_index_ + static_cast<int64_t>(i)) * bucket_ms_;
  }
  // Earliest and latest timestamps added (0 when empty); interval summaries count at their start.
  int64_t first_ms() const { return first_ms_; }
  int64_t last_ms() const { return last_ms_; }
  uint64_t requests() const { return requests_; }
  uint64_t errors() const { return errors_; }

  // The ladder: the next width after `width_ms` (a width of the ladder).
  static int64_t NextWidth(int64_t width_ms);

  bool operator==(const Timeline&) const = default;

 private:
  // The bucket holding epoch_ms (clamped to >= 0), after noting epoch_ms in first/last_ms.
  Bucket& Touch(int64_t epoch_ms);
  // The bucket holding epoch_ms >= 0, created (and the width coarsened) as needed.
  Bucket& BucketAt(int64_t epoch_ms);
  void Coarsen();
  void CoarsenTo(int64_t width_ms);

  size_t max_buckets_;
  int64_t bucket_ms_ = 1000;
  int64_t first_index_ = 0;  // epoch_ms / bucket_ms_ of buckets_[0]
  std::deque<Bucket> buckets_;
  int64_t first_ms_ = 0;
  int64_t last_ms_ = 0;
  uint64_t requests_ = 0;
  uint64_t errors_ = 0;
};

}  // namespace hammer::stats
