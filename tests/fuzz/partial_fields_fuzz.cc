// libFuzzer target for partial aggregates (stats/partial.h): ParsePartialFields, the reader of
// "KEY<TAB>#hp1 <count> <errors> <sum> <min> <max> <failures> <histogram>" lines that
// combiners write and reducers merge. Input: the fields after "#hp1 ".
// Seeds: tests/fuzz/corpus/partial_fields/ (partials written by `hammer stats --combine`).
//
// Each input is parsed twice: as it is, and with its histogram field replaced by a valid
// encoding built from its own count, min and max (count-2 values at min, one at min, one at
// max), so that mutations of the six leading fields reach the consistency rules instead of
// stopping at the histogram's base64 or zlib checksum (histogram_decode_fuzz covers those).
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when an accepted partial breaks
// a rule of record.h: histogram total != count; min > max; sum outside [count*min, count*max];
// typed failures more than errors (summed without wrapping); min or max outside the
// histogram's extreme buckets; figures other than zero/'-' when count is 0. Or when writing
// the accepted figures back (AppendPartialRecord) and parsing them gives different KeyStats.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/stats/partial.h"
#include "hammer/stats/record.h"

namespace stats = hammer::stats;

namespace {

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

// Typed failures summed without wrapping around: a sum past 2^64 is "more than any errors".
bool FailuresWithin(const hammer::FailureCounts& failures, uint64_t errors) {
  uint64_t total = 0;
  for (uint64_t n : failures.by_type) {
    if (__builtin_add_overflow(total, n, &total)) return false;
  }
  return total <= errors;
}

void CheckAccepted(const stats::KeyStats& figures) {
  const stats::Histogram& h = figures.histogram;
  Require(h.total_count() == figures.count);
  Require(FailuresWithin(figures.failures.counts(), figures.errors));
  if (figures.count == 0) {
    Require(figures.sum_micros == 0);
  } else {
    Require(figures.min_micros >= 0 && figures.min_micros <= figures.max_micros);
    const __int128 n = figures.count;
    Require(figures.sum_micros >= n * figures.min_micros &&
            figures.sum_micros <= n * figures.max_micros);
    auto clamp = [](int64_t v) {
      return v > stats::Histogram::kHighest ? stats::Histogram::kHighest : v;
    };
    Require(stats::Histogram::LowestEquivalent(clamp(figures.min_micros)) == h.min());
    Require(stats::Histogram::HighestEquivalent(clamp(figures.max_micros)) == h.max());
  }
  std::string line;
  stats::AppendPartialRecord(line, "k", figures);
  Require(line.ends_with('\n'));
  line.pop_back();
  stats::ParsedRecord record = stats::ParseRecordLine(line);
  Require(record.kind == stats::RecordKind::kPartial && record.key == "k");
  stats::KeyStats again;
  Require(stats::ParsePartialFields(record.partial, &again).ok());
  Require(again == figures);
}

void Check(std::string_view fields) {
  stats::KeyStats figures;
  hammer::Status status = stats::ParsePartialFields(fields, &figures);
  if (status.ok()) {
    CheckAccepted(figures);
  } else {
    Require(std::string_view(status.message()).starts_with("partial: "));
  }
}

// Digits only, up to 18 of them (fits int64_t); false otherwise.
bool SmallNumber(std::string_view text, int64_t* out) {
  if (text.empty() || text.size() > 18) return false;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *out = value;
  return true;
}

// The input's first six fields followed by a histogram that agrees with its count, min and max
// (when they are small enough to build one); empty when the input has no six fields.
std::string WithConsistentHistogram(std::string_view fields) {
  std::string_view parts[6];
  std::string_view rest = fields;
  for (std::string_view& part : parts) {
    const size_t space = rest.find(' ');
    if (space == std::string_view::npos) return {};
    part = rest.substr(0, space);
    rest.remove_prefix(space + 1);
  }
  stats::Histogram histogram;
  int64_t count = 0, min = 0, max = 0;
  if (SmallNumber(parts[0], &count) && count > 0 && count <= 100000 &&
      SmallNumber(parts[3], &min) && SmallNumber(parts[4], &max)) {
    histogram.Record(min);
    if (count >= 2) {
      histogram.RecordN(min, static_cast<uint64_t>(count - 2));
      histogram.Record(max);
    }
  }
  std::string out(fields.substr(0, fields.size() - rest.size()));
  out += histogram.EncodeBase64();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view fields(reinterpret_cast<const char*>(data), size);
  Check(fields);
  if (std::string rebuilt = WithConsistentHistogram(fields); !rebuilt.empty()) Check(rebuilt);
  return 0;
}
