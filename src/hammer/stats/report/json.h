// hammer's one JSON summary schema, "hammer.summary.v1" (docs/summary.schema.json): what
// `hammer load --summary-json`, `hammer stats --json` and `hammer bulk --summary-json` write.
// One vocabulary for all three:
//
//   {"schema": "hammer.summary.v1", "command": "load" | "stats" | "bulk" | "demo",
//    "requests": 10, "succeeded": 9, "failed": 1,          (requests = succeeded + failed)
//    "failures": {"timeout": 1},                          (by type; "untyped" for seed records)
//    "latency": {"min_us": 3, "mean_us": 13.67, "p50_us": 12, "p90_us": 40, "p99_us": 40,
//                "p99_9_us": 40, "max_us": 40},          (successes only; null when none)
//    "thresholds": [{"rule": "p99<250ms", "passed": true, "message": "..."}],
//    "keys": [{"key": "...", requests, succeeded, failed, failures, latency, ...}, ...],
//    ... the command's own fields}
//
// Times are integer microseconds (mean_us a double). Bytes that are not UTF-8 in a key are
// replaced with U+FFFD. Threads: reentrant.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/stats/histogram.h"
#include "hammer/stats/key_stats.h"
#include "hammer/stats/report/json_writer.h"
#include "hammer/stats/report/tsv.h"
#include "hammer/stats/threshold.h"

namespace hammer::stats {

inline constexpr std::string_view kSummarySchema = "hammer.summary.v1";

// {"schema": ..., "command": command}: the first fields of every summary.
nlohmann::ordered_json SummaryHeader(std::string_view command);
// The latency object of the successful requests of `stats`: null when there are none.
// Percentiles are held within the exact [min_us, max_us].
nlohmann::ordered_json LatencyJson(const KeyStats& stats);
// The same from a histogram alone (min, max and mean as the histogram has them).
nlohmann::ordered_json LatencyJson(const Histogram& histogram);
// requests, succeeded, failed, failures and latency of one key (or of every key merged).
nlohmann::ordered_json OutcomeJson(const KeyStats& stats);
// The same members written into an open object, and the latency value alone: what the two
// functions above return, without a tree (summaries write their key rows this way).
void WriteOutcome(JsonWriter& writer, const KeyStats& stats);
void WriteLatency(JsonWriter& writer, const KeyStats& stats);

nlohmann::ordered_json ThresholdsJson(const std::vector<ThresholdResult>& results);
// Serialises on one line (pretty = false) or indented by 2.
std::string DumpJson(const nlohmann::ordered_json& j, bool pretty = false);

// `hammer stats --json` and `--summary-json`: the schema's fields, each key also with "sum_us"
// and "histogram" (the compressed HdrHistogram, base64), the --threshold results, and
// "malformed_lines". Written key by key so that a large report never exists twice in memory as
// a JSON tree.
std::string FormatJsonReport(const std::vector<std::pair<std::string, KeyStats>>& rows,
                             uint64_t malformed_lines,
                             const std::vector<ThresholdResult>& thresholds = {});

}  // namespace hammer::stats
