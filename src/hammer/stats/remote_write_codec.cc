#include "hammer/stats/remote_write_codec.h"

#include <snappy.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace hammer::stats {

namespace {

// Protobuf wire types (https://protobuf.dev/programming-guides/encoding/).
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;
constexpr uint32_t kFixed32 = 5;

constexpr uint32_t Tag(uint32_t field, uint32_t wire_type) {
  return field << 3 | wire_type;
}

void PutVarint(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void PutFixed64(std::string* out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out->push_back(static_cast<char>(value >> (8 * i)));  // little-endian
}

void PutString(std::string* out, uint32_t field, std::string_view text) {
  PutVarint(out, Tag(field, kLengthDelimited));
  PutVarint(out, text.size());
  out->append(text);
}

// Length-delimited field `field` whose content `write` appends: written into a scratch string
// first, since its length comes before it.
template <typename Write>
void PutMessage(std::string* out, uint32_t field, std::string* scratch, Write write) {
  scratch->clear();
  write(scratch);
  PutVarint(out, Tag(field, kLengthDelimited));
  PutVarint(out, scratch->size());
  out->append(*scratch);
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  bool done() const { return rest_.empty(); }

  bool Varint(uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (rest_.empty()) return false;
      const auto byte = static_cast<uint8_t>(rest_[0]);
      rest_.remove_prefix(1);
      *value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;  // more than 10 bytes
  }

  bool Fixed64(uint64_t* value) {
    if (rest_.size() < 8) return false;
    *value = 0;
    for (int i = 7; i >= 0; --i)
      *value = *value << 8 | static_cast<uint8_t>(rest_[static_cast<size_t>(i)]);
    rest_.remove_prefix(8);
    return true;
  }

  bool Bytes(std::string_view* bytes) {
    uint64_t length = 0;
    if (!Varint(&length) || length > rest_.size()) return false;
    *bytes = rest_.substr(0, length);
    rest_.remove_prefix(length);
    return true;
  }

  // The next field's number and wire type.
  bool Field(uint32_t* field, uint32_t* wire_type) {
    uint64_t tag = 0;
    if (!Varint(&tag) || tag >> 3 == 0 || tag >> 3 > UINT32_MAX) return false;
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<uint32_t>(tag & 7);
    return true;
  }

  bool Skip(uint32_t wire_type) {
    uint64_t ignored = 0;
    std::string_view bytes;
    switch (wire_type) {
      case kVarint:
        return Varint(&ignored);
      case kFixed64:
        return Fixed64(&ignored);
      case kLengthDelimited:
        return Bytes(&bytes);
      case kFixed32:
        if (rest_.size() < 4) return false;
        rest_.remove_prefix(4);
        return true;
      default:  // 3 and 4 (groups, deprecated) are not in these messages; 6 and 7 do not exist
        return false;
    }
  }

 private:
  std::string_view rest_;
};

Status Malformed(std::string_view what) {
  return Status::Error("malformed WriteRequest: " + std::string(what));
}

Status DecodeLabel(std::string_view bytes, std::pair<std::string, std::string>* label) {
  Reader in(bytes);
  while (!in.done()) {
    uint32_t field = 0;
    uint32_t type = 0;
    if (!in.Field(&field, &type)) return Malformed("label field");
    std::string_view text;
    if ((field == 1 || field == 2) && type == kLengthDelimited) {
      if (!in.Bytes(&text)) return Malformed("label string");
      (field == 1 ? label->first : label->second) = std::string(text);
    } else if (field == 1 || field == 2 || !in.Skip(type)) {
      return Malformed("label field");
    }
  }
  return Status::Ok();
}

Status DecodeSample(std::string_view bytes, double* value, int64_t* timestamp_ms) {
  Reader in(bytes);
  while (!in.done()) {
    uint32_t field = 0;
    uint32_t type = 0;
    if (!in.Field(&field, &type)) return Malformed("sample field");
    uint64_t raw = 0;
    if (field == 1 && type == kFixed64) {
      if (!in.Fixed64(&raw)) return Malformed("sample value");
      *value = std::bit_cast<double>(raw);
    } else if (field == 2 && type == kVarint) {
      if (!in.Varint(&raw)) return Malformed("sample timestamp");
      *timestamp_ms = static_cast<int64_t>(raw);
    } else if (field == 1 || field == 2 || !in.Skip(type)) {
      return Malformed("sample field");
    }
  }
  return Status::Ok();
}

Status DecodeSeries(std::string_view bytes, std::vector<RemoteWriteSample>* out) {
  Reader in(bytes);
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<std::pair<double, int64_t>> samples;
  while (!in.done()) {
    uint32_t field = 0;
    uint32_t type = 0;
    if (!in.Field(&field, &type)) return Malformed("series field");
    std::string_view message;
    if ((field == 1 || field == 2) && type == kLengthDelimited) {
      if (!in.Bytes(&message)) return Malformed("series field");
      if (field == 1) {
        labels.emplace_back();
        if (Status s = DecodeLabel(message, &labels.back()); !s.ok()) return s;
      } else {
        samples.emplace_back(0.0, 0);
        Status s = DecodeSample(message, &samples.back().first, &samples.back().second);
        if (!s.ok()) return s;
      }
    } else if (field == 1 || field == 2 || !in.Skip(type)) {
      return Malformed("series field");
    }
  }
  for (const auto& [value, timestamp_ms] : samples)
    out->push_back(RemoteWriteSample{labels, value, timestamp_ms});
  return Status::Ok();
}

}  // namespace

std::string EncodeWriteRequest(std::span<const RemoteWriteSample> samples) {
  std::string out;
  std::string series;
  std::string inner;
  std::vector<const std::pair<std::string, std::string>*> sorted;
  for (const RemoteWriteSample& sample : samples) {
    sorted.clear();
    for (const auto& label : sample.labels)
      sorted.push_back(&label);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto* a, const auto* b) { return a->first < b->first; });
    PutMessage(&out, 1, &series, [&](std::string* ts) {
      for (const auto* label : sorted) {
        PutMessage(ts, 1, &inner, [&](std::string* l) {
          PutString(l, 1, label->first);
          PutString(l, 2, label->second);
        });
      }
      PutMessage(ts, 2, &inner, [&](std::string* s) {
        PutVarint(s, Tag(1, kFixed64));
        PutFixed64(s, std::bit_cast<uint64_t>(sample.value));
        PutVarint(s, Tag(2, kVarint));
        PutVarint(s, static_cast<uint64_t>(sample.timestamp_ms));  // int64: two's complement
      });
    });
  }
  return out;
}

Result<std::vector<RemoteWriteSample>> DecodeWriteRequest(std::string_view bytes) {
  Reader in(bytes);
  std::vector<RemoteWriteSample> samples;
  while (!in.done()) {
    uint32_t field = 0;
    uint32_t type = 0;
    if (!in.Field(&field, &type)) return Malformed("request field");
    std::string_view message;
    if (field == 1 && type == kLengthDelimited) {
      if (!in.Bytes(&message)) return Malformed("time series");
      if (Status s = DecodeSeries(message, &samples); !s.ok()) return s;
    } else if (field == 1 || !in.Skip(type)) {
      return Malformed("request field");
    }
  }
  return samples;
}

std::string SnappyCompress(std::string_view bytes) {
  std::string out;
  snappy::Compress(bytes.data(), bytes.size(), &out);
  return out;
}

Result<std::string> SnappyUncompress(std::string_view bytes, size_t max_bytes) {
  size_t length = 0;
  if (!snappy::GetUncompressedLength(bytes.data(), bytes.size(), &length)) {
    return Status::Error("not a Snappy block");
  }
  if (length > max_bytes) return Status::Error("Snappy block expands beyond the limit");
  std::string out;
  if (!snappy::Uncompress(bytes.data(), bytes.size(), &out)) {
    return Status::Error("not a Snappy block");
  }
  return out;
}

}  // namespace hammer::stats
