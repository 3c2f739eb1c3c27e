#include "hammer/stats/histogram.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <limits>
#include <utility>

// Bucket arithmetic and statistics follow HdrHistogram (Java 2.2.2,
// org/HdrHistogram/AbstractHistogram.java: countsArrayIndex, getBucketIndex, valueFromIndex,
// lowestEquivalentValue, sizeOfEquivalentValueRange, getValueAtPercentile, getMean,
// getStdDeviation, getMinValue, getMaxValue) for lowestDiscernibleValue 1 (unitMagnitude 0)
// and 3 significant digits (subBucketCount 2048). Written from the published definitions.

namespace hammer::stats {
namespace {

int SubBucketIndex(int64_t value, int bucket) {
  return static_cast<int>(value >> bucket);
}

// Java's (long) cast of a double: NaN becomes 0, out-of-range values saturate.
int64_t JavaDoubleToLong(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9.223372036854775807e18) return std::numeric_limits<int64_t>::max();
  if (d <= -9.223372036854775808e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

int64_t MedianEquivalent(int64_t value) {
  return Histogram::LowestEquivalent(value) + (Histogram::SizeOfEquivalentRange(value) >> 1);
}

}  // namespace

int64_t Histogram::ValueFromIndex(int index) {
  int bucket = (index >> kSubBucketHalfCountMagnitude) - 1;
  int sub_bucket = (index & (kPageSize - 1)) + kPageSize;
  if (bucket < 0) {
    sub_bucket -= kPageSize;
    bucket = 0;
  }
  return static_cast<int64_t>(sub_bucket) << bucket;
}

int64_t Histogram::LowestEquivalent(int64_t value) {
  if (value < 0) value = 0;
  int bucket = BucketIndex(value);
  return static_cast<int64_t>(SubBucketIndex(value, bucket)) << bucket;
}

int64_t Histogram::SizeOfEquivalentRange(int64_t value) {
  if (value < 0) value = 0;
  return int64_t{1} << BucketIndex(value);
}

int64_t Histogram::HighestEquivalent(int64_t value) {
  // nextNonEquivalentValue - 1, saturating for the last bucket below 2^63.
  uint64_t next = static_cast<uint64_t>(LowestEquivalent(value)) +
                  static_cast<uint64_t>(SizeOfEquivalentRange(value));
  if (next > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::numeric_limits<int64_t>::max();
  }
  return static_cast<int64_t>(next) - 1;
}

namespace {
thread_local uint64_t thread_allocated_bytes = 0;
}  // namespace

uint64_t Histogram::ThreadAllocatedBytes() {
  return thread_allocated_bytes;
}

template <typename T, typename... Args>
std::unique_ptr<T> Histogram::Allocate(Args&&... args) {
  thread_allocated_bytes += sizeof(T);
  return std::make_unique<T>(std::forward<Args>(args)...);
}

Histogram::Histogram(const Histogram& other)
    : total_count_(other.total_count_),
      saturated_(other.saturated_),
      min_index_(other.min_index_),
      max_index_(other.max_index_),
      paged_(other.paged_),
      sparse_size_(other.sparse_size_),
      sparse_index_(other.sparse_index_),
      sparse_count_(other.sparse_count_),
      spill_(other.spill_ ? Allocate<SparseSpill>(*other.spill_) : nullptr) {
  if (!other.pages_) return;
  for (int page = 0; page < kPageCount; ++page) {
    if (const Page* theirs = other.PageAt(page)) Pages()[page] = Allocate<Page>(*theirs);
  }
}

Histogram& Histogram::operator=(const Histogram& other) {
  if (this != &other) {
    Histogram copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Histogram::PageTable& Histogram::Pages() {
  if (!pages_) pages_ = Allocate<PageTable>();  // value-initialized: all null
  return *pages_;
}

uint64_t& Histogram::CounterAt(int index) {
  std::unique_ptr<Page>& page = Pages()[index >> kSubBucketHalfCountMagnitude];
  if (!page) page = Allocate<Page>();  // value-initialized: all zero
  return (*page)[index & (kPageSize - 1)];
}

void Histogram::UsePages() {
  if (paged_) return;
  paged_ = 1;
  const uint16_t* indices = sparse_indices();
  const uint64_t* counts = sparse_counts();
  for (int i = 0; i < sparse_size_; ++i)
    CounterAt(indices[i]) = counts[i];
  sparse_size_ = 0;
  sparse_index_ = {};
  sparse_count_ = {};
  spill_.reset();
}

void Histogram::AddAt(int index, uint64_t count) {
  if (!paged_) {
    uint16_t* indices = spill_ ? spill_->index.data() : sparse_index_.data();
    uint64_t* counts = spill_ ? spill_->count.data() : sparse_count_.data();
    // Inline (a few entries) a linear scan beats a binary search; spilled, it does not.
    int i = 0;
    if (spill_) {
      i = static_cast<int>(std::lower_bound(indices, indices + sparse_size_, index) - indices);
    } else {
      while (i < sparse_size_ && indices[i] < index)
        ++i;
    }
    if (i < sparse_size_ && indices[i] == index) {
      counts[i] += count;
      return;
    }
    if (!spill_ && sparse_size_ == kSparseBuckets) {
      spill_ = Allocate<SparseSpill>();
      std::copy_n(sparse_index_.begin(), sparse_size_, spill_->index.begin());
      std::copy_n(sparse_count_.begin(), sparse_size_, spill_->count.begin());
      sparse_index_ = {};
      sparse_count_ = {};
      indices = spill_->index.data();
      counts = spill_->count.data();
    }
    if (sparse_size_ < (spill_ ? kSparseMaxBuckets : kSparseBuckets)) {
      std::copy_backward(indices + i, indices + sparse_size_, indices + sparse_size_ + 1);
      std::copy_backward(counts + i, counts + sparse_size_, counts + sparse_size_ + 1);
      indices[i] = static_cast<uint16_t>(index);
      counts[i] = count;
      ++sparse_size_;
      return;
    }
    UsePages();
  }
  CounterAt(index) += count;
}

void Histogram::RecordN(int64_t value, uint64_t count) {
  assert(value >= 0);
  if (count == 0) return;
  if (value < 0) value = 0;
  if (value > kHighest) {
    value = kHighest;
    saturated_ += count;
  }
  int index = CountsIndex(value);
  AddAt(index, count);
  total_count_ += count;
  if (index < min_index_) min_index_ = index;
  if (index > max_index_) max_index_ = index;
}

void Histogram::Merge(const Histogram& other) {
  if (other.total_count_ == 0) return;
  if (other.sparse()) {
    const uint16_t* indices = other.sparse_indices();
    const uint64_t* counts = other.sparse_counts();
    for (int i = 0; i < other.sparse_size_; ++i)
      AddAt(indices[i], counts[i]);
  } else {
    UsePages();
    MergePages(other);
  }
  total_count_ += other.total_count_;
  saturated_ += other.saturated_;
  min_index_ = std::min(min_index_, other.min_index_);
  max_index_ = std::max(max_index_, other.max_index_);
}

void Histogram::MergePages(const Histogram& other) {
  if (!other.pages_) return;
  for (int page = 0; page < kPageCount; ++page) {
    const Page* their_page = other.PageAt(page);
    if (their_page == nullptr) continue;
    std::unique_ptr<Page>& my_page = Pages()[page];
    if (!my_page) {
      my_page = Allocate<Page>(*their_page);
      continue;
    }
    Page& mine = *my_page;
    const Page& theirs = *their_page;
    for (int i = 0; i < kPageSize; ++i)
      mine[i] += theirs[i];
  }
}

void Histogram::Clear() {
  *this = Histogram();
}

int64_t Histogram::min() const {
  // getMinValue: 0 when empty or when bucket 0 (value 0) holds a count.
  if (total_count_ == 0 || min_index_ == 0) return 0;
  return ValueFromIndex(min_index_);
}

int64_t Histogram::max() const {
  // getMaxValue: highestEquivalentValue of the largest recorded value, 0 when that value is 0.
  if (max_index_ <= 0) return 0;
  return HighestEquivalent(ValueFromIndex(max_index_));
}

double Histogram::Mean() const {
  if (total_count_ == 0) return 0.0;
  double total_value = 0;
  ForEachBucket([&](int64_t lowest, int64_t, uint64_t count) {
    total_value += static_cast<double>(MedianEquivalent(lowest)) * static_cast<double>(count);
  });
  return total_value / static_cast<double>(total_count_);
}

double Histogram::StdDev() const {
  if (total_count_ == 0) return 0.0;
  const double mean = Mean();
  double deviation_total = 0.0;
  ForEachBucket([&](int64_t lowest, int64_t, uint64_t count) {
    double deviation = static_cast<double>(MedianEquivalent(lowest)) - mean;
    deviation_total += (deviation * deviation) * static_cast<double>(count);
  });
  return std::sqrt(deviation_total / static_cast<double>(total_count_));
}

int64_t Histogram::ValueAtPercentile(double percentile) const {
  int64_t value = 0;
  ValuesAtPercentiles(std::span<const double>(&percentile, 1), std::span<int64_t>(&value, 1));
  return value;
}

void Histogram::ValuesAtPercentiles(std::span<const double> percentiles,
                                    std::span<int64_t> values) const {
  assert(percentiles.size() == values.size());
  // For each: remove one ulp so that a count landing exactly on an integer is not rounded up
  // into the next bucket, clamp to [0, 100], then find the bucket holding the
  // ceil(p% * count)-th value. The targets ascend with the percentiles.
  auto target_of = [this](double percentile) {
    double requested = std::nextafter(percentile, -std::numeric_limits<double>::infinity());
    requested = std::min(std::max(requested, 0.0), 100.0);
    double fp_count = (requested * static_cast<double>(total_count_)) / 100.0;
    return static_cast<uint64_t>(std::max<int64_t>(JavaDoubleToLong(std::ceil(fp_count)), 1));
  };
  if (total_count_ > 0 && min_index_ == max_index_) {
    // One bucket holds every count, so every target lies in it (the common histogram of a run
    // over distinct URLs: a key seen once).
    const int64_t value = ValueFromIndex(min_index_);
    for (size_t i = 0; i < percentiles.size(); ++i)
      values[i] = percentiles[i] == 0.0 ? LowestEquivalent(value) : HighestEquivalent(value);
    return;
  }
  size_t next = 0;
  if (percentiles.empty()) return;
  uint64_t target = target_of(percentiles[0]);
  uint64_t running = 0;
  // Empty buckets never reach a target (it is at least 1 and running is below it), so only
  // the non-empty ones need visiting.
  VisitCounts([&](int index, uint64_t count) {
    running += count;
    while (running >= target) {
      int64_t value = ValueFromIndex(index);
      values[next] = percentiles[next] == 0.0 ? LowestEquivalent(value) : HighestEquivalent(value);
      if (++next == percentiles.size()) return false;
      target = target_of(percentiles[next]);
    }
    return true;
  });
  for (; next < values.size(); ++next)
    values[next] = 0;
}

uint64_t Histogram::CountAtValue(int64_t value) const {
  int index = std::min(CountsIndex(value), kCountsLength - 1);
  if (sparse()) {
    const uint16_t* indices = sparse_indices();
    const uint16_t* found = std::lower_bound(indices, indices + sparse_size_, index);
    return found != indices + sparse_size_ && *found == index ? sparse_counts()[found - indices]
                                                              : 0;
  }
  const Page* page = PageAt(index >> kSubBucketHalfCountMagnitude);
  return page ? (*page)[index & (kPageSize - 1)] : 0;
}

bool Histogram::operator==(const Histogram& other) const {
  if (total_count_ != other.total_count_) return false;
  if (sparse() || other.sparse()) {
    // The sparse side has at most kSparseMaxBuckets buckets: walk the other side against them.
    const Histogram& few = sparse() ? *this : other;
    const Histogram& any = sparse() ? other : *this;
    const uint16_t* indices = few.sparse_indices();
    const uint64_t* counts = few.sparse_counts();
    int matched = 0;
    bool same = any.VisitCounts([&](int index, uint64_t count) {
      if (matched >= few.sparse_size_ || indices[matched] != index || counts[matched] != count) {
        return false;
      }
      ++matched;
      return true;
    });
    return same && matched == few.sparse_size_;
  }
  for (int page = 0; page < kPageCount; ++page) {
    const Page* mine = PageAt(page);
    const Page* theirs = other.PageAt(page);
    if (mine == theirs) continue;  // both absent
    for (int i = 0; i < kPageSize; ++i) {
      if ((mine ? (*mine)[i] : 0) != (theirs ? (*theirs)[i] : 0)) return false;
    }
  }
  return true;
}

size_t Histogram::allocated_bytes() const {
  const size_t spill = spill_ ? sizeof(SparseSpill) : 0;
  if (!pages_) return spill;  // sparse, or paged without counts yet
  size_t pages = 0;
  for (const auto& page : *pages_)
    pages += page ? 1 : 0;
  static_assert(sizeof(PageTable) == kPageSlotsBytes);
  return kPageSlotsBytes + pages * sizeof(Page) + spill;
}

}  // namespace hammer::stats
