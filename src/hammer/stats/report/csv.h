// `hammer stats --csv`: the reducer's columns (report/tsv.h) as RFC 4180 CSV with a header
// row, for spreadsheets. Like the seed's CSVConverter it also converts lines that are already
// reducer output (hammer's 12 columns or the seed's 7, padded with empty fields), so
// `cat part-* | hammer stats --csv` works on a finished job's output.
//
// Fields are quoted only when they hold a comma, a double quote, CR or LF; quotes are doubled.
// Empty fields are written empty (Ruby's CSV writes "" for an empty string; both read back as
// empty). Rows end with "\n".
#pragma once

#include <string>
#include <string_view>

#include "hammer/stats/key_stats.h"

namespace hammer::stats {

void AppendCsvHeader(std::string& out);
void AppendCsvRow(std::string& out, std::string_view key, const KeyStats& stats);

// True when `line` has the shape of reducer output (the seed's 7 or hammer's 12 TAB-separated
// fields); records have 2 to 4 (--timestamps, --failure-types), so every record form goes to the
// reducer.
bool LooksLikeReducerLine(std::string_view line);

// Appends `line` (reducer output, without '\n') as a CSV row. False, appending nothing, when it
// has neither 12 nor 7 fields.
bool AppendCsvRowFromReducerLine(std::string& out, std::string_view line);

void AppendCsvField(std::string& out, std::string_view field);

}  // namespace hammer::stats
