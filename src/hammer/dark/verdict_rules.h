// VerdictRules: the rules `hammer dark` judges a canary by, written as `hammer load --threshold`
// conditions (stats/threshold.h, ThresholdSubject::kCanary) and given with --judge RULE.
//
// Defaults (kDefaultJudgeRules), each replaced by a --judge rule on the same metric:
//   samples>=500               judge nothing before 500 requests were answered on both sides
//   diff_rate<1%               responses differing after noise cancellation
//   error_increase<0.1%        dark failure rate above the regular one (Fisher's exact test)
//   latency_increase<10%+1ms   dark slower than the regular side (Mann-Whitney U)
// Other rules are added (p99_ratio<2, p99<250ms of the dark side, ...). A rule without @KEY
// applies to the whole cluster and to each endpoint group; "METRIC OP VALUE@GROUP" applies to
// that endpoint group only, where it replaces the unkeyed rule on the same metric. Metrics are
// the same when their names are (errors<1% and errors<10 are one metric; p99 and p50 are two).
// With use_defaults false only the --judge rules apply (and, without a samples rule, one
// answered request is enough to judge).
//
// alpha is the significance level of the tests (error_increase, latency_increase, and whether a
// field's differences exceed its noise); an endpoint group's tests use alpha divided by the
// number of groups judged (Bonferroni), so many groups do not multiply false failures.
//
// Immutable after Make(); thread-safe to read.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/stats/threshold.h"

namespace hammer::dark {

inline constexpr std::string_view kDefaultJudgeRules[] = {
    "samples>=500",
    "diff_rate<1%",
    "error_increase<0.1%",
    "latency_increase<10%+1ms",
};
inline constexpr double kDefaultVerdictAlpha = 0.01;

class VerdictRules {
 public:
  // Errors name the rule ("--judge 'x<1': ...") or the level ("--verdict-alpha ...").
  static Result<VerdictRules> Make(std::span<const std::string> judge, bool use_defaults = true,
                                   double alpha = kDefaultVerdictAlpha);
  VerdictRules();  // the defaults, with kDefaultVerdictAlpha

  // The rules for the whole cluster (endpoint empty) or for one endpoint group, in the order
  // given: defaults first, then --judge rules.
  std::vector<const stats::Threshold*> For(std::string_view endpoint) const;
  const std::vector<stats::Threshold>& rules() const { return rules_; }
  double alpha() const { return alpha_; }

 private:
  std::vector<stats::Threshold> rules_;
  double alpha_ = kDefaultVerdictAlpha;
};

}  // namespace hammer::dark
