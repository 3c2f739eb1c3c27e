#include "hammer/stats/report/csv.h"

#include <algorithm>

#include "hammer/stats/report/tsv.h"

namespace hammer::stats {

void AppendCsvField(std::string& out, std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
    out.append(field);
    return;
  }
  out.push_back('"');
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

void AppendCsvHeader(std::string& out) {
  for (size_t i = 0; i < kReducerColumns.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendCsvField(out, kReducerColumns[i]);
  }
  out.push_back('\n');
}

bool LooksLikeReducerLine(std::string_view line) {
  // Records have 2 to 4 fields (key, seconds, and the optional time and failure type); reducer
  // lines have the seed's 7 or hammer's 12.
  const size_t fields = static_cast<size_t>(std::count(line.begin(), line.end(), '\t')) + 1;
  return fields == kReducerColumns.size() || fields == kSeedReducerColumnCount;
}

bool AppendCsvRowFromReducerLine(std::string& out, std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t fields = static_cast<size_t>(std::count(line.begin(), line.end(), '\t')) + 1;
  if (fields != kReducerColumns.size() && fields != kSeedReducerColumnCount) return false;
  size_t start = 0;
  for (size_t i = 0; i < kReducerColumns.size(); ++i) {
    if (i > 0) out.push_back(',');
    if (i >= fields) continue;
    size_t tab = std::min(line.find('\t', start), line.size());
    AppendCsvField(out, line.substr(start, tab - start));
    start = tab + 1;
  }
  out.push_back('\n');
  return true;
}

void AppendCsvRow(std::string& out, std::string_view key, const KeyStats& stats) {
  std::string line;
  AppendReducerLine(line, key, stats);
  line.pop_back();  // '\n'
  AppendCsvRowFromReducerLine(out, line);
}

}  // namespace hammer::stats
