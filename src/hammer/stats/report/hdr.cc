#include "hammer/stats/report/hdr.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "hammer/stats/record.h"

// The percentile iteration follows HdrHistogram Java 2.2.2 PercentileIterator and
// AbstractHistogramIterator (org/HdrHistogram/): a tick is reported at the first non-empty
// bucket whose cumulative percentile reaches it; after the first report at the last non-empty
// bucket comes one final line at 100%.

namespace hammer::stats {
namespace {

void PadLeft(std::string& out, size_t start, int width) {
  size_t length = out.size() - start;
  if (length < static_cast<size_t>(width))
    out.insert(start, static_cast<size_t>(width) - length, ' ');
}

void AppendJavaInteger(std::string& out, uint64_t value, int width) {
  size_t start = out.size();
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof(buf), value).ptr);
  PadLeft(out, start, width);
}

int64_t JavaLong(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9.223372036854775807e18) return std::numeric_limits<int64_t>::max();
  if (d <= -9.223372036854775808e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

// PercentileIterator.incrementIterationLevel.
double NextPercentileLevel(double level, int ticks_per_half) {
  int64_t halvings = JavaLong(std::log(100.0 / (100.0 - level)) / std::log(2.0)) + 1;
  int64_t reporting_ticks = ticks_per_half * JavaLong(std::pow(2.0, static_cast<double>(halvings)));
  return level + 100.0 / static_cast<double>(reporting_ticks);
}

}  // namespace

void AppendJavaFixed(std::string& out, double value, int decimals, int width) {
  size_t start = out.size();
  if (std::isnan(value) || std::isinf(value)) {
    out.append(std::isnan(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity");
    PadLeft(out, start, width);
    return;
  }
  // Shortest decimal digits that read back as `value`, then HALF_UP rounding on those digits.
  char buf[400];
  auto result = std::to_chars(buf, buf + sizeof(buf), std::fabs(value), std::chars_format::fixed);
  std::string digits(buf, result.ptr);
  size_t dot = digits.find('.');
  std::string whole = digits.substr(0, dot);
  std::string fraction = dot == std::string::npos ? "" : digits.substr(dot + 1);
  bool round_up = fraction.size() > static_cast<size_t>(decimals) &&
                  fraction[static_cast<size_t>(decimals)] >= '5';
  fraction.resize(static_cast<size_t>(decimals), '0');
  std::string number = whole + fraction;
  if (round_up) {
    size_t i = number.size();
    while (i > 0 && number[i - 1] == '9')
      number[--i] = '0';
    if (i == 0) {
      number.insert(0, 1, '1');
    } else {
      ++number[i - 1];
    }
  }
  if (std::signbit(value)) out.push_back('-');
  size_t whole_digits = number.size() - static_cast<size_t>(decimals);
  out.append(number, 0, whole_digits);
  if (decimals > 0) {
    out.push_back('.');
    out.append(number, whole_digits, std::string::npos);
  }
  PadLeft(out, start, width);
}

std::string FormatPercentileDistribution(const Histogram& histogram, int ticks_per_half,
                                         double scaling) {
  std::string out = "       Value     Percentile TotalCount 1/(1-Percentile)\n\n";
  const uint64_t total = histogram.total_count();
  auto emit = [&](int64_t value, double level, uint64_t cumulative) {
    AppendJavaFixed(out, static_cast<double>(value) / scaling, 3, 12);
    out.push_back(' ');
    AppendJavaFixed(out, level / 100.0, 12, 2);
    out.push_back(' ');
    AppendJavaInteger(out, cumulative, 10);
    if (level != 100.0) {
      out.push_back(' ');
      AppendJavaFixed(out, 1 / (1.0 - (level / 100.0)), 2, 14);
    }
    out.push_back('\n');
  };
  double level = 0.0;
  uint64_t cumulative = 0;
  bool done = total == 0;
  histogram.ForEachBucket([&](int64_t, int64_t highest, uint64_t count) {
    if (done) return;
    cumulative += count;
    while ((100.0 * static_cast<double>(cumulative)) / static_cast<double>(total) >= level) {
      emit(highest, level, cumulative);
      level = NextPercentileLevel(level, ticks_per_half);
      if (cumulative >= total) {
        emit(highest, 100.0, cumulative);
        done = true;
        break;
      }
    }
  });

  out += "#[Mean    = ";
  AppendJavaFixed(out, histogram.Mean() / scaling, 3, 12);
  out += ", StdDeviation   = ";
  AppendJavaFixed(out, histogram.StdDev() / scaling, 3, 12);
  out += "]\n#[Max     = ";
  AppendJavaFixed(out, static_cast<double>(histogram.max()) / scaling, 3, 12);
  out += ", Total count    = ";
  AppendJavaInteger(out, total, 12);
  out += "]\n#[Buckets = ";
  AppendJavaInteger(out, Histogram::kBucketCount, 12);
  out += ", SubBuckets     = ";
  AppendJavaInteger(out, Histogram::kSubBucketCount, 12);
  out += "]\n";
  return out;
}

std::string FormatHdrReport(const std::vector<std::pair<std::string, KeyStats>>& rows) {
  if (rows.size() == 1) return FormatPercentileDistribution(rows[0].second.histogram);
  std::string out;
  for (const auto& [key, stats] : rows) {
    out += "# ";
    AppendSanitizedKey(out, key);
    out += '\n';
    out += FormatPercentileDistribution(stats.histogram);
    out += '\n';
  }
  return out;
}

}  // namespace hammer::stats
