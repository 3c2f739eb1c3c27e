// Histogram: a log-linear latency histogram, bucket-for-bucket compatible with HdrHistogram.
//
// Values are integers (hammer records microseconds) from 0 to kHighest = 3.6e9 (one hour in
// µs) with 3 significant decimal digits: every recorded value is known to within 0.1%. The
// layout is HdrHistogram's (lowest discernible value 1, 2048 sub-buckets, 23 half-buckets of
// 1024 counters), so the V2 encoding below is readable by HdrHistogram's own decoders and
// percentiles follow its definitions exactly.
//
// Written by hand because Debian packages no HdrHistogram for C++ and because counters are
// stored in two forms, each far smaller than HdrHistogram's flat 184 KiB:
//   sparse  (counts index, count) pairs sorted by index: up to kSparseBuckets inside the object,
//           so a key with a handful of samples (a run over millions of distinct URLs has
//           millions of those) costs no allocation at all; then up to kSparseMaxBuckets in one
//           allocation of about 1.3 KiB, so a key with a few hundred samples (a list of 10,000
//           URLs replayed) costs that instead of several pages;
//   paged   lazily allocated 1024-counter pages (and their 23 slots, allocated with the first):
//           a histogram whose values span a few octaves costs tens of kilobytes, and the bound
//           stays constant (23 pages) whatever the run length.
// A histogram starts sparse and turns paged when a (kSparseMaxBuckets+1)-th distinct bucket
// arrives (or a paged histogram is merged in), never back. The form is invisible: every
// figure, the encoding and operator== are the same for the same counts. Values above kHighest
// are clamped and counted in saturated(). Negative values are a caller bug (asserted) and are
// recorded as 0.
//
// A value type: copyable, mergeable (exactly: Merge is addition of counters; its cost is the
// other histogram's non-empty buckets or pages, never the whole range), comparable.
// Not thread-safe; keep one per thread and merge at the end.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer::stats {

class Histogram {
 public:
  static constexpr int64_t kLowestDiscernible = 1;
  static constexpr int64_t kHighest = 3'600'000'000;  // one hour in microseconds
  static constexpr int kSignificantDigits = 3;
  static constexpr int kSubBucketHalfCountMagnitude = 10;
  static constexpr int64_t kSubBucketHalfCount = 1 << kSubBucketHalfCountMagnitude;  // 1024
  static constexpr int64_t kSubBucketCount = 2 * kSubBucketHalfCount;                // 2048
  static constexpr int kBucketCount = 22;
  static constexpr int kPageSize = static_cast<int>(kSubBucketHalfCount);
  static constexpr int kPageCount = kBucketCount + 1;
  // A paged histogram's slots for its pages, allocated with the first page.
  static constexpr size_t kPageSlotsBytes = kPageCount * sizeof(void*);
  static constexpr int kCountsLength = kPageCount * kPageSize;  // 23552, as HdrHistogram
  static constexpr int kSparseBuckets = 8;                      // inside the object
  static constexpr int kSparseMaxBuckets = 128;  // then in one allocation (SparseSpill)

  Histogram() = default;
  Histogram(const Histogram& other);
  Histogram& operator=(const Histogram& other);
  Histogram(Histogram&&) noexcept = default;
  Histogram& operator=(Histogram&&) noexcept = default;
  ~Histogram() = default;

  void Record(int64_t value) {
    // Inline the common case (a value in range whose counter page exists): `hammer stats`
    // records millions of values a second. A sparse histogram has no pages, so it takes the
    // out-of-line path, and costs nothing here.
    if (value >= 0 && value <= kHighest) {
      int index = CountsIndex(value);
      if (Page* page = PageAt(index >> kSubBucketHalfCountMagnitude)) {
        ++(*page)[index & (kPageSize - 1)];
        ++total_count_;
        min_index_ = std::min(min_index_, index);
        max_index_ = std::max(max_index_, index);
        return;
      }
    }
    RecordN(value, 1);
  }
  void RecordN(int64_t value, uint64_t count);  // count 0 records nothing
  void Merge(const Histogram& other);
  void Clear();

  uint64_t total_count() const { return total_count_; }
  uint64_t saturated() const { return saturated_; }
  bool empty() const { return total_count_ == 0; }
  // Smallest / largest recorded value, at histogram resolution (HdrHistogram's getMinValue and
  // getMaxValue: lowest and highest equivalent values). 0 when empty.
  int64_t min() const;
  int64_t max() const;
  double Mean() const;
  double StdDev() const;

  // HdrHistogram's getValueAtPercentile: the highest equivalent value of the bucket holding the
  // ceil(p/100 * count)-th value (the lowest equivalent value for p == 0). 0 when empty.
  int64_t ValueAtPercentile(double percentile) const;
  // ValueAtPercentile of each of `percentiles` (ascending) into `values` (same size), in one
  // pass over the counters.
  void ValuesAtPercentiles(std::span<const double> percentiles, std::span<int64_t> values) const;
  uint64_t CountAtValue(int64_t value) const;

  // Visits each non-empty bucket in value order: f(lowest_equivalent, highest_equivalent, count).
  template <typename F>
  void ForEachBucket(F&& f) const {
    VisitCounts([&f](int index, uint64_t count) {
      int64_t value = ValueFromIndex(index);
      f(LowestEquivalent(value), HighestEquivalent(value), count);
      return true;
    });
  }

  // HdrHistogram V2 compressed encoding ("HISTFAAA..." once base64ed), as produced by
  // encodeIntoCompressedByteBuffer and read by Histogram.decodeFromCompressedByteBuffer.
  // EncodeCompressed() is byte-for-byte what HdrHistogram Java writes for the same counts (same
  // header, payload and zlib settings).
  //
  // Decoding never crashes on corrupt input: it returns an error for a bad cookie, a length that
  // does not match, bad zlib data, a truncated or out-of-range count, or a payload that would
  // inflate past 16 MiB. V0/V1 encodings, DoubleHistogram-style encodings (a conversion ratio
  // other than 1 or a normalizing offset) are rejected. Encodings with another value range or
  // number of significant digits are accepted: each of their buckets is re-recorded here at its
  // lowest value (what HdrHistogram's add() does across layouts). That is exact when the source
  // has lowest discernible value 1 and 3 digits (whatever its highest value); otherwise the
  // result is only as precise as the coarser of the two layouts, and a percentile of the result
  // may be lower than the source's by up to one of its buckets. saturated() of a decoded
  // histogram counts the values above kHighest that were clamped while decoding.
  //
  // `zlib_level` is the deflate level: encodeIntoCompressedByteBuffer's default is zlib's default
  // (-1); HdrHistogram's HistogramLogWriter uses 9 (Deflater.BEST_COMPRESSION).
  static constexpr int kDefaultZlibLevel = -1;
  static constexpr int kLogWriterZlibLevel = 9;
  std::string EncodeCompressed(int zlib_level = kDefaultZlibLevel) const;  // raw bytes
  std::string EncodeBase64(int zlib_level = kDefaultZlibLevel) const;      // base64 of the above
  static Result<Histogram> DecodeCompressed(std::string_view bytes);
  static Result<Histogram> DecodeBase64(std::string_view text);

  // Same counts in the same buckets. saturated() is not compared: the encoding cannot carry it,
  // and the values it counts are already in the top bucket.
  bool operator==(const Histogram& other) const;

  // Bytes of counter storage allocated outside the object (0 while at most kSparseBuckets
  // buckets; for memory-bound tests and reports).
  size_t allocated_bytes() const;
  // Bytes of counter storage that histograms have allocated on the calling thread so far
  // (pages and spills, copies included; frees are not subtracted, so it never decreases). Two
  // readings bound how much every histogram the thread touched in between has grown, without
  // visiting them: KeyTable checks its memory budget so (key_table.h).
  static uint64_t ThreadAllocatedBytes();
  // True while the counts live inside the object (see the top of this file).
  bool sparse() const { return paged_ == 0; }
  // Moves the counts into pages now instead of at the (kSparseMaxBuckets+1)-th bucket. Nothing
  // observable changes; tests use it to compare both forms.
  void UsePages();

  // HdrHistogram bucket arithmetic, exposed for tests and report writers.
  static int CountsIndex(int64_t value) {
    if (value < 0) value = 0;
    int bucket = BucketIndex(value);
    int sub_bucket = static_cast<int>(value >> bucket);
    return ((bucket + 1) << kSubBucketHalfCountMagnitude) + (sub_bucket - kPageSize);
  }
  static int64_t ValueFromIndex(int index);
  static int64_t LowestEquivalent(int64_t value);
  static int64_t HighestEquivalent(int64_t value);
  static int64_t SizeOfEquivalentRange(int64_t value);

 private:
  using Page = std::array<uint64_t, kPageSize>;
  using PageTable = std::array<std::unique_ptr<Page>, kPageCount>;
  // The sparse pairs once there are more than kSparseBuckets of them.
  struct SparseSpill {
    std::array<uint16_t, kSparseMaxBuckets> index;
    std::array<uint64_t, kSparseMaxBuckets> count;
  };
  Page* PageAt(int page) const { return pages_ ? (*pages_)[page].get() : nullptr; }
  // The page slots, allocated on first use.
  PageTable& Pages();
  const uint16_t* sparse_indices() const {
    return spill_ ? spill_->index.data() : sparse_index_.data();
  }
  const uint64_t* sparse_counts() const {
    return spill_ ? spill_->count.data() : sparse_count_.data();
  }
  // getBucketIndex for lowest discernible value 1: 64 - unitMagnitude (0) -
  // subBucketCountMagnitude (11) - the leading zeros of value | subBucketMask.
  static int BucketIndex(int64_t value) {
    return 64 - (kSubBucketHalfCountMagnitude + 1) -
           std::countl_zero(static_cast<uint64_t>(value) | (kSubBucketCount - 1));
  }
  uint64_t& CounterAt(int index);
  // make_unique, counted in ThreadAllocatedBytes().
  template <typename T, typename... Args>
  static std::unique_ptr<T> Allocate(Args&&... args);
  // Adds `count` at counts index `index` in whichever form the histogram has (counters only).
  void AddAt(int index, uint64_t count);
  // Both paged: adds the other's pages to these.
  void MergePages(const Histogram& other);

  // Calls f(index, count) for each non-empty counts index in ascending order until f returns
  // false; returns false when f stopped it.
  template <typename F>
  bool VisitCounts(F&& f) const {
    if (sparse()) {
      const uint16_t* indices = sparse_indices();
      const uint64_t* counts = sparse_counts();
      for (int i = 0; i < sparse_size_; ++i) {
        if (!f(static_cast<int>(indices[i]), counts[i])) return false;
      }
      return true;
    }
    for (int page = 0; page < kPageCount; ++page) {
      const Page* counts_page = PageAt(page);
      if (counts_page == nullptr) continue;
      const Page& counts = *counts_page;
      for (int i = 0; i < kPageSize; ++i) {
        if (counts[i] != 0 && !f(page * kPageSize + i, counts[i])) return false;
      }
    }
    return true;
  }

  // Paged form: the pages (absent ones all zero). Their slots are allocated with the first
  // page, not kept in the object: a sparse histogram (most rows of a key table) then costs
  // 8 bytes for them, not 184. Null while sparse.
  std::unique_ptr<PageTable> pages_;
  uint64_t total_count_ = 0;
  uint64_t saturated_ = 0;
  int min_index_ = kCountsLength;  // smallest / largest non-empty counts index
  int max_index_ = -1;
  // Sparse form: sparse_size_ buckets, ascending indices (kCountsLength < 2^16), in
  // sparse_index_/sparse_count_ up to kSparseBuckets, then all of them in spill_.
  uint8_t paged_ = 0;
  uint8_t sparse_size_ = 0;
  std::array<uint16_t, kSparseBuckets> sparse_index_{};
  std::array<uint64_t, kSparseBuckets> sparse_count_{};
  std::unique_ptr<SparseSpill> spill_;
};

}  // namespace hammer::stats
