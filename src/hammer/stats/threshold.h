// Thresholds: pass/fail conditions on statistics (`hammer load --threshold` and `hammer stats
// --threshold`, repeatable), checked against a run's summary so that CI can fail a build on a
// slow or failing service. They judge statistics only (a total, its keys and a run time), so any
// command that has KeyStats can use the same syntax: `hammer stats` judges the exact merge of
// many machines' records and partials, a fleet's one answer. `hammer dark --judge` writes its
// canary rules in this syntax too, with the canary metrics below; this file parses them,
// dark/verdict_rules.h evaluates them.
//
// Syntax:  METRIC OP VALUE [@KEY]        spaces around METRIC, OP and VALUE are allowed
//   METRIC  pN       latency percentile N, 0 < N <= 100: p50, p99, p99.9, p100
//           max      slowest successful request (exact)
//           mean     mean latency of successful requests
//           errors   failed requests: VALUE "N%" is a share of all requests, a bare integer is
//                    a count
//           rps      requests (successes and failures) per second of run time (hammer load
//                    only: records and partials carry no run time)
//   canary metrics (ThresholdSubject::kCanary, where pN, max, mean and errors are the dark side's):
//           diff_rate         compared responses that differ after noise cancellation: "N%"
//           error_increase    dark failure rate minus the regular side's, in percentage
//                             points: "N%"
//           latency_increase  how much slower the dark side may be: "N%" of the regular
//                             side's median, a duration, or both added ("10%+1ms")
//           pN_ratio          dark pN divided by the regular pN: a number ("1.5")
//           samples           requests both sides answered: a count; below it, no judgment
//   The canary metrics other than samples are upper bounds (OP < or <=); samples is a lower one
//   (> or >=).
//   OP      <  <=  >  >=
//   VALUE   latency metrics: a duration with its unit ("250ms", "1.5s", "800us"; a bare number
//           is refused, since ParseDuration would read "250" as 250 s); errors: "1%", "0.5%"
//           or "10"; rps: a number ("1000", "99.5")
//   @KEY    check one key of the summary instead of the whole run; everything after the
//           first '@' that follows OP is the key, e.g. "p99<100ms@http://127.0.0.1:8080/api"
//           (a key is the text records are grouped by: hammer load --key; for a canary, an
//           endpoint group such as "GET /json/{id}")
// Examples: "p99<250ms", "p99.9 < 1s", "errors<1%", "errors<=10", "rps>1000", "max<2s";
// canary: "diff_rate<1%", "error_increase<0.1%", "latency_increase<10%+1ms", "p99_ratio<2",
// "samples>=500", "diff_rate<5%@GET /json/{id}".
//
// ParseThreshold's errors quote the text and say what is wrong. Evaluation never fails: a
// threshold that cannot be checked (its key has no requests in the summary, the run or key
// has no requests, or a latency is asked of a key whose every request failed) does not pass,
// with a message saying why. Latency percentiles come from the KeyStats histogram
// (ValueAtPercentile, µs: the top of the value's bucket, at most 0.1% above it) capped by the
// exact min and max, so "p99<=3ms" passes when no request took more than 3 ms; max and mean
// are exact. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/stats/key_stats.h"

namespace hammer::stats {

enum class ThresholdMetric : uint8_t {
  kPercentile,
  kMax,
  kMean,
  kErrorRate,
  kErrorCount,
  kRps,
  // Canary metrics.
  kDiffRate,
  kErrorIncrease,
  kLatencyIncrease,
  kPercentileRatio,
  kSamples,
};
enum class ThresholdOp : uint8_t { kLess, kLessEqual, kGreater, kGreaterEqual };

// What is judged, which decides the metrics a threshold may name.
enum class ThresholdSubject : uint8_t {
  kLoadRun,  // hammer load --threshold: pN, max, mean, errors, rps
  kMerged,   // hammer stats --threshold: pN, max, mean, errors (no run time, so no rps)
  kCanary,   // hammer dark --judge: the canary metrics, and pN, max, mean, errors of the dark side
};

struct Threshold {
  std::string text;  // as given
  ThresholdMetric metric = ThresholdMetric::kPercentile;
  double percentile = 0;  // kPercentile and kPercentileRatio
  ThresholdOp op = ThresholdOp::kLess;
  // ns for latencies and latency_increase's duration; percent for kErrorRate, kDiffRate and
  // kErrorIncrease; a count (kErrorCount, kSamples); rps; a ratio (kPercentileRatio).
  double limit = 0;
  double limit_percent = 0;  // kLatencyIncrease: % of the regular side's median, added to limit
  std::string limit_text;    // VALUE as given, for messages
  std::string key;           // empty: the whole run
};

Result<Threshold> ParseThreshold(std::string_view text,
                                 ThresholdSubject subject = ThresholdSubject::kLoadRun);

// The metric as written: "p99", "errors", "diff_rate", "p99_ratio".
std::string ThresholdMetricName(const Threshold& threshold);
std::string_view ThresholdOpText(ThresholdOp op);
// Whether `actual` (in the unit of Threshold::limit) satisfies the threshold's operator.
bool ThresholdHolds(const Threshold& threshold, double actual);
// How far a failed `actual` is from the limit, for messages: " (over by 62ms, 25%)",
// " (over by 4.1 percentage points)", " (at the limit)".
std::string ThresholdDistance(const Threshold& threshold, double actual);

// What thresholds are checked against (a load run's: LoadSummary::threshold_inputs()).
struct ThresholdInputs {
  const KeyStats& total;
  double seconds;  // run time, for rps
  const std::vector<std::pair<std::string, KeyStats>>& keys;
};

struct ThresholdResult {
  std::string text;  // the threshold as given
  bool passed = false;
  std::string actual;   // measured value as printed: "312ms", "2.5%", "25", "812.3"; empty if none
  std::string message;  // "p99 = 312ms, limit < 250ms (over by 62ms, 25%)"
};

ThresholdResult EvaluateThreshold(const Threshold& threshold, const ThresholdInputs& inputs);
std::vector<ThresholdResult> EvaluateThresholds(const std::vector<Threshold>& thresholds,
                                                const ThresholdInputs& inputs);
bool AllPassed(const std::vector<ThresholdResult>& results);
size_t FailedCount(const std::vector<ThresholdResult>& results);
// The line `hammer load` and `hammer stats` print on stderr for a result:
// "  threshold p99<250ms                FAILED  p99 = 312ms, limit < 250ms (over by 62ms, 25%)\n".
std::string FormatThresholdLine(const ThresholdResult& result);

}  // namespace hammer::stats
