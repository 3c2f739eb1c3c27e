#include "hammer/stats/report/tsv.h"

#include <algorithm>
#include <charconv>

#include "hammer/stats/record.h"

namespace hammer::stats {
namespace {

void AppendUnsigned(std::string& out, uint64_t n) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof(buf), n).ptr);
}

}  // namespace

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
