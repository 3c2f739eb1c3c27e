#include "hammer/stats/histogram.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "hammer/base/base64.h"

namespace hammer::stats {
namespace {

constexpr size_t kPageBytes = Histogram::kPageSize * sizeof(uint64_t);
// Every page, and their slots.
constexpr size_t kMostBytes = Histogram::kPageSlotsBytes + Histogram::kPageCount * kPageBytes;

TEST(HistogramArithmeticTest, IndexAndValueAtBucketEdges) {
  struct Case {
    int64_t value;
    int index;
    int64_t lowest;
    int64_t highest;
    int64_t size;
  };
  const Case cases[] = {
      {0, 0, 0, 0, 1},
      {1, 1, 1, 1, 1},
      {1023, 1023, 1023, 1023, 1},
      {1024, 1024, 1024, 1024, 1},
      {2047, 2047, 2047, 2047, 1},
      {2048, 2048, 2048, 2049, 2},  // bucket 1: unit 2
      {2049, 2048, 2048, 2049, 2},
      {2050, 2049, 2050, 2051, 2},
      {4095, 3071, 4094, 4095, 2},
      {4096, 3072, 4096, 4099, 4},  // bucket 2: unit 4
      {10000, 4322, 10000, 10007, 8},
      {123456, 8073, 123456, 123519, 64},
      {Histogram::kHighest, 23220, 3598712832, 3600809983, 1 << 21},
      {4294967295, 23551, 4292870144, 4294967295, 1 << 21},  // last counter
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value);
    EXPECT_EQ(Histogram::CountsIndex(c.value), c.index);
    EXPECT_EQ(Histogram::LowestEquivalent(c.value), c.lowest);
    EXPECT_EQ(Histogram::HighestEquivalent(c.value), c.highest);
    EXPECT_EQ(Histogram::SizeOfEquivalentRange(c.value), c.size);
    EXPECT_EQ(Histogram::ValueFromIndex(c.index), c.lowest);
  }
  EXPECT_EQ(Histogram::kCountsLength, 23552);
}

TEST(HistogramArithmeticTest, EveryIndexRoundTrips) {
  for (int index = 0; index < Histogram::kCountsLength; ++index) {
    int64_t lowest = Histogram::ValueFromIndex(index);
    int64_t highest = Histogram::HighestEquivalent(lowest);
    ASSERT_EQ(Histogram::CountsIndex(lowest), index);
    ASSERT_EQ(Histogram::CountsIndex(highest), index);
    ASSERT_EQ(Histogram::CountsIndex(highest + 1), index + 1);
    ASSERT_EQ(highest - lowest + 1, Histogram::SizeOfEquivalentRange(lowest));
  }
}

void ExpectWithinResolution(const Histogram& h, int64_t value) {
  // Every value of the value's bucket is within 0.1% of it: 3 significant digits.
  int64_t lowest = Histogram::LowestEquivalent(value);
  int64_t highest = Histogram::HighestEquivalent(value);
  ASSERT_LE(lowest, value);
  ASSERT_GE(highest, value);
  ASSERT_LE(static_cast<double>(highest - lowest), 0.001 * static_cast<double>(value)) << value;
  ASSERT_GE(h.CountAtValue(value), 1u) << value;
}

TEST(HistogramTest, EveryValueUpTo100000WithinResolution) {
  Histogram h;
  for (int64_t v = 0; v <= 100000; ++v)
    h.Record(v);
  EXPECT_EQ(h.total_count(), 100001u);
  for (int64_t v = 0; v <= 100000; ++v)
    ExpectWithinResolution(h, v);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), Histogram::HighestEquivalent(100000));
}

TEST(HistogramTest, RandomLargeValuesWithinResolution) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> dist(100000, Histogram::kHighest);
  Histogram h;
  std::vector<int64_t> values;
  for (int i = 0; i < 100000; ++i) {
    values.push_back(dist(rng));
    h.Record(values.back());
  }
  for (int64_t v : values)
    ExpectWithinResolution(h, v);
  EXPECT_EQ(h.saturated(), 0u);
}

// A histogram whose counts are all in one bucket (a key seen once, or one value many times):
// every percentile is that bucket's highest value, exactly p0 its lowest, at any count and in
// both forms.
TEST(HistogramTest, PercentilesOfOneBucket) {
  for (int64_t value : {int64_t{0}, int64_t{1}, int64_t{2047}, int64_t{123456789},
                        Histogram::kHighest, Histogram::kHighest + 5}) {
    for (uint64_t count : {uint64_t{1}, uint64_t{7}, uint64_t{1} << 40}) {
      for (bool paged : {false, true}) {
        Histogram h;
        if (paged) h.UsePages();
        h.RecordN(value, count);
        const int64_t in_range = std::min(value, Histogram::kHighest);
        for (double p : {-5.0, 0.0, 0.1, 50.0, 99.9, 100.0, 250.0}) {
          EXPECT_EQ(h.ValueAtPercentile(p), p == 0.0 ? Histogram::LowestEquivalent(in_range)
                                                     : Histogram::HighestEquivalent(in_range))
              << value << " x" << count << " p" << p << (paged ? " paged" : " sparse");
        }
      }
    }
  }
}

TEST(HistogramTest, PercentilesByHand) {
  Histogram h;
  for (int64_t v = 1; v <= 100; ++v)
    h.Record(v);
  // Unit resolution below 2048: the k-th value of 1..100 is k.
  EXPECT_EQ(h.ValueAtPercentile(0), 1);
  EXPECT_EQ(h.ValueAtPercentile(1), 1);
  EXPECT_EQ(h.ValueAtPercentile(50), 50);
  EXPECT_EQ(h.ValueAtPercentile(50.5), 51);  // ceil(50.5) = 51st value
  EXPECT_EQ(h.ValueAtPercentile(90), 90);
  EXPECT_EQ(h.ValueAtPercentile(99), 99);
  EXPECT_EQ(h.ValueAtPercentile(99.9), 100);  // ceil(99.9)
  EXPECT_EQ(h.ValueAtPercentile(100), 100);
  EXPECT_EQ(h.ValueAtPercentile(250), 100);  // clamped to 100%
  EXPECT_EQ(h.ValueAtPercentile(-5), 1);     // clamped to 0%: at least the first value

  // Above 2048 a percentile is its bucket's highest value; p0 its lowest.
  Histogram wide;
  wide.Record(1);
  wide.Record(10000);  // bucket [10000, 10007]
  EXPECT_EQ(wide.ValueAtPercentile(50), 1);
  EXPECT_EQ(wide.ValueAtPercentile(50.0001), 10007);
  EXPECT_EQ(wide.ValueAtPercentile(100), 10007);
  Histogram one;
  one.Record(10003);
  EXPECT_EQ(one.ValueAtPercentile(0), 10000);
  EXPECT_EQ(one.ValueAtPercentile(std::nan("")), 10007);  // NaN counts as "the first value"
  EXPECT_EQ(Histogram().ValueAtPercentile(50), 0);
}

TEST(HistogramTest, MinMaxMeanStdDevAsHdrHistogram) {
  Histogram empty;
  EXPECT_EQ(empty.min(), 0);
  EXPECT_EQ(empty.max(), 0);
  EXPECT_EQ(empty.Mean(), 0.0);
  EXPECT_EQ(empty.StdDev(), 0.0);

  Histogram h;
  h.Record(1);
  h.Record(2);
  h.Record(3);
  EXPECT_EQ(h.min(), 1);
  EXPECT_EQ(h.max(), 3);
  EXPECT_DOUBLE_EQ(h.Mean(), 2.0);
  EXPECT_DOUBLE_EQ(h.StdDev(), std::sqrt(2.0 / 3.0));

  // Means use each bucket's middle: [10000, 10007] -> 10004.
  Histogram wide;
  wide.RecordN(10001, 2);
  EXPECT_EQ(wide.min(), 10000);
  EXPECT_EQ(wide.max(), 10007);
  EXPECT_DOUBLE_EQ(wide.Mean(), 10004.0);
  EXPECT_DOUBLE_EQ(wide.StdDev(), 0.0);

  Histogram with_zero;
  with_zero.Record(0);
  with_zero.Record(5000);
  EXPECT_EQ(with_zero.min(), 0);
  EXPECT_EQ(with_zero.max(), 5003);
}

TEST(HistogramTest, ClampsAndCountsSaturatedValues) {
  Histogram h;
  h.Record(Histogram::kHighest + 1);
  h.RecordN(int64_t{1} << 62, 2);
  h.RecordN(7, 0);  // nothing
  EXPECT_EQ(h.total_count(), 3u);
  EXPECT_EQ(h.saturated(), 3u);
  EXPECT_EQ(h.CountAtValue(Histogram::kHighest), 3u);
  EXPECT_EQ(h.min(), 3598712832);
  EXPECT_EQ(h.max(), 3600809983);
}

TEST(HistogramTest, MergeOfRandomSplitsEqualsSinglePass) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::lognormal_distribution<double> latency(8.0, 2.5);
    std::uniform_int_distribution<int> part(0, 1 + round % 7);
    Histogram whole;
    std::vector<Histogram> parts(static_cast<size_t>(2 + round % 7));
    for (int i = 0; i < 5000; ++i) {
      auto v = static_cast<int64_t>(std::min(latency(rng), 5e9));
      whole.Record(v);
      parts[static_cast<size_t>(part(rng))].Record(v);
    }
    Histogram merged;
    for (const Histogram& p : parts)
      merged.Merge(p);
    ASSERT_EQ(merged, whole);
    EXPECT_EQ(merged.min(), whole.min());
    EXPECT_EQ(merged.max(), whole.max());
    EXPECT_EQ(merged.saturated(), whole.saturated());
    EXPECT_EQ(merged.ValueAtPercentile(99.9), whole.ValueAtPercentile(99.9));
    EXPECT_EQ(merged.EncodeCompressed(), whole.EncodeCompressed());
  }
}

TEST(HistogramTest, EqualityIgnoresPageAllocation) {
  Histogram a;
  Histogram b;
  b.Merge(Histogram());
  EXPECT_EQ(a, b);
  a.Record(5);
  EXPECT_FALSE(a == b);
  b.Record(5);
  EXPECT_EQ(a, b);
  Histogram copy = a;
  EXPECT_EQ(copy, a);
  copy.Clear();
  EXPECT_EQ(copy, Histogram());
  EXPECT_EQ(copy.allocated_bytes(), 0u);
}

TEST(HistogramTest, MemoryIsBoundedByPages) {
  Histogram narrow;
  for (int64_t v = 0; v < 1024; ++v)
    narrow.RecordN(v, 1000);
  EXPECT_EQ(narrow.allocated_bytes(), Histogram::kPageSlotsBytes + kPageBytes);

  Histogram wide;
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> exponent(0, 62);
  for (int i = 0; i < 1000000; ++i) {
    wide.Record(static_cast<int64_t>(rng() >> (1 + exponent(rng))));
    ASSERT_LE(wide.allocated_bytes(), kMostBytes);
  }
  EXPECT_EQ(wide.allocated_bytes(), kMostBytes);
  Histogram merged;
  merged.Merge(wide);
  merged.Merge(wide);
  EXPECT_LE(merged.allocated_bytes(), kMostBytes);
}

// --- Encoding -----------------------------------------------------------------------------

// Produced by HdrHistogram Java 2.2.2 (integrations/jvm/hdr-check: `encode`) from the values
// 0 1 1023 1024 2047 2048 10000x3 123456 3600000000 in Histogram(1, 3600000000, 3).
constexpr const char* kJavaEncoded =
    "HISTFAAAADN4nJNpmSzMwMAgwgABzFCaEURcm7yEwf4DRICJ6Sc/E9NvID6ozHbaiunyG0YmAOc+Cmw=";

Histogram JavaVectorValues() {
  Histogram h;
  for (int64_t v : {0, 1, 1023, 1024, 2047, 2048})
    h.Record(v);
  h.RecordN(10000, 3);
  h.Record(123456);
  h.Record(3600000000);
  return h;
}

TEST(HistogramEncodingTest, MatchesHdrHistogramJavaByteForByte) {
  EXPECT_EQ(JavaVectorValues().EncodeBase64(), kJavaEncoded);
  Result<Histogram> decoded = Histogram::DecodeBase64(kJavaEncoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, JavaVectorValues());
  // What Java's decode printed: total min max p50 p90 p99 p99.9.
  EXPECT_EQ(decoded->total_count(), 11u);
  EXPECT_EQ(decoded->min(), 0);
  EXPECT_EQ(decoded->max(), 3600809983);
  EXPECT_EQ(decoded->ValueAtPercentile(50), 2049);
  EXPECT_EQ(decoded->ValueAtPercentile(90), 123519);
  EXPECT_EQ(decoded->ValueAtPercentile(99), 3600809983);
  // Java's encodings of an empty histogram and of a single 0.
  EXPECT_EQ(Histogram().EncodeBase64(), "HISTFAAAAB94nJNpmSzMwMDAyAABzFAazL82eQmD/QeoCABVgwSI");
  Histogram zero;
  zero.Record(0);
  EXPECT_EQ(zero.EncodeBase64(), "HISTFAAAACB4nJNpmSzMwMDAyAABzFAazL82eQmD/QeIABMAVYUEig==");
}

TEST(HistogramEncodingTest, RoundTrips) {
  std::vector<Histogram> cases(5);
  cases[1].Record(0);
  cases[2].RecordN(Histogram::kHighest, 1000000);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {
    cases[3].Record(static_cast<int64_t>(rng() % 5000000));
    cases[4].RecordN(static_cast<int64_t>(rng() >> (1 + rng() % 63)), rng() % 1000);
  }
  for (const Histogram& h : cases) {
    Result<Histogram> decoded = Histogram::DecodeBase64(h.EncodeBase64());
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    EXPECT_EQ(*decoded, h);
    EXPECT_EQ(decoded->min(), h.min());
    EXPECT_EQ(decoded->max(), h.max());
    EXPECT_EQ(decoded->EncodeCompressed(), h.EncodeCompressed());
  }
}

// Builds a V2 compressed encoding from a header and raw payload, to make inputs HdrHistogram
// would never write.
struct Blob {
  uint32_t cookie = 0x1c849313;
  int32_t normalizing_offset = 0;
  int32_t digits = 3;
  int64_t lowest = 1;
  int64_t highest = 3600000000;
  double ratio = 1.0;
  std::string payload;
  int32_t payload_length = -1;  // -1: the payload's

  std::string Plain() const {
    std::string out;
    auto put = [&out](uint64_t v, int bytes) {
      for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8)
        out.push_back(static_cast<char>((v >> shift) & 0xff));
    };
    put(cookie, 4);
    put(static_cast<uint32_t>(payload_length < 0 ? static_cast<int32_t>(payload.size())
                                                 : payload_length),
        4);
    put(static_cast<uint32_t>(normalizing_offset), 4);
    put(static_cast<uint32_t>(digits), 4);
    put(static_cast<uint64_t>(lowest), 8);
    put(static_cast<uint64_t>(highest), 8);
    put(std::bit_cast<uint64_t>(ratio), 8);
    return out + payload;
  }
  std::string Compressed() const { return Wrap(Plain()); }
  static std::string Wrap(const std::string& plain, uint32_t cookie = 0x1c849314) {
    uLongf size = compressBound(static_cast<uLong>(plain.size()));
    std::string z(size, '\0');
    compress2(reinterpret_cast<Bytef*>(z.data()), &size,
              reinterpret_cast<const Bytef*>(plain.data()), static_cast<uLong>(plain.size()), 6);
    z.resize(size);
    std::string out;
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<char>((cookie >> shift) & 0xff));
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<char>((size >> shift) & 0xff));
    return out + z;
  }
};

std::string ZigZag(int64_t value) {
  uint64_t v = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  std::string out;
  for (int i = 0; i < 8; ++i) {
    if ((v >> 7) == 0) return out + static_cast<char>(v);
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  return out + static_cast<char>(v);
}

TEST(HistogramEncodingTest, DecodesHandMadePayloads) {
  Blob blob;
  // counts: [0]=2, zeros x4, [5]=1, one single 0, [7]=9-byte-encoded count.
  blob.payload = ZigZag(2) + ZigZag(-4) + ZigZag(1) + ZigZag(0) + ZigZag(int64_t{1} << 40);
  Result<Histogram> h = Histogram::DecodeCompressed(blob.Compressed());
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->CountAtValue(0), 2u);
  EXPECT_EQ(h->CountAtValue(5), 1u);
  EXPECT_EQ(h->CountAtValue(6), 0u);
  EXPECT_EQ(h->CountAtValue(7), uint64_t{1} << 40);
  EXPECT_EQ(h->total_count(), 3 + (uint64_t{1} << 40));
  EXPECT_EQ(ZigZag(int64_t{1} << 62).size(), 9u);
  blob.payload = ZigZag(int64_t{1} << 62);
  ASSERT_TRUE(Histogram::DecodeCompressed(blob.Compressed()).ok());
}

TEST(HistogramEncodingTest, AcceptsOtherLayoutsByReRecording) {
  // HdrHistogram Java: Histogram(1, 1e12, 2) holding 5, 1000, 123456, 1e10. With 2 digits the
  // buckets are [5], [1000, 1003], [123392, 123903], [9999220736, ...]; each count comes back
  // at its bucket's lowest value, the last one clamped to kHighest.
  Result<Histogram> two_digits = Histogram::DecodeBase64(
      "HISTFAAAACx4nJNpmSzMwMDAzQABTFCaEYhfXFkqwGD/ASLAyfScnek1L9NRBSYAoJkH0Q==");
  ASSERT_TRUE(two_digits.ok()) << two_digits.status().message();
  Histogram expected;
  for (int64_t v : {int64_t{5}, int64_t{1000}, int64_t{123392}, Histogram::kHighest})
    expected.Record(v);
  EXPECT_EQ(*two_digits, expected);
  EXPECT_EQ(two_digits->saturated(), 1u);

  // Histogram(1000, 1e9, 3): unit 512. 1500 -> [1024, 1535], 1e6 -> [999936, 1000447].
  Result<Histogram> unit512 =
      Histogram::DecodeBase64("HISTFAAAACR4nJNpmSzMwMDAygABzFDqBYi0nnWKwf4DVIRptxwTAHc/Beg=");
  ASSERT_TRUE(unit512.ok()) << unit512.status().message();
  EXPECT_EQ(unit512->CountAtValue(1024), 1u);
  EXPECT_EQ(unit512->CountAtValue(999936), 1u);

  // Histogram(1, 3600000000, 4): 123457 -> [123456, 123459] -> ours [123456, 123519].
  Result<Histogram> four_digits =
      Histogram::DecodeBase64("HISTFAAAACN4nJNpmSzMwMDAwgABMJoRRFybvITB/gNEYP4jdiYAaNkGFg==");
  ASSERT_TRUE(four_digits.ok()) << four_digits.status().message();
  EXPECT_EQ(four_digits->ValueAtPercentile(100), 123519);

  // Our layout with a larger highest value is the same buckets: exact.
  Blob blob;
  blob.highest = int64_t{1} << 50;
  blob.payload = ZigZag(-5) + ZigZag(3);
  Result<Histogram> wider = Histogram::DecodeCompressed(blob.Compressed());
  ASSERT_TRUE(wider.ok()) << wider.status().message();
  EXPECT_EQ(wider->CountAtValue(5), 3u);
}

void ExpectRejected(std::string_view bytes, std::string_view why) {
  Result<Histogram> h = Histogram::DecodeCompressed(bytes);
  EXPECT_FALSE(h.ok()) << why;
}

TEST(HistogramEncodingTest, RejectsCorruptInput) {
  const std::string good = JavaVectorValues().EncodeCompressed();
  ASSERT_TRUE(Histogram::DecodeCompressed(good).ok());
  for (size_t n = 0; n < good.size(); ++n)
    ExpectRejected(good.substr(0, n), "truncated at " + std::to_string(n));
  ExpectRejected(good + "x", "trailing byte");
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = good;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      Result<Histogram> h = Histogram::DecodeCompressed(flipped);  // must not crash
      if (h.ok()) {
        EXPECT_LE(h->allocated_bytes(), kMostBytes);
      }
    }
  }

  Blob blob;
  blob.payload = ZigZag(1);
  ASSERT_TRUE(Histogram::DecodeCompressed(blob.Compressed()).ok());
  Blob bad = blob;
  bad.cookie = 0x1c849301;  // V1
  ExpectRejected(bad.Compressed(), "V1 inner cookie");
  ExpectRejected(Blob::Wrap(blob.Plain(), 0x1c849302), "V1 compressed cookie");
  ExpectRejected(Blob::Wrap(blob.Plain(), 0x12345678), "unknown cookie");
  bad = blob;
  bad.payload_length = 5;
  ExpectRejected(bad.Compressed(), "payload length mismatch");
  bad = blob;
  bad.normalizing_offset = 3;
  ExpectRejected(bad.Compressed(), "normalizing offset");
  bad = blob;
  bad.ratio = 0.001;
  ExpectRejected(bad.Compressed(), "conversion ratio");
  bad = blob;
  bad.digits = 6;
  ExpectRejected(bad.Compressed(), "digits");
  bad = blob;
  bad.lowest = 0;
  ExpectRejected(bad.Compressed(), "lowest 0");
  bad = blob;
  bad.highest = 1;
  ExpectRejected(bad.Compressed(), "highest < 2 * lowest");
  bad = blob;
  bad.payload = std::string("\x81", 1);
  ExpectRejected(bad.Compressed(), "truncated varint");
  bad = blob;
  bad.payload = ZigZag(-Histogram::kCountsLength) + ZigZag(1);
  ExpectRejected(bad.Compressed(), "count past the last counter");
  bad = blob;
  bad.payload = ZigZag(-(int64_t{1} << 40));
  ExpectRejected(bad.Compressed(), "zero run over 2^31");
  bad = blob;
  bad.payload = ZigZag(std::numeric_limits<int64_t>::min());
  ExpectRejected(bad.Compressed(), "most negative count");
  bad = blob;
  bad.payload = ZigZag(std::numeric_limits<int64_t>::max()) +
                ZigZag(std::numeric_limits<int64_t>::max()) + ZigZag(2);
  ExpectRejected(bad.Compressed(), "total overflows");
  bad = blob;
  bad.payload = std::string(20 << 20, '\0');  // a zlib bomb: 20 MiB of zeros
  bad.payload_length = 0;
  ExpectRejected(bad.Compressed(), "inflates past the cap");

  EXPECT_FALSE(Histogram::DecodeBase64("HISTFAAA!!").ok());
  EXPECT_FALSE(Histogram::DecodeBase64("").ok());
  EXPECT_FALSE(Histogram::DecodeBase64(std::string(kJavaEncoded).substr(4)).ok());
}

}  // namespace
}  // namespace hammer::stats

namespace hammer::stats {
namespace {

TEST(HistogramStatsTest, ValuesAtPercentilesInOnePassEqualEachAlone) {
  std::mt19937_64 rng(17);
  const std::vector<double> percentiles = {0.0, 1.0, 50.0, 50.0, 90.0, 99.0, 99.9, 99.999, 100.0};
  for (int round = 0; round < 50; ++round) {
    Histogram h;
    int n = static_cast<int>(rng() % 2000);
    for (int i = 0; i < n; ++i)
      h.Record(static_cast<int64_t>(rng() % (1u << (rng() % 30))));
    std::vector<int64_t> values(percentiles.size(), -1);
    h.ValuesAtPercentiles(percentiles, values);
    for (size_t i = 0; i < percentiles.size(); ++i)
      EXPECT_EQ(values[i], h.ValueAtPercentile(percentiles[i])) << percentiles[i];
  }
  std::vector<int64_t> none(2, -1);
  Histogram().ValuesAtPercentiles(std::vector<double>{50.0, 99.0}, none);
  EXPECT_EQ(none, (std::vector<int64_t>{0, 0}));
}

}  // namespace
}  // namespace hammer::stats
