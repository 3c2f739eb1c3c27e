#include "hammer/stats/threshold.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "hammer/base/duration.h"
#include "hammer/base/strings.h"

namespace hammer::stats {
namespace {

// A plain non-negative decimal number ("99", "99.9", "1000"); no sign, exponent or hex.
bool ParseNumber(std::string_view text, double* value) {
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos) {
    return false;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(*value);
}

bool IsLatency(ThresholdMetric metric) {
  return metric == ThresholdMetric::kPercentile || metric == ThresholdMetric::kMax ||
         metric == ThresholdMetric::kMean;
}

bool IsCanaryOnly(ThresholdMetric metric) {
  return metric >= ThresholdMetric::kDiffRate;
}

bool IsUpperBound(ThresholdOp op) {
  return op == ThresholdOp::kLess || op == ThresholdOp::kLessEqual;
}

// "N%" with 0 <= N <= 100.
bool ParsePercent(std::string_view text, double* value) {
  return !text.empty() && text.back() == '%' &&
         ParseNumber(text.substr(0, text.size() - 1), value) && *value <= 100;
}

// latency_increase: "10%", "1ms" or both joined by '+' ("10%+1ms", "1ms+10%").
Status ParseIncrease(std::string_view value, Threshold* t) {
  bool percent = false, duration = false, ok = true;
  std::string_view rest = value;
  while (ok) {
    size_t plus = rest.find('+');
    std::string_view part = TrimOws(rest.substr(0, plus));
    if (!part.empty() && part.back() == '%' && !percent) {
      ok = percent = ParsePercent(part, &t->limit_percent);
    } else if (!part.empty() && part.back() >= 'a' && part.back() <= 'z' && !duration) {
      Result<Nanos> limit = ParseDuration(part);
      ok = duration = limit.ok() && *limit >= 0;
      if (ok) t->limit = static_cast<double>(*limit);
    } else {
      ok = false;
    }
    if (plus == std::string_view::npos) break;
    rest.remove_prefix(plus + 1);
  }
  if (!ok) {
    return Status::Error("threshold " + QuoteInput(t->text) +
                         ": latency_increase takes a percentage of the regular median (10%), a "
                         "duration (1ms) or both (10%+1ms), not " +
                         QuoteInput(value));
  }
  return Status::Ok();
}

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

Status ParseLimit(std::string_view value, Threshold* t) {
  std::string bad = "threshold " + QuoteInput(t->text) + ": ";
  if (value.empty()) return Status::Error(bad + "missing value after the operator");
  std::string name = ThresholdMetricName(*t);
  if (IsCanaryOnly(t->metric) && (t->metric == ThresholdMetric::kSamples) == IsUpperBound(t->op)) {
    return Status::Error(bad + name +
                         (t->metric == ThresholdMetric::kSamples
                              ? " is a minimum: use > or >=, e.g. samples>=500"
                              : " is an upper bound: use < or <=, e.g. " + name + "<" +
                                    (t->metric == ThresholdMetric::kPercentileRatio ? "2" : "1%")));
  }
  if (t->metric == ThresholdMetric::kDiffRate || t->metric == ThresholdMetric::kErrorIncrease) {
    if (!ParsePercent(value, &t->limit)) {
      return Status::Error(bad + name + " takes a percentage from 0% to 100%, not " +
                           QuoteInput(value));
    }
  } else if (t->metric == ThresholdMetric::kLatencyIncrease) {
    if (Status ok = ParseIncrease(value, t); !ok.ok()) return ok;
  } else if (t->metric == ThresholdMetric::kPercentileRatio) {
    if (!ParseNumber(value, &t->limit) || t->limit <= 0) {
      return Status::Error(bad + name + " takes a ratio above 0 (1.5), not " + QuoteInput(value));
    }
  } else if (t->metric == ThresholdMetric::kSamples) {
    if (value.find('.') != std::string_view::npos || !ParseNumber(value, &t->limit)) {
      return Status::Error(bad + "samples takes a count (500), not " + QuoteInput(value));
    }
  } else if (IsLatency(t->metric)) {
    if (value.back() >= '0' && value.back() <= '9') {
      return Status::Error(bad + "give the latency a unit, e.g. " + std::string(value) + "ms");
    }
    Result<Nanos> limit = ParseDuration(value);
    if (!limit.ok()) return Status::Error(bad + limit.status().message());
    t->limit = static_cast<double>(*limit);
  } else if (t->metric == ThresholdMetric::kErrorCount) {
    if (value.back() == '%') {
      t->metric = ThresholdMetric::kErrorRate;
      if (!ParseNumber(value.substr(0, value.size() - 1), &t->limit) || t->limit > 100) {
        return Status::Error(bad + "error rate " + QuoteInput(value) +
                             " is not a percentage from 0% to 100%");
      }
    } else if (value.find('.') != std::string_view::npos || !ParseNumber(value, &t->limit)) {
      return Status::Error(bad + "errors takes a count (10) or a percentage (1%), not " +
                           QuoteInput(value));
    }
  } else if (!ParseNumber(value, &t->limit)) {
    return Status::Error(bad + "rps takes a number, not " + QuoteInput(value));
  }
  t->limit_text = std::string(value);
  return Status::Ok();
}

// "over by 62ms, 25%" / "under by 187.7, 19%": how far a failed value is from its limit.
std::string Distance(const Threshold& t, double actual) {
  double gap = std::fabs(actual - t.limit);
  if (gap == 0) return " (at the limit)";
  std::string text = actual > t.limit ? " (over by " : " (under by ";
  switch (t.metric) {
    case ThresholdMetric::kErrorRate:
    case ThresholdMetric::kDiffRate:
    case ThresholdMetric::kErrorIncrease:
      return text + Printf("%.4g", gap) + " percentage points)";
    case ThresholdMetric::kErrorCount:
    case ThresholdMetric::kSamples:
      text += Printf("%.0f", gap);
      break;
    case ThresholdMetric::kRps:
      text += Printf("%.1f", gap);
      break;
    case ThresholdMetric::kPercentileRatio:
      text += Printf("%.3g", gap);
      break;
    case ThresholdMetric::kPercentile:
    case ThresholdMetric::kMax:
    case ThresholdMetric::kMean:
    case ThresholdMetric::kLatencyIncrease:
      text += FormatDuration(static_cast<Nanos>(std::llround(gap)));
      break;
  }
  if (t.limit > 0) text += ", " + Printf("%.0f", gap * 100 / t.limit) + "%";
  return text + ")";
}

}  // namespace

Result<Threshold> ParseThreshold(std::string_view text, ThresholdSubject subject) {
  Threshold t;
  t.text = std::string(text);
  std::string bad = "threshold " + QuoteInput(text) + ": ";
  size_t op_at = text.find_first_of("<>");
  if (op_at == std::string_view::npos) {
    return Status::Error(bad + "expected METRIC OP VALUE, e.g. p99<250ms or errors<1%");
  }
  std::string_view metric = TrimOws(text.substr(0, op_at));
  bool or_equal = op_at + 1 < text.size() && text[op_at + 1] == '=';
  if (text[op_at] == '<') {
    t.op = or_equal ? ThresholdOp::kLessEqual : ThresholdOp::kLess;
  } else {
    t.op = or_equal ? ThresholdOp::kGreaterEqual : ThresholdOp::kGreater;
  }
  std::string_view rest = text.substr(op_at + (or_equal ? 2 : 1));
  size_t at = rest.find('@');
  std::string_view value = TrimOws(rest.substr(0, at));
  if (at != std::string_view::npos) {
    t.key = std::string(TrimOws(rest.substr(at + 1)));
    if (t.key.empty()) return Status::Error(bad + "empty key after '@'");
  }

  constexpr std::string_view kRatio = "_ratio";
  if (metric == "max") {
    t.metric = ThresholdMetric::kMax;
  } else if (metric == "mean") {
    t.metric = ThresholdMetric::kMean;
  } else if (metric == "errors") {
    t.metric = ThresholdMetric::kErrorCount;  // ParseLimit turns "N%" into kErrorRate
  } else if (metric == "rps") {
    t.metric = ThresholdMetric::kRps;
  } else if (metric == "diff_rate") {
    t.metric = ThresholdMetric::kDiffRate;
  } else if (metric == "error_increase") {
    t.metric = ThresholdMetric::kErrorIncrease;
  } else if (metric == "latency_increase") {
    t.metric = ThresholdMetric::kLatencyIncrease;
  } else if (metric == "samples") {
    t.metric = ThresholdMetric::kSamples;
  } else if (metric.size() > 1 && metric[0] == 'p') {
    bool ratio = metric.ends_with(kRatio);
    t.metric = ratio ? ThresholdMetric::kPercentileRatio : ThresholdMetric::kPercentile;
    std::string_view number = metric.substr(1, metric.size() - 1 - (ratio ? kRatio.size() : 0));
    if (!ParseNumber(number, &t.percentile) || t.percentile <= 0 || t.percentile > 100) {
      return Status::Error(bad + "percentile " + QuoteInput(metric) +
                           " must be p followed by a number above 0 and at most 100");
    }
  } else if (subject == ThresholdSubject::kCanary) {
    return Status::Error(bad + "unknown metric " + QuoteInput(metric) +
                         " (use diff_rate, error_increase, latency_increase, pN_ratio such as "
                         "p99_ratio, samples, or pN, max, mean, errors of the dark side)");
  } else {
    return Status::Error(bad + "unknown metric " + QuoteInput(metric) +
                         " (use pN such as p99, max, mean, errors or rps)");
  }
  if (subject != ThresholdSubject::kCanary && IsCanaryOnly(t.metric)) {
    return Status::Error(bad + QuoteInput(metric) +
                         " compares a canary with its baseline: it is a hammer dark --judge "
                         "metric (use pN, max, mean, errors or rps)");
  }
  if (subject == ThresholdSubject::kMerged && t.metric == ThresholdMetric::kRps) {
    return Status::Error(bad +
                         "rps needs a run time, which records and partials do not carry (judge "
                         "it in hammer load; use pN, max, mean or errors)");
  }
  if (subject == ThresholdSubject::kCanary && t.metric == ThresholdMetric::kRps) {
    return Status::Error(bad +
                         "rps is not a canary metric (the canary's traffic is a copy of the "
                         "regular side's; use samples>=N for how much must be seen)");
  }
  if (Status ok = ParseLimit(value, &t); !ok.ok()) return ok;
  return t;
}

std::string ThresholdMetricName(const Threshold& t) {
  switch (t.metric) {
    case ThresholdMetric::kPercentile:
      return "p" + Printf("%.10g", t.percentile);
    case ThresholdMetric::kMax:
      return "max";
    case ThresholdMetric::kMean:
      return "mean";
    case ThresholdMetric::kErrorRate:
    case ThresholdMetric::kErrorCount:
      return "errors";
    case ThresholdMetric::kRps:
      return "rps";
    case ThresholdMetric::kDiffRate:
      return "diff_rate";
    case ThresholdMetric::kErrorIncrease:
      return "error_increase";
    case ThresholdMetric::kLatencyIncrease:
      return "latency_increase";
    case ThresholdMetric::kPercentileRatio:
      return "p" + Printf("%.10g", t.percentile) + "_ratio";
    case ThresholdMetric::kSamples:
      return "samples";
  }
  return "";
}

std::string_view ThresholdOpText(ThresholdOp op) {
  switch (op) {
    case ThresholdOp::kLess:
      return "<";
    case ThresholdOp::kLessEqual:
      return "<=";
    case ThresholdOp::kGreater:
      return ">";
    case ThresholdOp::kGreaterEqual:
      return ">=";
  }
  return "<";
}

bool ThresholdHolds(const Threshold& t, double actual) {
  switch (t.op) {
    case ThresholdOp::kLess:
      return actual < t.limit;
    case ThresholdOp::kLessEqual:
      return actual <= t.limit;
    case ThresholdOp::kGreater:
      return actual > t.limit;
    case ThresholdOp::kGreaterEqual:
      return actual >= t.limit;
  }
  return false;
}

std::string ThresholdDistance(const Threshold& t, double actual) {
  return Distance(t, actual);
}

ThresholdResult EvaluateThreshold(const Threshold& t, const ThresholdInputs& inputs) {
  ThresholdResult result;
  result.text = t.text;
  const KeyStats* stats = &inputs.total;
  if (!t.key.empty()) {
    stats = nullptr;
    for (const auto& [key, key_stats] : inputs.keys) {
      if (key == t.key) stats = &key_stats;
    }
    if (stats == nullptr) {
      result.message = "no requests with key " + QuoteInput(t.key);
      return result;
    }
  }
  if (IsCanaryOnly(t.metric)) {
    result.message = ThresholdMetricName(t) + " is judged by hammer dark, not from a load summary";
    return result;
  }
  if (stats->total() == 0) {
    result.message = "no requests";
    return result;
  }
  if (IsLatency(t.metric) && stats->count == 0) {
    result.message = "no successful requests (" + std::to_string(stats->errors) + " failed)";
    return result;
  }

  double actual = 0;
  switch (t.metric) {
    case ThresholdMetric::kPercentile: {
      // The histogram reports the top of a value's bucket (up to 0.1% above it); the exact
      // min and max bound every percentile, so that "p99<=3ms" passes when no request took
      // longer than 3 ms.
      int64_t micros = stats->Percentile(t.percentile);
      actual = static_cast<double>(micros) * kMicrosecond;
      break;
    }
    case ThresholdMetric::kMax:
      actual = static_cast<double>(stats->max_micros) * kMicrosecond;
      break;
    case ThresholdMetric::kMean:
      actual = stats->MeanMicros() * kMicrosecond;
      break;
    case ThresholdMetric::kErrorRate:
      actual = static_cast<double>(stats->errors) * 100 / static_cast<double>(stats->total());
      break;
    case ThresholdMetric::kErrorCount:
      actual = static_cast<double>(stats->errors);
      break;
    case ThresholdMetric::kRps:
      actual = inputs.seconds > 0 ? static_cast<double>(stats->total()) / inputs.seconds : 0;
      break;
    case ThresholdMetric::kDiffRate:  // refused above
    case ThresholdMetric::kErrorIncrease:
    case ThresholdMetric::kLatencyIncrease:
    case ThresholdMetric::kPercentileRatio:
    case ThresholdMetric::kSamples:
      break;
  }

  std::string detail;
  switch (t.metric) {
    case ThresholdMetric::kErrorRate:
      result.actual = Printf("%.4g", actual) + "%";
      detail = " (" + std::to_string(stats->errors) + " of " + std::to_string(stats->total()) +
               " requests)";
      break;
    case ThresholdMetric::kErrorCount:
      result.actual = std::to_string(stats->errors);
      break;
    case ThresholdMetric::kRps:
      result.actual = Printf("%.1f", actual);
      break;
    default:
      result.actual = FormatDuration(static_cast<Nanos>(std::llround(actual)));
      break;
  }
  result.passed = ThresholdHolds(t, actual);
  result.message = ThresholdMetricName(t) + " = " + result.actual + detail + ", limit " +
                   std::string(ThresholdOpText(t.op)) + " " + t.limit_text;
  if (!result.passed) result.message += Distance(t, actual);
  return result;
}

std::vector<ThresholdResult> EvaluateThresholds(const std::vector<Threshold>& thresholds,
                                                const ThresholdInputs& inputs) {
  std::vector<ThresholdResult> results;
  results.reserve(thresholds.size());
  for (const Threshold& t : thresholds)
    results.push_back(EvaluateThreshold(t, inputs));
  return results;
}

bool AllPassed(const std::vector<ThresholdResult>& results) {
  for (const ThresholdResult& r : results) {
    if (!r.passed) return false;
  }
  return true;
}

size_t FailedCount(const std::vector<ThresholdResult>& results) {
  return static_cast<size_t>(std::count_if(results.begin(), results.end(),
                                           [](const ThresholdResult& r) { return !r.passed; }));
}

std::string FormatThresholdLine(const ThresholdResult& r) {
  return fmt::format("  threshold {:<24} {}  {}\n", r.text, r.passed ? "passed" : "FAILED",
                     r.message);
}

}  // namespace hammer::stats
