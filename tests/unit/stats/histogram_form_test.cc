// Histogram's two forms: up to kSparseBuckets buckets inline and then up to kSparseMaxBuckets in
// one allocation (sparse), then pages. Whatever the form, figures, encodings and merges are the
// same.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hammer/stats/histogram.h"

namespace hammer::stats {
namespace {

constexpr size_t kPageBytes = Histogram::kPageSize * sizeof(uint64_t);

TEST(HistogramFormTest, FewBucketsStaySparseWithoutAllocating) {
  Histogram h;
  for (int i = 0; i < Histogram::kSparseBuckets; ++i)
    h.RecordN(int64_t{1} << (2 * i), static_cast<uint64_t>(i + 1));
  h.Record(1);  // a bucket it already has
  EXPECT_TRUE(h.sparse());
  EXPECT_EQ(h.allocated_bytes(), 0u);
  EXPECT_EQ(h.total_count(), 37u);
  // So such a histogram costs its object, whose page slots are not inline (a pointer to them).
  EXPECT_LT(sizeof(Histogram), Histogram::kPageSlotsBytes);
  h.Record(3);  // one distinct bucket more than it can hold inline: one small allocation
  EXPECT_TRUE(h.sparse());
  EXPECT_GT(h.allocated_bytes(), 0u);
  EXPECT_LT(h.allocated_bytes(), kPageBytes);
  EXPECT_EQ(h.total_count(), 38u);
  EXPECT_EQ(h.CountAtValue(1), 2u);
  EXPECT_EQ(h.CountAtValue(3), 1u);
  EXPECT_EQ(h.CountAtValue(4), 2u);
}

TEST(HistogramFormTest, ManyBucketsTurnPagedPastTheSparseMaximum) {
  // Values 2000, 2002, ... lie in one page (values 2048..4095 are 2 apart per bucket, and
  // below 2048 each value is its own bucket): every one a distinct bucket.
  Histogram h;
  for (int i = 0; i < Histogram::kSparseMaxBuckets; ++i)
    h.RecordN(2000 + 2 * i, static_cast<uint64_t>(i + 1));
  EXPECT_TRUE(h.sparse());
  EXPECT_LT(h.allocated_bytes(), kPageBytes);
  h.Record(1);  // the (kSparseMaxBuckets+1)-th bucket
  EXPECT_FALSE(h.sparse());
  // Value 1: page 0; 2000..2047: page 1; 2048..2254: page 2. The spill is given back.
  EXPECT_EQ(h.allocated_bytes(), Histogram::kPageSlotsBytes + 3 * kPageBytes);
  EXPECT_EQ(h.CountAtValue(1), 1u);
  for (int i = 0; i < Histogram::kSparseMaxBuckets; ++i)
    EXPECT_EQ(h.CountAtValue(2000 + 2 * i), static_cast<uint64_t>(i + 1)) << i;
}

// Values that land in at most `buckets` distinct buckets, anywhere in the range.
std::vector<int64_t> RandomValues(std::mt19937_64& rng, int buckets, int n) {
  std::vector<int64_t> pool;
  for (int i = 0; i < buckets; ++i) {
    int64_t v = static_cast<int64_t>(rng() >> (1 + rng() % 63));
    pool.push_back(rng() % 8 == 0 ? Histogram::kHighest + v % 1000 : v);  // some saturate
  }
  std::vector<int64_t> values;
  for (int i = 0; i < n; ++i)
    values.push_back(pool[rng() % pool.size()]);
  return values;
}

// Every observable figure of two histograms with the same counts in different forms.
// saturated() is compared unless one side was decoded (the encoding does not carry it).
void ExpectSameFigures(const Histogram& a, const Histogram& b, bool decoded = false) {
  ASSERT_TRUE(a == b);
  ASSERT_TRUE(b == a);
  EXPECT_EQ(a.total_count(), b.total_count());
  if (!decoded) {
    EXPECT_EQ(a.saturated(), b.saturated());
  }
  EXPECT_EQ(a.min(), b.min());
  EXPECT_EQ(a.max(), b.max());
  EXPECT_EQ(std::bit_cast<uint64_t>(a.Mean()), std::bit_cast<uint64_t>(b.Mean()));
  EXPECT_EQ(std::bit_cast<uint64_t>(a.StdDev()), std::bit_cast<uint64_t>(b.StdDev()));
  for (double p : {0.0, 0.1, 1.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0})
    EXPECT_EQ(a.ValueAtPercentile(p), b.ValueAtPercentile(p)) << p;
  std::vector<std::tuple<int64_t, int64_t, uint64_t>> buckets_a;
  std::vector<std::tuple<int64_t, int64_t, uint64_t>> buckets_b;
  a.ForEachBucket([&](int64_t lo, int64_t hi, uint64_t n) { buckets_a.emplace_back(lo, hi, n); });
  b.ForEachBucket([&](int64_t lo, int64_t hi, uint64_t n) { buckets_b.emplace_back(lo, hi, n); });
  EXPECT_EQ(buckets_a, buckets_b);
  for (const auto& [lo, hi, n] : buckets_a)
    EXPECT_EQ(b.CountAtValue(lo), n);
  EXPECT_EQ(a.EncodeCompressed(), b.EncodeCompressed());
  EXPECT_EQ(a.EncodeBase64(Histogram::kLogWriterZlibLevel),
            b.EncodeBase64(Histogram::kLogWriterZlibLevel));
}

TEST(HistogramFormTest, SparseAndPagedGiveIdenticalFiguresAndEncodings) {
  std::mt19937_64 rng(2024);
  for (int round = 0; round < 300; ++round) {
    int buckets = 1 + static_cast<int>(rng() % (2 * Histogram::kSparseMaxBuckets));
    std::vector<int64_t> values = RandomValues(rng, buckets, 1 + static_cast<int>(rng() % 200));
    Histogram sparse_first;
    Histogram paged;
    paged.UsePages();
    for (int64_t v : values) {
      sparse_first.Record(v);
      paged.Record(v);
    }
    EXPECT_FALSE(paged.sparse());
    SCOPED_TRACE(::testing::Message() << "round " << round << ", " << buckets << " buckets");
    ExpectSameFigures(sparse_first, paged);
    // Decoding either encoding gives the same counts (in whichever form the decoder chose).
    Result<Histogram> decoded = Histogram::DecodeCompressed(paged.EncodeCompressed());
    ASSERT_TRUE(decoded.ok());
    if (buckets <= Histogram::kSparseMaxBuckets) {
      EXPECT_TRUE(decoded->sparse());
    }
    ExpectSameFigures(*decoded, paged, /*decoded=*/true);
  }
  ExpectSameFigures(Histogram(), [] {
    Histogram empty_paged;
    empty_paged.UsePages();
    return empty_paged;
  }());
}

TEST(HistogramFormTest, MergesAcrossFormsEqualOnePass) {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    int buckets = 1 + static_cast<int>(rng() % (2 * Histogram::kSparseMaxBuckets));
    std::vector<int64_t> values = RandomValues(rng, buckets, 2 + static_cast<int>(rng() % 400));
    size_t split = rng() % values.size();
    Histogram whole;
    Histogram parts[2];
    for (size_t i = 0; i < values.size(); ++i) {
      whole.Record(values[i]);
      parts[i < split ? 0 : 1].Record(values[i]);
    }
    // Each side in each form: sparse + sparse, sparse + paged, paged + sparse, paged + paged.
    for (int forms = 0; forms < 4; ++forms) {
      Histogram left = parts[0];
      Histogram right = parts[1];
      if (forms & 1) left.UsePages();
      if (forms & 2) right.UsePages();
      left.Merge(right);
      ExpectSameFigures(left, whole);
    }
  }
}

}  // namespace
}  // namespace hammer::stats
