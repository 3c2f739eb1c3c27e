// CanaryVerdict: `hammer dark`'s judgment of each dark cluster — pass, fail or insufficient —
// from its ComparisonReport and the VerdictRules, for the whole cluster and for each endpoint
// group, with every rule's statistic, limit, significance and sample counts.
//
// How each rule is judged in a scope (the cluster, or one endpoint group; see CanaryEvidence):
//   samples           requests answered (or failed) on both sides. Below the minimum the scope
//                     is insufficient, whatever the other rules say.
//   diff_rate         100 · compared requests differing after noise cancellation / compared.
//                     Fails when the rate breaks the limit. Insufficient with nothing compared.
//   error_increase    dark failure rate minus the primary's, in percentage points, over the
//                     same requests. Fails only when Fisher's exact test (one-sided: the dark
//                     side fails more) gives p < alpha AND the increase breaks the limit: a
//                     handful of errors on little traffic is not significant, and a negligible
//                     increase on huge traffic is within the margin.
//   latency_increase  the margin is REL% of the primary's median plus the duration. Fails when
//                     the one-sided Mann-Whitney U test of "dark latency − margin" against the
//                     primary latency gives p < alpha, i.e. the dark side is significantly
//                     slower by more than the margin (Kayenta's allowed increase), AND that held
//                     in most intervals (PairedIntervals, --verdict-interval): in more than half
//                     of them, most requests were slower on the dark side than on the primary by
//                     more than the margin (rounded down to the intervals' 1-2-5 ladder).
//                     Requests are not independent samples of latency: a process descheduled for
//                     a few hundred milliseconds slows every request of its stall, and on a
//                     shared host such a stall can cover most of a short run (the U test alone
//                     failed identical canaries that way); persistence over time tells it from
//                     a regression.
//                     Significant but over fewer than 10 intervals is insufficient; significant
//                     but in a minority of intervals passes (a passing spell). The U test runs
//                     exactly on the two latency histograms' buckets (each bucket a group of
//                     ties, corrected for): the histograms already hold every successful answer
//                     in bounded memory, and their 0.1% resolution is far finer than any margin,
//                     where a bounded reservoir would throw most samples away. Reported with it:
//                     the Hodges-Lehmann shift, p50 and p99 of both sides and their ratios.
//                     Insufficient until both sides have a successful answer.
//   pN_ratio          dark pN / primary pN from the histograms (each capped by its exact min and
//                     max, as --threshold does). No test: tail quantiles of two instances differ
//                     by chance, so this is not a default rule.
//   pN, max, mean, errors: the dark side's, as hammer load --threshold judges a run.
// A scope fails when a rule fails (and it has enough samples), is insufficient when its samples
// rule or any other rule lacks data, and passes otherwise. A cluster fails when its whole-
// cluster scope or any endpoint group fails; otherwise it takes its whole-cluster state (an
// endpoint group with too little traffic does not hold the cluster back). The verdict fails when
// a cluster fails, is insufficient when a cluster is (or there is none), and passes otherwise.
//
// Value types; JudgeCanary is a pure function (thread-safe on reports nobody writes meanwhile).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/dark/comparison_report.h"
#include "hammer/dark/verdict_rules.h"

namespace hammer::dark {

enum class VerdictState : uint8_t { kPass, kFail, kInsufficient };
std::string_view VerdictStateName(VerdictState state);  // "pass", "fail", "insufficient"

struct RuleVerdict {
  std::string rule;    // as written: "latency_increase<10%+1ms"
  std::string metric;  // "latency_increase"
  VerdictState state = VerdictState::kInsufficient;
  // The statistic compared with the limit, in the limit's unit: percent (diff_rate, errors),
  // percentage points (error_increase), nanoseconds (durations; latency_increase: the
  // Hodges-Lehmann shift), a ratio, a count. Absent without data.
  std::optional<double> value;
  std::string value_text;  // "5.1%", "5.2ms", "1.08"
  std::string limit_text;  // VALUE as written
  std::optional<double> p_value;
  double alpha = 0;  // the significance level applied (0: the rule has no test)
  uint64_t primary_samples = 0;
  uint64_t dark_samples = 0;
  std::string message;  // one line, e.g. "diff_rate = 5.1% (102 of 2000 compared) ..."
  std::vector<std::pair<std::string, double>> figures;  // rule-specific, e.g. {"margin_us", 1030}
  std::vector<std::string> fields;                      // diff_rate: the fields that count
};

struct ScopeVerdict {
  std::string endpoint;  // empty: the whole cluster
  VerdictState state = VerdictState::kInsufficient;
  uint64_t samples = 0;  // requests answered on both sides
  std::vector<RuleVerdict> rules;
};

struct ClusterVerdict {
  std::string cluster;
  VerdictState state = VerdictState::kInsufficient;
  ScopeVerdict overall;
  std::vector<ScopeVerdict> endpoints;  // sorted by endpoint group
};

struct ClusterReport {
  std::string cluster;
  const ComparisonReport* report = nullptr;  // null: nothing compared yet
};

struct CanaryVerdict {
  VerdictState state = VerdictState::kInsufficient;
  double alpha = 0;
  std::vector<std::string> rules;  // every rule as written, defaults included
  std::vector<ClusterVerdict> clusters;
  std::string note;  // why the verdict is not what the rules alone say (CutShort)

  // The observation ended before it was meant to (a signal before --verdict-after): a pass
  // becomes insufficient, since the rules were not given the time asked for; a fail stays.
  void CutShort(std::string why);
  // One line per dark cluster for a terminal: "canary: fail (diff_rate = 5.1% ...)".
  std::string Summary() const;

  // {"verdict", "note" (if any), "alpha", "rules", "clusters": [{"cluster", "verdict", "deciding":
  // [{"scope", "rule", "message"}], "overall": {...scope}, "endpoints": [...]}]} where a scope is
  // {"endpoint" (absent overall), "verdict", "samples", "rules": [{"rule", "metric", "verdict",
  // "value", "value_text", "limit", "p_value", "alpha", "primary_samples", "dark_samples",
  // "message", figures..., "fields"}]}; durations in microseconds.
  std::string ToJson() const;
  nlohmann::ordered_json ToJsonValue() const;
  // One cluster's object of the above (for /hammer/dark/report).
  nlohmann::ordered_json ClusterJson(const ClusterVerdict& cluster) const;
  // Prometheus text: hammer_dark_verdict{cluster,state} (1 for the current state, 0 for the
  // others), the same per rule of the whole-cluster scope (hammer_dark_verdict_rule{cluster,
  // rule,state}), each rule's value (durations in seconds) and p-value, and how many endpoint
  // groups are in each state.
  std::string PrometheusText() const;
};

CanaryVerdict JudgeCanary(std::span<const ClusterReport> clusters, const VerdictRules& rules);

// The rules of `scope` that decided `state`: those that failed, or those that lacked data (only
// the samples rule when too few samples held every rule back). None for a pass.
std::vector<const RuleVerdict*> DecidingRules(const ScopeVerdict& scope, VerdictState state);

}  // namespace hammer::dark
