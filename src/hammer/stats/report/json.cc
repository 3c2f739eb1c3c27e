#include "hammer/stats/report/json.h"

#include <algorithm>
#include <array>

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
                             uint64_t malformed_lines,
                             const std::vector<ThresholdResult>& thresholds) {
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
  tail["thresholds"] = ThresholdsJson(thresholds);
  tail["malformed_lines"] = malformed_lines;
  std::string rest = DumpJson(tail);
  out += rest.substr(1);  // without its '{'
  out += "\n";
  return out;
}

}  // namespace hammer::stats
