#include "hammer/dark/canary_verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "hammer/base/clock.h"
#include "hammer/base/duration.h"
#include "hammer/dark/canary_evidence.h"
#include "hammer/stats/significance.h"

namespace hammer::dark {
namespace {

using stats::Threshold;
using stats::ThresholdMetric;

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

std::string PercentText(double percent) {
  return Printf("%.3g", percent) + "%";
}

std::string MicrosText(double micros) {
  return FormatDuration(static_cast<Nanos>(std::llround(micros * kMicrosecond)));
}

std::string PText(double p) {
  return Printf(p < 1e-4 ? "%.2g" : "%.4f", p);
}

std::string Count(uint64_t n) {
  return std::to_string(n);
}

// The histogram's buckets as ties at the bucket's middle value, for the rank test.
std::vector<stats::WeightedValue> Buckets(const stats::Histogram& histogram) {
  std::vector<stats::WeightedValue> buckets;
  histogram.ForEachBucket([&](int64_t lowest, int64_t highest, uint64_t count) {
    buckets.push_back(stats::WeightedValue{lowest + (highest - lowest) / 2, count});
  });
  return buckets;
}

// A percentile in µs, capped by the exact min and max as hammer load --threshold does.
double QuantileMicros(const stats::Histogram& histogram, double percentile) {
  int64_t micros = histogram.ValueAtPercentile(percentile);
  return static_cast<double>(std::clamp(micros, histogram.min(), histogram.max()));
}

double Ratio(double dark, double primary) {
  return dark / std::max(primary, 1.0);  // a 0 µs bucket would divide by zero
}

// latency_increase judges persistence only over at least this many intervals: a stall of a
// few seconds must not be able to cover most of them.
constexpr uint64_t kMinLatencyIntervals = 10;
// diff_rate's message names the fields that differ most often, this many at most.
constexpr size_t kFieldsNamed = 3;

class RuleJudge {
 public:
  RuleJudge(const Threshold& rule, const CanaryEvidence& evidence, double alpha)
      : rule_(rule), e_(evidence), alpha_(alpha) {
    v_.rule = rule.text;
    v_.metric = stats::ThresholdMetricName(rule);
    v_.limit_text = rule.limit_text;
  }

  RuleVerdict Judge() {
    switch (rule_.metric) {
      case ThresholdMetric::kSamples:
        Samples();
        break;
      case ThresholdMetric::kDiffRate:
        DiffRate();
        break;
      case ThresholdMetric::kErrorIncrease:
        ErrorIncrease();
        break;
      case ThresholdMetric::kLatencyIncrease:
        LatencyIncrease();
        break;
      case ThresholdMetric::kPercentileRatio:
        PercentileRatio();
        break;
      case ThresholdMetric::kErrorRate:
      case ThresholdMetric::kErrorCount:
        DarkErrors();
        break;
      case ThresholdMetric::kPercentile:
      case ThresholdMetric::kMax:
      case ThresholdMetric::kMean:
        DarkLatency();
        break;
      case ThresholdMetric::kRps:  // refused by the parser
        v_.message = "rps is not a canary metric";
        break;
    }
    return std::move(v_);
  }

 private:
  // "<metric> = <value><detail>, limit <op> <limit>[ (over by ...)]", and the state.
  void Compare(double value, std::string value_text, const std::string& detail,
               VerdictState failed) {
    v_.value = value;
    v_.value_text = std::move(value_text);
    bool holds = stats::ThresholdHolds(rule_, value);
    v_.state = holds ? VerdictState::kPass : failed;
    v_.message = v_.metric + " = " + v_.value_text + detail + ", limit " +
                 std::string(stats::ThresholdOpText(rule_.op)) + " " + rule_.limit_text;
    if (!holds) v_.message += stats::ThresholdDistance(rule_, value);
  }

  void Insufficient(std::string why) {
    v_.state = VerdictState::kInsufficient;
    v_.message = v_.metric + ": " + std::move(why);
  }

  void Samples() {
    v_.primary_samples = v_.dark_samples = e_.pairs;
    Compare(static_cast<double>(e_.pairs), Count(e_.pairs), " answered on both sides",
            VerdictState::kInsufficient);
  }

  void DiffRate() {
    v_.primary_samples = v_.dark_samples = e_.compared;
    if (e_.compared == 0) return Insufficient("no responses compared yet");
    double rate = 100.0 * static_cast<double>(e_.differing) / static_cast<double>(e_.compared);
    std::string detail =
        " (" + Count(e_.differing) + " of " + Count(e_.compared) + " compared responses differ";
    // The fields by how often they differ: the first is where to look.
    for (size_t i = 0; i < e_.differing_fields.size() && i < kFieldsNamed; ++i) {
      const CountedField& field = e_.differing_fields[i];
      detail += (i == 0 ? " at " : ", ") + field.name + " (" + Count(field.requests) + ")";
    }
    if (e_.differing_fields.size() > kFieldsNamed) {
      detail += " and " + Count(e_.differing_fields.size() - kFieldsNamed) + " more";
    }
    detail += "; noisy fields cancelled: " + Count(e_.noisy_fields) + ")";
    Compare(rate, PercentText(rate), detail, VerdictState::kFail);
    if (v_.state == VerdictState::kFail) v_.message += NoiseHint();
    for (const CountedField& field : e_.differing_fields)
      v_.fields.push_back(field.name);
    v_.figures = {{"compared", static_cast<double>(e_.compared)},
                  {"differing", static_cast<double>(e_.differing)},
                  {"noisy_fields", static_cast<double>(e_.noisy_fields)}};
  }

  // A field that differs in nearly every compared response, with no secondary to measure noise,
  // is more likely a timestamp or an id than a regression: say so, and how to cancel it.
  std::string NoiseHint() const {
    if (e_.differing_fields.empty() || e_.with_secondary > 0) return "";
    const CountedField& top = e_.differing_fields.front();
    if (top.requests * 10 < e_.compared * 9) return "";
    return "; " + top.name + " differs in " + Count(top.requests) + " of " + Count(e_.compared) +
           " compared responses, which looks like noise (a timestamp, an id): start with "
           "--compare-secondary URL (a second regular instance) to cancel noise, or "
           "--compare-ignore " +
           top.path + " to leave the field out";
  }

  void ErrorIncrease() {
    v_.primary_samples = v_.dark_samples = e_.pairs;
    if (e_.pairs == 0) return Insufficient("no requests answered on both sides yet");
    double n = static_cast<double>(e_.pairs);
    double dark = 100.0 * static_cast<double>(e_.dark_failures) / n;
    double primary = 100.0 * static_cast<double>(e_.primary_failures) / n;
    double increase = dark - primary;
    double p = stats::FisherExactGreater(e_.dark_failures, e_.pairs, e_.primary_failures, e_.pairs);
    v_.p_value = p;
    v_.alpha = alpha_;
    std::string detail = " percentage points (dark " + PercentText(dark) + ": " +
                         Count(e_.dark_failures) + " of " + Count(e_.pairs) + " failed, primary " +
                         PercentText(primary) + ": " + Count(e_.primary_failures) +
                         "; Fisher's exact p = " + PText(p) + ")";
    Compare(increase, Printf("%+.3g", increase), detail, VerdictState::kFail);
    if (v_.state == VerdictState::kFail && p >= alpha_) {
      v_.state = VerdictState::kPass;
      v_.message += ", not significant at alpha " + Printf("%.3g", alpha_);
    }
    v_.figures = {{"dark_failures", static_cast<double>(e_.dark_failures)},
                  {"primary_failures", static_cast<double>(e_.primary_failures)},
                  {"dark_failure_percent", dark},
                  {"primary_failure_percent", primary}};
  }

  void LatencyIncrease() {
    const stats::Histogram& primary = e_.primary_latency_us;
    const stats::Histogram& dark = e_.dark_latency_us;
    v_.primary_samples = primary.total_count();
    v_.dark_samples = dark.total_count();
    if (primary.empty() || dark.empty()) {
      return Insufficient("no successful answers on " +
                          std::string(primary.empty() ? "the primary" : "the dark") + " side yet");
    }
    double p50_primary = QuantileMicros(primary, 50), p50_dark = QuantileMicros(dark, 50);
    double p99_primary = QuantileMicros(primary, 99), p99_dark = QuantileMicros(dark, 99);
    double margin = rule_.limit_percent / 100 * p50_primary + rule_.limit / kMicrosecond;
    std::vector<stats::WeightedValue> dark_buckets = Buckets(dark);
    std::vector<stats::WeightedValue> primary_buckets = Buckets(primary);
    stats::MannWhitneyResult test = stats::MannWhitneyGreater(
        dark_buckets, primary_buckets, static_cast<int64_t>(std::llround(margin)));
    double shift = stats::HodgesLehmannShift(dark_buckets, primary_buckets);
    // Persistence: in how many intervals were most of the requests slower on the dark side than
    // on the primary by more than the margin (rounded down to a step of the intervals' ladder)?
    size_t step = stats::PairedIntervals::ThresholdAtMost(margin);
    double step_micros = static_cast<double>(stats::PairedIntervals::kThresholdsMicros[step]);
    uint64_t intervals = 0, slower_intervals = 0;
    for (const stats::PairedIntervals::Interval& i : e_.latency_intervals.intervals()) {
      ++intervals;
      slower_intervals += 2 * i.slower[step] > i.pairs ? 1 : 0;
    }
    bool significant = test.p_value < alpha_;
    bool persistent = 2 * slower_intervals > intervals;
    v_.value = shift * kMicrosecond;
    v_.value_text = (shift < 0 ? "-" : "") + MicrosText(std::fabs(shift));
    v_.p_value = test.p_value;
    v_.alpha = alpha_;
    v_.state = !significant                       ? VerdictState::kPass
               : intervals < kMinLatencyIntervals ? VerdictState::kInsufficient
               : persistent                       ? VerdictState::kFail
                                                  : VerdictState::kPass;
    std::string seconds = FormatDuration(e_.latency_intervals.interval());
    v_.message = "latency_increase = " + v_.value_text +
                 " (Hodges-Lehmann shift of dark over primary; p50 " + MicrosText(p50_dark) +
                 " vs " + MicrosText(p50_primary) + ", p99 " + MicrosText(p99_dark) + " vs " +
                 MicrosText(p99_primary) + "), allowed " + MicrosText(margin) + " (" +
                 rule_.limit_text + "); Mann-Whitney U p = " + PText(test.p_value) +
                 (significant ? " < " : " >= ") + "alpha " + Printf("%.3g", alpha_) +
                 "; most requests slower by more than " + MicrosText(step_micros) + " in " +
                 Count(slower_intervals) + " of " + Count(intervals) + " intervals of " + seconds;
    if (v_.state == VerdictState::kFail) {
      v_.message += ": slower by more than allowed, persistently";
    } else if (v_.state == VerdictState::kInsufficient) {
      v_.message += ": slower, but fewer than " + Count(kMinLatencyIntervals) +
                    " intervals cannot tell a regression from a passing stall";
    } else if (significant) {
      v_.message += ": slower in a passing spell, not persistently";
    }
    v_.figures = {
        {"hodges_lehmann_us", shift},
        {"margin_us", margin},
        {"mann_whitney_u", test.u},
        {"z", test.z},
        {"mann_whitney_p", test.p_value},
        {"intervals", static_cast<double>(intervals)},
        {"intervals_slower", static_cast<double>(slower_intervals)},
        {"interval_threshold_us", step_micros},
        {"interval_seconds", static_cast<double>(e_.latency_intervals.interval()) / kSecond},
        {"p50_primary_us", p50_primary},
        {"p50_dark_us", p50_dark},
        {"p50_ratio", Ratio(p50_dark, p50_primary)},
        {"p99_primary_us", p99_primary},
        {"p99_dark_us", p99_dark},
        {"p99_ratio", Ratio(p99_dark, p99_primary)}};
  }

  void PercentileRatio() {
    const stats::Histogram& primary = e_.primary_latency_us;
    const stats::Histogram& dark = e_.dark_latency_us;
    v_.primary_samples = primary.total_count();
    v_.dark_samples = dark.total_count();
    if (primary.empty() || dark.empty()) return Insufficient("no successful answers yet");
    double q_primary = QuantileMicros(primary, rule_.percentile);
    double q_dark = QuantileMicros(dark, rule_.percentile);
    double ratio = Ratio(q_dark, q_primary);
    std::string name = "p" + Printf("%.10g", rule_.percentile);
    Compare(
        ratio, Printf("%.3g", ratio),
        " (dark " + name + " " + MicrosText(q_dark) + " / primary " + MicrosText(q_primary) + ")",
        VerdictState::kFail);
    v_.figures = {{name + "_primary_us", q_primary}, {name + "_dark_us", q_dark}};
  }

  void DarkErrors() {
    v_.dark_samples = e_.pairs;
    if (e_.pairs == 0) return Insufficient("no requests answered on both sides yet");
    if (rule_.metric == ThresholdMetric::kErrorCount) {
      Compare(static_cast<double>(e_.dark_failures), Count(e_.dark_failures), " dark failures",
              VerdictState::kFail);
      return;
    }
    double rate = 100.0 * static_cast<double>(e_.dark_failures) / static_cast<double>(e_.pairs);
    Compare(rate, PercentText(rate),
            " (" + Count(e_.dark_failures) + " of " + Count(e_.pairs) + " dark answers failed)",
            VerdictState::kFail);
  }

  void DarkLatency() {
    const stats::Histogram& dark = e_.dark_latency_us;
    v_.dark_samples = dark.total_count();
    if (dark.empty()) return Insufficient("no successful dark answers yet");
    double micros = rule_.metric == ThresholdMetric::kMax ? static_cast<double>(dark.max())
                    : rule_.metric == ThresholdMetric::kMean
                        ? dark.Mean()
                        : QuantileMicros(dark, rule_.percentile);
    Compare(micros * kMicrosecond, MicrosText(micros), " (dark side)", VerdictState::kFail);
  }

  const Threshold& rule_;
  const CanaryEvidence& e_;
  double alpha_;
  RuleVerdict v_;
};

bool HasSamplesRule(const std::vector<const Threshold*>& rules) {
  return std::any_of(rules.begin(), rules.end(),
                     [](const Threshold* r) { return r->metric == ThresholdMetric::kSamples; });
}

// Whether the scope has enough samples to be judged at all.
bool Enough(const std::vector<const Threshold*>& rules, uint64_t pairs) {
  if (!HasSamplesRule(rules)) return pairs > 0;
  return std::all_of(rules.begin(), rules.end(), [&](const Threshold* r) {
    return r->metric != ThresholdMetric::kSamples ||
           stats::ThresholdHolds(*r, static_cast<double>(pairs));
  });
}

ScopeVerdict JudgeScope(std::string endpoint, const std::vector<const Threshold*>& rules,
                        const CanaryEvidence& evidence, double alpha) {
  ScopeVerdict scope;
  scope.endpoint = std::move(endpoint);
  scope.samples = evidence.pairs;
  bool enough = Enough(rules, evidence.pairs);
  bool failed = false, lacking = !enough;
  for (const Threshold* rule : rules) {
    RuleVerdict verdict = RuleJudge(*rule, evidence, alpha).Judge();
    if (!enough) verdict.state = VerdictState::kInsufficient;
    failed |= verdict.state == VerdictState::kFail;
    lacking |= verdict.state == VerdictState::kInsufficient;
    scope.rules.push_back(std::move(verdict));
  }
  scope.state = failed    ? VerdictState::kFail
                : lacking ? VerdictState::kInsufficient
                          : VerdictState::kPass;
  return scope;
}

ClusterVerdict JudgeCluster(const ClusterReport& cluster, const VerdictRules& rules) {
  ClusterVerdict verdict;
  verdict.cluster = cluster.cluster;
  static const ComparisonReport kEmpty;
  const ComparisonReport& report = cluster.report != nullptr ? *cluster.report : kEmpty;
  double alpha = rules.alpha();
  verdict.overall = JudgeScope("", rules.For(""), CanaryEvidence::ForCluster(report, alpha), alpha);
  // Bonferroni: each endpoint group's tests at alpha / the number of groups judged.
  size_t judged = 0;
  for (const auto& [key, endpoint] : report.endpoints())
    judged += Enough(rules.For(key), endpoint.pairs) ? 1 : 0;
  double group_alpha = alpha / static_cast<double>(std::max<size_t>(judged, 1));
  bool failed = verdict.overall.state == VerdictState::kFail;
  for (const auto& [key, endpoint] : report.endpoints()) {
    verdict.endpoints.push_back(JudgeScope(
        key, rules.For(key), CanaryEvidence::ForEndpoint(report, endpoint, alpha), group_alpha));
    failed |= verdict.endpoints.back().state == VerdictState::kFail;
  }
  verdict.state = failed ? VerdictState::kFail : verdict.overall.state;
  return verdict;
}

}  // namespace

void CanaryVerdict::CutShort(std::string why) {
  if (state == VerdictState::kPass) state = VerdictState::kInsufficient;
  note = std::move(why);
}

std::string CanaryVerdict::Summary() const {
  if (clusters.empty()) return "verdict insufficient: no dark cluster to judge\n";
  std::string out;
  for (const ClusterVerdict& cluster : clusters) {
    out += cluster.cluster + ": " + std::string(VerdictStateName(cluster.state));
    std::vector<const ScopeVerdict*> scopes = {&cluster.overall};
    if (cluster.state == VerdictState::kFail) {
      for (const ScopeVerdict& scope : cluster.endpoints)
        scopes.push_back(&scope);
    }
    std::string why;
    for (const ScopeVerdict* scope : scopes) {
      for (const RuleVerdict* rule : DecidingRules(*scope, cluster.state)) {
        why += why.empty() ? " (" : "; ";
        why += (scope->endpoint.empty() ? "" : scope->endpoint + ": ") + rule->message;
      }
    }
    out += why.empty() ? "\n" : why + ")\n";
  }
  if (!note.empty()) out += note + "\n";
  return out;
}

std::vector<const RuleVerdict*> DecidingRules(const ScopeVerdict& scope, VerdictState state) {
  std::vector<const RuleVerdict*> rules;
  if (state == VerdictState::kPass) return rules;
  auto too_few = [](const RuleVerdict& r) {
    return r.metric == "samples" && r.state == VerdictState::kInsufficient;
  };
  bool samples_decide = state == VerdictState::kInsufficient &&
                        std::any_of(scope.rules.begin(), scope.rules.end(), too_few);
  for (const RuleVerdict& rule : scope.rules) {
    if (rule.state == state && (!samples_decide || too_few(rule))) rules.push_back(&rule);
  }
  return rules;
}

std::string_view VerdictStateName(VerdictState state) {
  switch (state) {
    case VerdictState::kPass:
      return "pass";
    case VerdictState::kFail:
      return "fail";
    case VerdictState::kInsufficient:
      return "insufficient";
  }
  return "insufficient";
}

CanaryVerdict JudgeCanary(std::span<const ClusterReport> clusters, const VerdictRules& rules) {
  CanaryVerdict verdict;
  verdict.alpha = rules.alpha();
  for (const Threshold& rule : rules.rules())
    verdict.rules.push_back(rule.text);
  bool failed = false, lacking = clusters.empty();
  for (const ClusterReport& cluster : clusters) {
    verdict.clusters.push_back(JudgeCluster(cluster, rules));
    failed |= verdict.clusters.back().state == VerdictState::kFail;
    lacking |= verdict.clusters.back().state == VerdictState::kInsufficient;
  }
  verdict.state = failed    ? VerdictState::kFail
                  : lacking ? VerdictState::kInsufficient
                            : VerdictState::kPass;
  return verdict;
}

}  // namespace hammer::dark
