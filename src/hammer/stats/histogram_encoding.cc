// HdrHistogram V2 compressed encoding of Histogram.
//
// Format facts from HdrHistogram Java 2.2.2 (org/HdrHistogram/AbstractHistogram.java:
// encodeIntoByteBuffer, fillBufferFromCountsArray, encodeIntoCompressedByteBuffer,
// decodeFromCompressedByteBuffer, fillCountsArrayFromSourceBuffer; ZigZagEncoding.java):
//   compressed: int32 cookie 0x1c849314, int32 length N of what follows, N bytes of zlib
//               (deflate with zlib header, Deflater's default level) of the uncompressed form.
//   uncompressed: 40-byte header, all big-endian: int32 cookie 0x1c849313, int32 payload
//               length, int32 normalizingIndexOffset, int32 significant digits, int64 lowest
//               discernible value, int64 highest trackable value, float64
//               integerToDoubleValueConversionRatio; then the payload: one ZigZag LEB128
//               number (at most 9 bytes, the 9th holding 8 bits) per counts-array index up to
//               the index of the largest value; a run of two or more zero counts is written
//               as one negative number (-run length).
// The low nibble of the cookies' second byte from the end is the "word size" (0x10 = LEB128),
// which decoders mask away.

#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>

#include "hammer/base/base64.h"
#include "hammer/stats/histogram.h"

namespace hammer::stats {
namespace {

constexpr uint32_t kCookieWordSizeMask = 0xf0;
constexpr uint32_t kV2EncodingCookieBase = 0x1c849303;
constexpr uint32_t kV2CompressedEncodingCookieBase = 0x1c849304;
constexpr uint32_t kV1CompressedEncodingCookieBase = 0x1c849302;
constexpr uint32_t kV0CompressedEncodingCookieBase = 0x1c849309;
constexpr uint32_t kLeb128WordSizeFlag = 0x10;
constexpr size_t kHeaderSize = 40;
constexpr int kMaxSignificantDigits = 5;  // HdrHistogram's own limit
// No legitimate payload comes near this (ours is at most 23552 * 9 bytes); it bounds what a
// corrupt or hostile input (a zlib bomb) can make the decoder allocate.
constexpr size_t kMaxInflatedBytes = 16 << 20;

void PutBigEndian32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

void PutBigEndian64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

uint64_t GetBigEndian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

void PutZigZag(std::string& out, int64_t value) {
  uint64_t v = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  for (int i = 0; i < 8; ++i) {
    if ((v >> 7) == 0) {
      out.push_back(static_cast<char>(v));
      return;
    }
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));  // the 9th byte carries the last 8 bits whole
}

// Reads one ZigZag LEB128 number at data[*pos]; false when the input ends inside it.
bool GetZigZag(std::string_view data, size_t* pos, int64_t* out) {
  uint64_t v = 0;
  int i = 0;
  for (; i < 8; ++i) {
    if (*pos >= data.size()) return false;
    uint8_t b = static_cast<uint8_t>(data[(*pos)++]);
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) break;
  }
  if (i == 8) {
    if (*pos >= data.size()) return false;
    v |= static_cast<uint64_t>(static_cast<uint8_t>(data[(*pos)++])) << 56;
  }
  *out = static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
  return true;
}

// The bucket layout an encoded histogram declares, computed as HdrHistogram's init() and
// establishSize() do (same floating-point formulas, so the same results).
struct Layout {
  int unit_magnitude = 0;
  int sub_bucket_half_count_magnitude = 0;
  int64_t counts_length = 0;

  // valueFromIndex; false when the value does not fit in an int64.
  bool ValueFromIndex(int64_t index, int64_t* value) const {
    int64_t half_count = int64_t{1} << sub_bucket_half_count_magnitude;
    int64_t bucket = (index >> sub_bucket_half_count_magnitude) - 1;
    int64_t sub_bucket = (index & (half_count - 1)) + half_count;
    if (bucket < 0) {
      sub_bucket -= half_count;
      bucket = 0;
    }
    int64_t shift = bucket + unit_magnitude;
    if (shift > 62 || sub_bucket > (std::numeric_limits<int64_t>::max() >> shift)) return false;
    *value = sub_bucket << shift;
    return true;
  }
};

Result<Layout> LayoutFromHeader(int32_t digits, int64_t lowest, int64_t highest) {
  if (digits < 0 || digits > kMaxSignificantDigits) {
    return Status::Error("histogram: significant digits " + std::to_string(digits) +
                         " outside 0..5");
  }
  if (lowest < 1 || highest / 2 < lowest) {
    return Status::Error("histogram: invalid value range " + std::to_string(lowest) + ".." +
                         std::to_string(highest));
  }
  Layout layout;
  int64_t largest_single_unit = 2 * static_cast<int64_t>(std::pow(10.0, digits));
  layout.unit_magnitude = static_cast<int>(std::log(static_cast<double>(lowest)) / std::log(2.0));
  int sub_bucket_count_magnitude = static_cast<int>(
      std::ceil(std::log(static_cast<double>(largest_single_unit)) / std::log(2.0)));
  if (sub_bucket_count_magnitude + layout.unit_magnitude > 62) {
    return Status::Error("histogram: significant digits do not fit above the lowest value");
  }
  layout.sub_bucket_half_count_magnitude = sub_bucket_count_magnitude - 1;
  int64_t sub_bucket_count = int64_t{1} << sub_bucket_count_magnitude;
  int64_t smallest_untrackable = sub_bucket_count << layout.unit_magnitude;
  int64_t buckets = 1;
  while (smallest_untrackable <= highest) {
    if (smallest_untrackable > std::numeric_limits<int64_t>::max() / 2) {
      ++buckets;
      break;
    }
    smallest_untrackable <<= 1;
    ++buckets;
  }
  layout.counts_length = (buckets + 1) * (sub_bucket_count / 2);
  return layout;
}

Result<std::string> Inflate(std::string_view compressed) {
  z_stream stream{};
  if (inflateInit(&stream) != Z_OK) return Status::Error("histogram: zlib init failed");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (out.size() >= kMaxInflatedBytes) break;
    size_t used = out.size();
    out.resize(std::min(kMaxInflatedBytes, std::max<size_t>(used * 2, 4096)));
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    stream.avail_out = static_cast<uInt>(out.size() - used);
    rc = inflate(&stream, Z_NO_FLUSH);
    out.resize(out.size() - stream.avail_out);
    if (rc == Z_BUF_ERROR && stream.avail_out != 0) break;  // input ended mid-stream
    if (rc == Z_BUF_ERROR) rc = Z_OK;                       // output full: grow and go on
  }
  bool trailing = stream.avail_in != 0;
  inflateEnd(&stream);
  if (rc != Z_STREAM_END) {
    if (out.size() >= kMaxInflatedBytes) return Status::Error("histogram: payload too large");
    return Status::Error("histogram: corrupt or truncated zlib data");
  }
  if (trailing) return Status::Error("histogram: bytes after the zlib stream");
  return out;
}

// A zlib deflate state kept per thread and level, reset between histograms: deflateInit
// allocates and clears about 270 KB, which costs as much as compressing a typical histogram
// (a reducer encodes one per key). deflateReset gives the same bytes as a fresh state, so the
// output is still exactly compress2's (and Java's Deflater's).
class Deflater {
 public:
  explicit Deflater(int level) {
    // Fails only for lack of memory.
    if (deflateInit(&stream_, level) != Z_OK) std::abort();
  }
  ~Deflater() { deflateEnd(&stream_); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  // Compresses `in` into `out`, whose `capacity` is at least compressBound(in.size()); returns
  // the compressed length.
  uLong Compress(const std::string& in, char* out, uLong capacity) {
    if (deflateReset(&stream_) != Z_OK) std::abort();
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    stream_.avail_in = static_cast<uInt>(in.size());
    stream_.next_out = reinterpret_cast<Bytef*>(out);
    stream_.avail_out = static_cast<uInt>(capacity);
    // With compressBound's room, one Z_FINISH call always completes the stream.
    if (deflate(&stream_, Z_FINISH) != Z_STREAM_END) std::abort();
    return stream_.total_out;
  }

 private:
  z_stream stream_{};
};

Deflater& DeflaterFor(int level) {
  thread_local std::array<std::unique_ptr<Deflater>, 11> deflaters;  // levels -1 to 9
  std::unique_ptr<Deflater>& deflater = deflaters[static_cast<size_t>(level + 1)];
  if (!deflater) deflater = std::make_unique<Deflater>(level);
  return *deflater;
}

}  // namespace

std::string Histogram::EncodeCompressed(int zlib_level) const {
  zlib_level = std::clamp(zlib_level, -1, 9);
  std::string plain;
  // Usually enough: a sparse histogram writes at most two numbers per bucket (a zero run, a
  // count), a paged one about two bytes per index.
  size_t expected = sparse() ? 2 * static_cast<size_t>(sparse_size_) * 9
                             : 2 * static_cast<size_t>(max_index_ + 1);
  plain.reserve(kHeaderSize + expected + 16);
  PutBigEndian32(plain, kV2EncodingCookieBase | kLeb128WordSizeFlag);
  PutBigEndian32(plain, 0);  // payload length, patched below
  PutBigEndian32(plain, 0);  // normalizingIndexOffset
  PutBigEndian32(plain, kSignificantDigits);
  PutBigEndian64(plain, kLowestDiscernible);
  PutBigEndian64(plain, kHighest);
  PutBigEndian64(plain, std::bit_cast<uint64_t>(1.0));  // integerToDoubleValueConversionRatio

  // Every index up to the largest non-empty one (at least index 0): a lone zero count is
  // written as 0, a run of zeros as -length. The last written index is max_index_, so no run
  // trails.
  int previous = -1;
  VisitCounts([&](int index, uint64_t count) {
    int zeros = index - previous - 1;
    if (zeros > 0) PutZigZag(plain, zeros == 1 ? 0 : -int64_t{zeros});
    PutZigZag(plain, static_cast<int64_t>(count));
    previous = index;
    return true;
  });
  if (previous < 0) PutZigZag(plain, 0);  // empty: the one count of index 0
  uint32_t payload_length = static_cast<uint32_t>(plain.size() - kHeaderSize);
  for (int i = 0; i < 4; ++i)
    plain[4 + i] = static_cast<char>((payload_length >> (24 - 8 * i)) & 0xff);

  uLong bound = compressBound(static_cast<uLong>(plain.size()));
  std::string out;
  out.resize(8 + bound);
  uLong compressed_length = DeflaterFor(zlib_level).Compress(plain, out.data() + 8, bound);
  out.resize(8 + compressed_length);
  std::string header;
  PutBigEndian32(header, kV2CompressedEncodingCookieBase | kLeb128WordSizeFlag);
  PutBigEndian32(header, static_cast<uint32_t>(compressed_length));
  out.replace(0, 8, header);
  return out;
}

std::string Histogram::EncodeBase64(int zlib_level) const {
  return Base64Encode(EncodeCompressed(zlib_level));
}

Result<Histogram> Histogram::DecodeBase64(std::string_view text) {
  Result<std::string> bytes = Base64Decode(text);
  if (!bytes.ok()) return Status::Error("histogram: " + bytes.status().message());
  return DecodeCompressed(*bytes);
}

Result<Histogram> Histogram::DecodeCompressed(std::string_view bytes) {
  if (bytes.size() < 8) return Status::Error("histogram: shorter than its 8-byte header");
  uint32_t cookie = static_cast<uint32_t>(GetBigEndian(bytes.data(), 4));
  uint32_t cookie_base = cookie & ~kCookieWordSizeMask;
  if (cookie_base == kV1CompressedEncodingCookieBase ||
      cookie_base == kV0CompressedEncodingCookieBase) {
    return Status::Error("histogram: V0/V1 HdrHistogram encodings are not supported (use V2)");
  }
  if (cookie_base != kV2CompressedEncodingCookieBase) {
    return Status::Error("histogram: not a compressed HdrHistogram (bad cookie)");
  }
  int32_t compressed_length = static_cast<int32_t>(GetBigEndian(bytes.data() + 4, 4));
  if (compressed_length < 0 || static_cast<size_t>(compressed_length) != bytes.size() - 8) {
    return Status::Error("histogram: compressed length does not match the input");
  }
  Result<std::string> inflated = Inflate(bytes.substr(8));
  if (!inflated.ok()) return inflated.status();
  std::string_view plain = *inflated;
  if (plain.size() < kHeaderSize) return Status::Error("histogram: truncated header");
  const char* h = plain.data();
  if ((static_cast<uint32_t>(GetBigEndian(h, 4)) & ~kCookieWordSizeMask) != kV2EncodingCookieBase) {
    return Status::Error("histogram: not a V2 HdrHistogram (bad inner cookie)");
  }
  int32_t payload_length = static_cast<int32_t>(GetBigEndian(h + 4, 4));
  int32_t normalizing_index_offset = static_cast<int32_t>(GetBigEndian(h + 8, 4));
  int32_t digits = static_cast<int32_t>(GetBigEndian(h + 12, 4));
  int64_t lowest = static_cast<int64_t>(GetBigEndian(h + 16, 8));
  int64_t highest = static_cast<int64_t>(GetBigEndian(h + 24, 8));
  double ratio = std::bit_cast<double>(GetBigEndian(h + 32, 8));
  if (payload_length < 0 || static_cast<size_t>(payload_length) != plain.size() - kHeaderSize) {
    return Status::Error("histogram: payload length does not match the data");
  }
  if (normalizing_index_offset != 0 || ratio != 1.0) {
    return Status::Error("histogram: shifted or double-valued histograms are not supported");
  }
  Result<Layout> layout = LayoutFromHeader(digits, lowest, highest);
  if (!layout.ok()) return layout.status();

  // Each count is re-recorded at its bucket's lowest value (as HdrHistogram's add() does for
  // histograms of another layout). With our layout (lowest 1, 3 digits, any highest) the buckets
  // are the same ones, so the result is exact.
  Histogram histogram;
  std::string_view payload = plain.substr(kHeaderSize);
  size_t pos = 0;
  int64_t index = 0;
  while (pos < payload.size()) {
    int64_t count = 0;
    if (!GetZigZag(payload, &pos, &count)) return Status::Error("histogram: truncated count");
    if (count < 0) {
      if (count < -int64_t{std::numeric_limits<int32_t>::max()}) {
        return Status::Error("histogram: zero run too long");
      }
      index -= count;
      if (index > layout->counts_length) return Status::Error("histogram: counts out of range");
      continue;
    }
    if (count > 0) {
      int64_t value = 0;
      if (index >= layout->counts_length || !layout->ValueFromIndex(index, &value)) {
        return Status::Error("histogram: counts out of range");
      }
      // Every count must fit the encoding's signed numbers again (a bucket past 2^63 - 1 would
      // be written as a zero run): the total, which bounds each bucket, stays below 2^63.
      uint64_t total = 0;
      if (__builtin_add_overflow(histogram.total_count_, static_cast<uint64_t>(count), &total) ||
          total > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Status::Error("histogram: total count overflows");
      }
      histogram.RecordN(value, static_cast<uint64_t>(count));
    }
    ++index;
  }
  return histogram;
}

}  // namespace hammer::stats
