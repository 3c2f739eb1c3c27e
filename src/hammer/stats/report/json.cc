#include "hammer/stats/report/json.h"

#include <algorithm>

#include "hammer/base/failure.h"
#include "hammer/stats/report/tsv.h"

namespace hammer::stats {

nlohmann::ordered_json SummaryHeader(std::string_view command) {
  nlohmann::ordered_json j;
  j["schema"] = std::string(kSummarySchema);
  j["command"] = std::string(command);
  return j;
}

nlohmann::ordered_json LatencyJson(const KeyStats& stats) {
  if (stats.count == 0) return nullptr;
  nlohmann::ordered_json j;
  j["min_us"] = stats.min_micros;
  j["mean_us"] = stats.MeanMicros();
  static constexpr const char* kNames[] = {"p50_us", "p90_us", "p99_us", "p99_9_us"};
  static_assert(std::size(kNames) == kReportedPercentiles.size());
  for (size_t i = 0; i < kReportedPercentiles.size(); ++i) {
    // Held within the exact [min, max], as in the table and the HTML report: a histogram
    // bucket's highest equivalent value may lie above the largest value recorded.
    j[kNames[i]] = std::clamp(stats.histogram.ValueAtPercentile(kReportedPercentiles[i]),
                              stats.min_micros, stats.max_micros);
  }
  j["max_us"] = stats.max_micros;
  return j;
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
  nlohmann::ordered_json j;
  j["requests"] = stats.count + stats.errors;
  j["succeeded"] = stats.count;
  j["failed"] = stats.errors;
  nlohmann::ordered_json failures = nlohmann::ordered_json::object();
  uint64_t typed = 0;
  for (size_t i = 0; i < kFailureCount; ++i) {
    if (stats.failures.by_type[i] == 0) continue;
    failures[std::string(kFailureNames[i])] = stats.failures.by_type[i];
    typed += stats.failures.by_type[i];
  }
  // Seed records say that a request failed, not why.
  if (stats.errors > typed) failures["untyped"] = stats.errors - typed;
  j["failures"] = std::move(failures);
  j["latency"] = LatencyJson(stats);
  return j;
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
    nlohmann::ordered_json j;
    j["key"] = key;
    j.update(OutcomeJson(stats));
    j["sum_us"] = stats.sum_micros;
    j["histogram"] = stats.histogram.EncodeBase64();
    if (i > 0) out += ",\n";
    out += DumpJson(j);
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
