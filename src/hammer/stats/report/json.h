// `hammer stats --json`: every key's figures as one JSON document, for programs.
//
//   {"keys": [{"key": "...", "count": 9, "errors": 1, "sum_us": 123, "mean_us": 13.67,
//              "min_us": 3, "max_us": 40, "p50_us": 12, "p90_us": 40, "p99_us": 40,
//              "p99_9_us": 40, "failures": {"timeout": 1}, "histogram": "HISTFAAA..."}, ...],
//    "total": {same fields without "key"},
//    "malformed_lines": 0}
//
// Times are integer microseconds (mean_us a double); mean, min, max and the percentiles are
// null when count is 0. Keys are in the given order; bytes that are not UTF-8 in a key are
// replaced with U+FFFD.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hammer/stats/key_stats.h"

namespace hammer::stats {

std::string FormatJsonReport(const std::vector<std::pair<std::string, KeyStats>>& rows,
                             uint64_t malformed_lines);

}  // namespace hammer::stats
