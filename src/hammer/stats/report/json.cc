#include "hammer/stats/report/json.h"

#include <nlohmann/json.hpp>

#include "hammer/stats/report/tsv.h"

namespace hammer::stats {
namespace {

nlohmann::ordered_json KeyJson(const KeyStats& stats) {
  nlohmann::ordered_json j;
  bool any = stats.count > 0;
  j["count"] = stats.count;
  j["errors"] = stats.errors;
  j["sum_us"] = stats.sum_micros;
  j["mean_us"] = any ? nlohmann::ordered_json(stats.MeanMicros()) : nullptr;
  j["min_us"] = any ? nlohmann::ordered_json(stats.min_micros) : nullptr;
  j["max_us"] = any ? nlohmann::ordered_json(stats.max_micros) : nullptr;
  static constexpr const char* kNames[] = {"p50_us", "p90_us", "p99_us", "p99_9_us"};
  for (size_t i = 0; i < kReportedPercentiles.size(); ++i) {
    j[kNames[i]] =
        any ? nlohmann::ordered_json(stats.histogram.ValueAtPercentile(kReportedPercentiles[i]))
            : nullptr;
  }
  nlohmann::ordered_json failures = nlohmann::ordered_json::object();
  for (size_t i = 0; i < kFailureCount; ++i) {
    if (stats.failures.by_type[i] != 0)
      failures[std::string(kFailureNames[i])] = stats.failures.by_type[i];
  }
  j["failures"] = std::move(failures);
  j["histogram"] = stats.histogram.EncodeBase64();
  return j;
}

std::string Dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

std::string FormatJsonReport(const std::vector<std::pair<std::string, KeyStats>>& rows,
                             uint64_t malformed_lines) {
  // Written key by key so that a large report never exists twice in memory as a JSON tree.
  std::string out = "{\"keys\":[";
  KeyStats total;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [key, stats] = rows[i];
    if (total.CanMerge(stats)) total.Merge(stats);  // only hostile input cannot
    nlohmann::ordered_json j;
    j["key"] = key;
    j.update(KeyJson(stats));
    if (i > 0) out += ",\n";
    out += Dump(j);
  }
  out += "],\n\"total\":";
  out += Dump(KeyJson(total));
  out += ",\n\"malformed_lines\":";
  out += std::to_string(malformed_lines);
  out += "}\n";
  return out;
}

}  // namespace hammer::stats
