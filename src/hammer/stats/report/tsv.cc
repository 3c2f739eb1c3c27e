#include "hammer/stats/report/tsv.h"

#include <algorithm>
#include <charconv>

#include "hammer/stats/partial.h"
#include "hammer/stats/record.h"

namespace hammer::stats {
namespace {

void AppendUnsigned(std::string& out, uint64_t n) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof(buf), n).ptr);
}

bool ParseUnsigned(std::string_view text, uint64_t* n) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *n);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

bool IsReducerLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return static_cast<size_t>(std::count(line.begin(), line.end(), '\t')) + 1 ==
         kReducerColumns.size();
}

Result<std::string> ReducerLineAsPartial(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::array<std::string_view, kReducerColumns.size()> columns;
  size_t start = 0;
  for (size_t i = 0; i < columns.size(); ++i) {
    size_t tab = i + 1 < columns.size() ? line.find('\t', start) : line.size();
    if (tab == std::string_view::npos) return Status::Error("reducer line with too few columns");
    columns[i] = line.substr(start, tab - start);
    start = tab + 1;
  }
  if (start <= line.size()) return Status::Error("reducer line with too many columns");
  KeyStats stats;
  auto bad = [](std::string_view column) {
    return Status::Error("reducer line: bad " + std::string(column) + " column");
  };
  if (!ParseSeconds(columns[1], &stats.sum_micros)) return bad("sum");
  if (!ParseUnsigned(columns[5], &stats.errors)) return bad("errors");
  if (!ParseUnsigned(columns[6], &stats.count)) return bad("count");
  if (stats.count > 0) {
    if (!ParseSeconds(columns[3], &stats.max_micros)) return bad("max");
    if (!ParseSeconds(columns[4], &stats.min_micros)) return bad("min");
  }
  Result<Histogram> histogram = Histogram::DecodeBase64(columns[11]);
  if (!histogram.ok()) return bad("histogram");
  stats.histogram = std::move(*histogram);
  // The partial carries the same figures; its reader checks that they agree with each other.
  std::string partial;
  AppendPartialRecord(partial, columns[0], stats);
  partial.pop_back();  // '\n'
  return partial;
}

int64_t RoundedMeanMicros(const KeyStats& stats) {
  if (stats.count == 0) return 0;
  // sum >= 0 for every valid KeyStats; 128 bits keep 2 * remainder exact.
  __int128 sum = stats.sum_micros;
  __int128 count = stats.count;
  __int128 quotient = sum / count;
  if (2 * (sum % count) >= count) ++quotient;
  return static_cast<int64_t>(quotient);
}

std::array<int64_t, kReportedPercentiles.size()> ReportedPercentileValues(const KeyStats& stats) {
  std::array<int64_t, kReportedPercentiles.size()> values;
  if (stats.min_micros >= stats.max_micros) {
    values.fill(stats.min_micros);  // what KeyStats::Percentile gives, without a lookup
    return values;
  }
  stats.histogram.ValuesAtPercentiles(kReportedPercentiles, values);
  for (int64_t& value : values)
    value = std::clamp(value, stats.min_micros, stats.max_micros);
  return values;
}

void AppendReducerLine(std::string& out, std::string_view key, const KeyStats& stats) {
  AppendSanitizedKey(out, key);
  out.push_back('\t');
  AppendSeconds(out, stats.sum_micros);
  out.push_back('\t');
  bool any = stats.count > 0;
  if (any) AppendSeconds(out, RoundedMeanMicros(stats));
  out.push_back('\t');
  if (any) AppendSeconds(out, stats.max_micros);
  out.push_back('\t');
  if (any) AppendSeconds(out, stats.min_micros);
  out.push_back('\t');
  AppendUnsigned(out, stats.errors);
  out.push_back('\t');
  AppendUnsigned(out, stats.count);
  std::array<int64_t, kReportedPercentiles.size()> percentiles{};
  if (any) percentiles = ReportedPercentileValues(stats);
  for (int64_t value : percentiles) {
    out.push_back('\t');
    if (any) AppendSeconds(out, value);
  }
  out.push_back('\t');
  out.append(stats.histogram.EncodeBase64());
  out.push_back('\n');
}

}  // namespace hammer::stats
