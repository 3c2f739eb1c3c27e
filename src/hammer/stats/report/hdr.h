// `hammer stats --hdr`: HdrHistogram's percentile distribution text, the format its plotter
// (hdrhistogram.github.io/HdrHistogram/plotFiles.html) and users of wrk2/HdrHistogram read.
//
// FormatPercentileDistribution reproduces AbstractHistogram.outputPercentileDistribution of
// HdrHistogram Java 2.2.2 (plain-text form) character for character: the header
// "Value Percentile TotalCount 1/(1-Percentile)", one line per percentile tick (ticks_per_half
// ticks in each half of the remaining distance to 100%, as its PercentileIterator), values
// divided by `scaling` and printed with 3 decimals, then the "#[Mean = ..., StdDeviation = ...]",
// "#[Max = ..., Total count = ...]" and "#[Buckets = ..., SubBuckets = ...]" footer. Numbers
// are rounded half up from their shortest decimal form, as java.util.Formatter does.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hammer/stats/histogram.h"
#include "hammer/stats/key_stats.h"

namespace hammer::stats {

// hammer records µs; its --hdr output is in milliseconds.
inline constexpr double kHdrMillisecondScaling = 1000.0;

std::string FormatPercentileDistribution(const Histogram& histogram, int ticks_per_half = 5,
                                         double scaling = kHdrMillisecondScaling);

// One key: exactly FormatPercentileDistribution of its histogram. Several keys: for each, a
// "# <key>" line, its distribution and an empty line.
std::string FormatHdrReport(const std::vector<std::pair<std::string, KeyStats>>& rows);

// Appends `value` as java.util.Formatter's "%<width>.<decimals>f" (Locale.US) would.
void AppendJavaFixed(std::string& out, double value, int decimals, int width);

}  // namespace hammer::stats
