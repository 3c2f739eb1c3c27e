// `hammer stats --table` and the end-of-run summary of `hammer load`: per-key figures as an
// aligned, human-readable table in milliseconds.
//
//   key                 requests    ok  errors  min ms  p50 ms  p90 ms  p99 ms  max ms
//   http://127.0.0.1/a       903   900       3   0.101   1.203   2.511   9.727  12.001
//   … 2 more keys
//   TOTAL                   1005  1000       5   0.101   1.207   2.623   9.855  14.250
//
// requests = ok + errors; ok and errors are the reducer's count and errors (successes,
// failures), named for what they count. Rows are sorted by requests, largest first, then by
// key. At most max_rows
// keys are listed (0: all); the rest are summarised in one "… N more keys" line, and the TOTAL
// row (all keys merged, exactly) always closes the table. min and max are exact; percentiles
// come from the merged histograms, held within [min, max] (KeyStats::Percentile). Figures are "-"
// for a key without successes. Keys longer than 60 characters are shortened in the middle with "…";
// TAB/CR/LF in keys become spaces.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "hammer/stats/key_stats.h"

namespace hammer::stats {

std::string FormatKeyTable(const std::vector<std::pair<std::string, KeyStats>>& rows,
                           size_t max_rows);

}  // namespace hammer::stats
