#include "hammer/stats/paired_intervals.h"

#include <algorithm>

namespace hammer::stats {

PairedIntervals::PairedIntervals(Nanos interval) : interval_(std::max<Nanos>(interval, 1)) {}

void PairedIntervals::Counts::Add(const Counts& other) {
  pairs += other.pairs;
  for (size_t k = 0; k < beyond.size(); ++k)
    beyond[k] += other.beyond[k];
}

size_t PairedIntervals::ThresholdAtMost(double micros) {
  auto above =
      std::upper_bound(kThresholdsMicros.begin(), kThresholdsMicros.end(), micros,
                       [](double m, int64_t step) { return m < static_cast<double>(step); });
  return above == kThresholdsMicros.begin()
             ? 0
             : static_cast<size_t>(above - kThresholdsMicros.begin()) - 1;
}

void PairedIntervals::Record(MonoNanos when, int64_t a_micros, int64_t b_micros) {
  Counts& counts = counts_[when / interval_];
  ++counts.pairs;
  int64_t slower = b_micros - a_micros;
  if (slower > 0) {
    // The last step below `slower`: it exceeds that one and every smaller one.
    auto step = std::lower_bound(kThresholdsMicros.begin(), kThresholdsMicros.end(), slower);
    ++counts.beyond[static_cast<size_t>(step - kThresholdsMicros.begin()) - 1];
  }
  if (counts_.size() > kMaxIntervals) Coarsen(interval_ * 2);
}

void PairedIntervals::Coarsen(Nanos interval) {
  std::map<int64_t, Counts> coarse;
  for (const auto& [index, counts] : counts_)
    coarse[index * interval_ / interval].Add(counts);
  counts_ = std::move(coarse);
  interval_ = interval;
}

void PairedIntervals::Merge(const PairedIntervals& other) {
  if (&other == this) {
    PairedIntervals copy = other;  // NOLINT(performance-unnecessary-copy-initialization)
    Merge(copy);
    return;
  }
  if (other.empty()) return;
  if (empty()) {
    *this = other;
    return;
  }
  if (other.interval_ > interval_) Coarsen(other.interval_);
  for (const auto& [index, counts] : other.counts_)
    counts_[index * other.interval_ / interval_].Add(counts);
  while (counts_.size() > kMaxIntervals)
    Coarsen(interval_ * 2);
}

std::vector<PairedIntervals::Interval> PairedIntervals::intervals() const {
  std::vector<Interval> out;
  out.reserve(counts_.size());
  for (const auto& [index, counts] : counts_) {
    Interval interval;
    interval.start = index * interval_;
    interval.pairs = counts.pairs;
    uint64_t slower = 0;
    for (size_t k = counts.beyond.size(); k-- > 0;) {
      slower += counts.beyond[k];
      interval.slower[k] = slower;
    }
    out.push_back(interval);
  }
  return out;
}

}  // namespace hammer::stats
