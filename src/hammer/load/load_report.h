// The end-of-run summary of `hammer load` and `hammer demo` (stderr text and JSON).
// The per-key table is the stats module's, so `hammer load`, `hammer demo` and `hammer stats`
// print the same figures the same way.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/load/load_run.h"
#include "hammer/stats/threshold.h"

namespace hammer::load {

// The accounting line, failures with examples, latency percentiles; plus the per-key table
// when `with_table` (at most `max_rows` keys); last, the responses by HTTP status
// ("  status codes 200: 17, 503: 3").
std::string FormatLoadSummary(const LoadSummary& summary, bool with_table, size_t max_rows);

// The same summary as a JSON document of the schema hammer.summary.v1 (stats/report/json.h),
// with the --threshold results and the run's own fields (seconds, rps, the open-loop figures,
// status_codes: {"200": 17, "503": 3}, responses by HTTP status).
std::string LoadSummaryJson(const LoadSummary& summary, std::string_view command = "load",
                            const std::vector<stats::ThresholdResult>& thresholds = {});

// The self-contained HTML report of a run (the stats module's renderer); `metadata` lines are
// shown under the title (command, target, ...), the --threshold results above the figures.
std::string LoadSummaryHtml(const LoadSummary& summary, std::string title,
                            std::vector<std::pair<std::string, std::string>> metadata,
                            std::vector<stats::ThresholdResult> thresholds = {});

}  // namespace hammer::load
