#include "hammer/stats/report/json.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

#include "hammer/base/failure.h"
#include "hammer/stats/report/tsv.h"

namespace hammer::stats {

nlohmann::ordered_json SummaryHeader(std::string_view command) {
  nlohmann::ordered_json j;
  j["schema"] = std::string(kSummarySchema);
  j["command"] = std::string(command);
  return j;
}

void WriteLatency(JsonWriter& writer, const KeyStats& stats) {
  if (stats.count == 0) {
    writer.Null();
    return;
  }
  writer.BeginObject();
  writer.Key("min_us");
  writer.Int(stats.min_micros);
  writer.Key("mean_us");
  writer.Double(stats.MeanMicros());
  static constexpr JsonName kNames[] = {"p50_us", "p90_us", "p99_us", "p99_9_us"};
  static_assert(std::size(kNames) == kReportedPercentiles.size());
  const std::array<int64_t, kReportedPercentiles.size()> values = ReportedPercentileValues(stats);
  for (size_t i = 0; i < kReportedPercentiles.size(); ++i) {
    writer.Key(kNames[i]);
    writer.Int(values[i]);
  }
  writer.Key("max_us");
  writer.Int(stats.max_micros);
  writer.EndObject();
}

std::array<int64_t, kReportedPercentiles.size()> ReportedPercentileValues(const KeyStats& stats) {
  std::array<int64_t, kReportedPercentiles.size()> values;
  if (stats.min_micros == stats.max_micros) {
    values.fill(stats.min_micros);  // what clamping gives, without reading the histogram
    return values;
  }
  stats.histogram.ValuesAtPercentiles(kReportedPercentiles, values);
  for (int64_t& value : values)
    value = std::clamp(value, stats.min_micros, stats.max_micros);
  return values;
}

void WriteOutcome(JsonWriter& writer, const KeyStats& stats) {
  writer.Key("requests");
  writer.Uint(stats.count + stats.errors);
  writer.Key("succeeded");
  writer.Uint(stats.count);
  writer.Key("failed");
  writer.Uint(stats.errors);
  writer.Key("failures");
  writer.BeginObject();
  uint64_t typed = 0;
  const FailureCounts& failures = stats.failures.counts();
  for (size_t i = 0; i < kFailureCount; ++i) {
    if (failures.by_type[i] == 0) continue;
    writer.KeyText(kFailureNames[i]);
    writer.Uint(failures.by_type[i]);
    typed += failures.by_type[i];
  }
  // Seed records say that a request failed, not why.
  if (stats.errors > typed) {
    writer.Key("untyped");
    writer.Uint(stats.errors - typed);
  }
  writer.EndObject();
  writer.Key("latency");
  WriteLatency(writer, stats);
}

namespace {

// Where a value goes in KeyRowWriter's text while it is made: a byte that JsonWriter never
// prints as it is (a string's control characters are escaped).
constexpr char kValueMark = '\x01';

void MarkValue(JsonWriter& writer) {
  char* p = writer.BeginRaw(1);
  *p++ = kValueMark;
  writer.EndRaw(p);
}

// The row member by member.
void WriteKeyRow(JsonWriter& writer, std::string_view key, const KeyStats& stats) {
  writer.BeginObject();
  writer.Key("key");
  writer.String(key);
  WriteOutcome(writer, stats);
  writer.EndObject();
}

// Whether the latency figures of `stats` (which has successes) are one value, min_micros, and
// the mean prints as it does with ".0": min = max (the percentiles are held within them), and
// sum = count × min with both below 2^53, so that the division of their doubles is exactly min
// (a partial from a hostile reducer input may carry any sum), which PrintJsonDouble prints as
// an integer with ".0" when it is below 10^15 and not negative.
bool OneLatency(const KeyStats& stats) {
  constexpr int64_t kExactInDouble = int64_t{1} << 53;
  constexpr int64_t kIntegralPrinted = 1'000'000'000'000'000;
  int64_t product = 0;
  return stats.min_micros == stats.max_micros && stats.min_micros >= 0 &&
         stats.min_micros < kIntegralPrinted && stats.count < uint64_t{kExactInDouble} &&
         !__builtin_mul_overflow(stats.min_micros, static_cast<int64_t>(stats.count), &product) &&
         product == stats.sum_micros && product < kExactInDouble;
}

// A 64-bit integer at `p` (at most 20 bytes); returns the end of its text.
template <typename Integer>
char* PrintInteger(char* p, Integer value) {
  return std::to_chars(p, p + 20, value).ptr;
}

}  // namespace

KeyRowWriter::KeyRowWriter(bool pretty, size_t depth, size_t one_line_from)
    : pretty_(pretty), depth_(depth), one_line_from_(one_line_from) {
  // The row WriteKeyRow writes for a key with successes and no failures, a mark for each
  // value; the text starts at the row's "{" (what comes before it is the writer's to write).
  std::string row;
  {
    JsonWriter writer(&row, pretty, static_cast<int>(depth));
    writer.OneLineFrom(one_line_from);
    writer.BeginObject();
    writer.Key("key");
    MarkValue(writer);
    for (JsonName name : {JsonName("requests"), JsonName("succeeded"), JsonName("failed")}) {
      writer.Key(name);
      MarkValue(writer);
    }
    writer.Key("failures");
    writer.BeginObject();
    writer.EndObject();
    writer.Key("latency");
    writer.BeginObject();
    for (JsonName name :
         {JsonName("min_us"), JsonName("mean_us"), JsonName("p50_us"), JsonName("p90_us"),
          JsonName("p99_us"), JsonName("p99_9_us"), JsonName("max_us")}) {
      writer.Key(name);
      MarkValue(writer);
    }
    writer.EndObject();
    writer.EndObject();
  }
  size_t value = 0;
  for (size_t i = row.find('{'); i < row.size(); ++i) {
    if (row[i] != kValueMark) {
      text_ += row[i];
      continue;
    }
    ends_[value++] = text_.size();
  }
  ends_[kValues] = text_.size();
  // Room to copy kPieceCopy bytes from any piece's start (Write's over-copies).
  text_.append(kPieceCopy, '\0');
}

void KeyRowWriter::Write(JsonWriter& writer, std::string_view key, const KeyStats& stats) const {
  if (stats.count == 0 || stats.errors != 0 || stats.failures.Total() != 0 ||
      writer.pretty() != pretty_ || writer.depth() != depth_ ||
      writer.one_line_from() != one_line_from_ || !IsPlainJsonText(key)) {
    WriteKeyRow(writer, key, stats);
    return;
  }
  // The text, the key and its quotes, nine integers and the mean (text_ ends with kPieceCopy
  // bytes of room, and 20 bytes an integer leave 4 for each copy of 24 below).
  char* p = writer.BeginRaw(text_.size() + key.size() + 2 + 9 * 20 + kMaxJsonDoubleBytes);
  size_t piece = 0;
  // The text before the next value: kPieceCopy bytes copied (a copy of known size, a few
  // instructions, where a copy of the piece's own size is a call), of which the piece's
  // bytes are kept and the rest written over by what follows.
  auto text = [&] {
    const size_t begin = piece == 0 ? 0 : ends_[piece - 1];
    const size_t size = ends_[piece] - begin;
    if (size <= kPieceCopy) {
      std::memcpy(p, text_.data() + begin, kPieceCopy);
    } else {
      std::memcpy(p, text_.data() + begin, size);
    }
    p += size;
    ++piece;
  };
  text();
  *p++ = '"';
  std::memcpy(p, key.data(), key.size());
  p += key.size();
  *p++ = '"';
  text();
  // A number printed once, aside, and copied (all 24 bytes, a copy of known size) wherever it
  // appears.
  struct Printed {
    char text[24] = {};
    size_t size = 0;
  };
  auto put = [&p](const Printed& number) {
    std::memcpy(p, number.text, sizeof(number.text));
    p += number.size;
  };
  Printed count;
  count.size = static_cast<size_t>(PrintInteger(count.text, stats.count) - count.text);
  put(count);  // requests: all succeeded
  text();
  put(count);
  text();
  *p++ = '0';  // failed
  text();
  if (OneLatency(stats)) {
    // Every request took the same time (a key requested once, most often): the mean and the
    // percentiles are that time too, printed once.
    Printed value;
    value.size = static_cast<size_t>(PrintInteger(value.text, stats.min_micros) - value.text);
    put(value);
    text();
    put(value);
    *p++ = '.';
    *p++ = '0';
    for (size_t i = 0; i < kReportedPercentiles.size() + 1; ++i) {  // and max
      text();
      put(value);
    }
  } else {
    p = PrintInteger(p, stats.min_micros);
    text();
    p = PrintJsonDouble(p, stats.MeanMicros());
    for (int64_t value : ReportedPercentileValues(stats)) {
      text();
      p = PrintInteger(p, value);
    }
    text();
    p = PrintInteger(p, stats.max_micros);
  }
  const size_t begin = ends_[kValues - 1];
  std::memcpy(p, text_.data() + begin, ends_[kValues] - begin);
  writer.EndRaw(p + (ends_[kValues] - begin));
}

nlohmann::ordered_json LatencyJson(const KeyStats& stats) {
  std::string text;
  JsonWriter writer(&text, /*pretty=*/false);
  WriteLatency(writer, stats);
  writer.Finish();
  return nlohmann::ordered_json::parse(text);
}

nlohmann::ordered_json LatencyJson(const Histogram& histogram) {
  if (histogram.empty()) return nullptr;
  KeyStats stats;
  stats.count = histogram.total_count();
  stats.min_micros = histogram.min();
  stats.max_micros = histogram.max();
  stats.sum_micros = static_cast<int64_t>(histogram.Mean() * static_cast<double>(stats.count));
  stats.histogram = histogram;
  return LatencyJson(stats);
}

nlohmann::ordered_json OutcomeJson(const KeyStats& stats) {
  std::string text;
  JsonWriter writer(&text, /*pretty=*/false);
  writer.BeginObject();
  WriteOutcome(writer, stats);
  writer.EndObject();
  writer.Finish();
  return nlohmann::ordered_json::parse(text);
}

nlohmann::ordered_json ThresholdsJson(const std::vector<ThresholdResult>& results) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const ThresholdResult& r : results) {
    nlohmann::ordered_json one;
    one["rule"] = r.text;
    one["passed"] = r.passed;
    one["message"] = r.message;
    j.push_back(std::move(one));
  }
  return j;
}

std::string DumpJson(const nlohmann::ordered_json& j, bool pretty) {
  return j.dump(pretty ? 2 : -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string FormatJsonReport(const std::vector<std::pair<std::string, KeyStats>>& rows,
                             uint64_t malformed_lines) {
  nlohmann::ordered_json head = SummaryHeader("stats");
  std::string out = DumpJson(head);
  out.pop_back();  // '}': the keys follow, then the totals
  out += ",\"keys\":[";
  KeyStats total;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [key, stats] = rows[i];
    if (total.CanMerge(stats)) total.Merge(stats);  // only hostile input cannot
    if (i > 0) out += ",\n";
    JsonWriter writer(&out, /*pretty=*/false);
    writer.BeginObject();
    writer.Key("key");
    writer.String(key);
    WriteOutcome(writer, stats);
    writer.Key("sum_us");
    writer.Int(stats.sum_micros);
    writer.Key("histogram");
    writer.String(stats.histogram.EncodeBase64());
    writer.EndObject();
  }
  out += "],\n";
  nlohmann::ordered_json tail = OutcomeJson(total);
  tail["sum_us"] = total.sum_micros;
  tail["histogram"] = total.histogram.EncodeBase64();
  tail["thresholds"] = nlohmann::ordered_json::array();
  tail["malformed_lines"] = malformed_lines;
  std::string rest = DumpJson(tail);
  out += rest.substr(1);  // without its '{'
  out += "\n";
  return out;
}

}  // namespace hammer::stats
