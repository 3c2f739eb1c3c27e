#include "hammer/stats/timeline.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <utility>

namespace hammer::stats {
namespace {

constexpr std::array<int64_t, 13> kLadderSeconds = {
    1, 2, 10, 20, 60, 120, 600, 1200, 3600, 7200, 21600, 43200, 86400,
};

}  // namespace

Timeline::Timeline(size_t max_buckets) : max_buckets_(std::max<size_t>(max_buckets, 2)) {}

int64_t Timeline::NextWidth(int64_t width_ms) {
  for (int64_t seconds : kLadderSeconds) {
    if (seconds * 1000 > width_ms) return seconds * 1000;
  }
  return width_ms * 2;
}

void Timeline::AddSuccess(int64_t epoch_ms, int64_t micros) {
  Bucket& bucket = Touch(epoch_ms);
  ++bucket.requests;
  ++requests_;
  bucket.latency.Record(micros);
}

void Timeline::AddFailure(int64_t epoch_ms) {
  Bucket& bucket = Touch(epoch_ms);
  ++bucket.requests;
  ++bucket.errors;
  ++requests_;
  ++errors_;
}

void Timeline::Add(int64_t epoch_ms_start, uint64_t ok, uint64_t errors, const Histogram& latency) {
  Bucket& bucket = Touch(epoch_ms_start);
  bucket.requests += ok + errors;
  bucket.errors += errors;
  bucket.latency.Merge(latency);
  requests_ += ok + errors;
  errors_ += errors;
}

Timeline::Bucket& Timeline::Touch(int64_t epoch_ms) {
  epoch_ms = std::max<int64_t>(epoch_ms, 0);
  if (buckets_.empty()) {
    first_ms_ = last_ms_ = epoch_ms;
  } else {
    first_ms_ = std::min(first_ms_, epoch_ms);
    last_ms_ = std::max(last_ms_, epoch_ms);
  }
  return BucketAt(epoch_ms);
}

Timeline::Bucket& Timeline::BucketAt(int64_t epoch_ms) {
  for (;;) {
    int64_t index = epoch_ms / bucket_ms_;
    if (buckets_.empty()) {
      first_index_ = index;
      buckets_.emplace_back();
      return buckets_.front();
    }
    int64_t last_index = first_index_ + static_cast<int64_t>(buckets_.size()) - 1;
    int64_t low = std::min(first_index_, index);
    int64_t high = std::max(last_index, index);
    if (static_cast<uint64_t>(high - low) + 1 > max_buckets_) {
      Coarsen();
      continue;
    }
    while (index < first_index_) {
      buckets_.emplace_front();
      --first_index_;
    }
    while (index > first_index_ + static_cast<int64_t>(buckets_.size()) - 1)
      buckets_.emplace_back();
    return buckets_[static_cast<size_t>(index - first_index_)];
  }
}

void Timeline::Coarsen() {
  int64_t width = NextWidth(bucket_ms_);
  std::deque<Bucket> coarse;
  int64_t coarse_first = first_index_ * bucket_ms_ / width;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    int64_t start = (first_index_ + static_cast<int64_t>(i)) * bucket_ms_;
    size_t slot = static_cast<size_t>(start / width - coarse_first);
    if (slot == coarse.size()) coarse.emplace_back();
    Bucket& into = coarse[slot];
    Bucket& from = buckets_[i];
    into.requests += from.requests;
    into.errors += from.errors;
    if (into.latency.empty()) {
      into.latency = std::move(from.latency);
    } else {
      into.latency.Merge(from.latency);
    }
  }
  buckets_ = std::move(coarse);
  first_index_ = coarse_first;
  bucket_ms_ = width;
}

void Timeline::CoarsenTo(int64_t width_ms) {
  while (bucket_ms_ < width_ms)
    Coarsen();
}

void Timeline::Merge(const Timeline& other) {
  if (other.empty()) return;
  CoarsenTo(other.bucket_ms_);
  int64_t first_ms = empty() ? other.first_ms_ : std::min(first_ms_, other.first_ms_);
  int64_t last_ms = empty() ? other.last_ms_ : std::max(last_ms_, other.last_ms_);
  for (size_t i = 0; i < other.buckets_.size(); ++i) {
    const Bucket& from = other.buckets_[i];
    Bucket& into = BucketAt(other.bucket_start_ms(i));
    into.requests += from.requests;
    into.errors += from.errors;
    into.latency.Merge(from.latency);
  }
  first_ms_ = first_ms;
  last_ms_ = last_ms;
  requests_ += other.requests_;
  errors_ += other.errors_;
}

}  // namespace hammer::stats
