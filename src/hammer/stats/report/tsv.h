// The `hammer stats --reducer` output: one line per key, TAB-separated. The first seven columns
// are the seed reducer's, in its order, so its users' scripts and its `--csv` step keep working;
// hammer's columns follow:
//
//   key sum average max min errors count p50 p90 p99 p99.9 histogram
//
// sum, average, max, min and the percentiles are seconds with six decimals. average is
// sum/count rounded half up to the microsecond; max and min are exact (the seed never set max
// and set min to the last value); the percentiles come from the histogram (HdrHistogram's
// getValueAtPercentile: the highest value of the bucket, within 0.1%), held within [min, max]
// as in every other report (KeyStats::Percentile). When count is 0 the
// seed prints nothing for average, max and min; so does hammer, and for the percentiles too.
// histogram is the successes' HdrHistogram V2, base64 (readable by HdrHistogram's tools).
//
// A line carries its key's figures exactly but for the failures' types (sum and min/max to the
// µs, the counts, the histogram), so `hammer stats` reads reducer output back as it reads
// partials (ReducerLineAsPartial): a job's part files merge into one report and one verdict.
// The seed's seven-column lines carry no histogram and cannot be read back.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/base/status.h"
#include "hammer/stats/key_stats.h"

namespace hammer::stats {

inline constexpr std::array<std::string_view, 12> kReducerColumns = {
    "key",   "sum", "average", "max", "min",   "errors",
    "count", "p50", "p90",     "p99", "p99.9", "histogram",
};
inline constexpr size_t kSeedReducerColumnCount = 7;
inline constexpr std::array<double, 4> kReportedPercentiles = {50.0, 90.0, 99.0, 99.9};

// The latency percentiles a report shows (kReportedPercentiles: p50, p90, p99, p99.9) of
// `stats`' successes, held within the exact [min, max] as KeyStats::Percentile holds one; in one
// pass over the histogram.
std::array<int64_t, kReportedPercentiles.size()> ReportedPercentileValues(const KeyStats& stats);

// Appends the line for `key`, '\n' included.
void AppendReducerLine(std::string& out, std::string_view key, const KeyStats& stats);

// Whether `line` (without '\n') has the twelve columns above: a reducer line, not a record.
bool IsReducerLine(std::string_view line);
// The partial record (record.h, "KEY\t#hp1 ...", without '\n') carrying the figures of the
// reducer line `line`, for a Reducer to merge and check as any partial. Errors name the column
// that is not what AppendReducerLine writes; the partial reader checks the figures' consistency.
Result<std::string> ReducerLineAsPartial(std::string_view line);

// sum/count rounded half up to the µs; 0 when count is 0.
int64_t RoundedMeanMicros(const KeyStats& stats);

}  // namespace hammer::stats
