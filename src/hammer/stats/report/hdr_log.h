// `hammer stats --hdr-log FILE`: a Timeline as an HdrHistogram interval log (the format of
// HdrHistogram's HistogramLogWriter, read by HistogramLogReader, HistogramLogProcessor,
// jHiccup's tools and the HdrHistogram plotters):
//
//   #[Logged with hammer 0.1.0]
//   #[Histogram log format version 1.3]
//   #[StartTime: 1764428700.000 (seconds since epoch), Sat Nov 29 15:05:00 UTC 2025]
//   #[BaseTime: 1764428700.000 (seconds since epoch)]
//   "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//   0.000,1.000,12.345,HISTFAAAA...
//
// One line per timeline bucket, from the first to the last (empty buckets included, with an
// empty histogram): the bucket's start in seconds relative to BaseTime (= StartTime = the first
// bucket's start), its length in seconds, its largest latency in milliseconds, and its latency
// histogram (µs) in the V2 compressed encoding, base64, deflated at the level HistogramLogWriter
// uses, so each line is what HistogramLogWriter.outputIntervalHistogram(start, end, histogram,
// 1000.0) writes for the same counts. Numbers use Java's "%.3f" (HALF_UP). The date after
// StartTime is Java's Date.toString() form, in UTC.
#pragma once

#include <string>

#include "hammer/stats/timeline.h"

namespace hammer::stats {

// The whole log; just the header lines when the timeline is empty.
std::string FormatHdrIntervalLog(const Timeline& timeline);

}  // namespace hammer::stats
