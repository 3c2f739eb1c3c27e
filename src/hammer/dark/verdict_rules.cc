#include "hammer/dark/verdict_rules.h"

#include <algorithm>
#include <cmath>

namespace hammer::dark {
namespace {

// errors<1% and errors<=10 judge the same thing.
bool SameMetric(const stats::Threshold& a, const stats::Threshold& b) {
  return stats::ThresholdMetricName(a) == stats::ThresholdMetricName(b);
}

std::vector<stats::Threshold> Defaults() {
  std::vector<stats::Threshold> rules;
  for (std::string_view text : kDefaultJudgeRules)
    rules.push_back(*stats::ParseThreshold(text, stats::ThresholdSubject::kCanary));
  return rules;
}

}  // namespace

VerdictRules::VerdictRules() : rules_(Defaults()) {}

Result<VerdictRules> VerdictRules::Make(std::span<const std::string> judge, bool use_defaults,
                                        double alpha) {
  if (!std::isfinite(alpha) || alpha <= 0 || alpha >= 1) {
    return Status::Error("--verdict-alpha: the significance level must be above 0 and below 1");
  }
  std::vector<stats::Threshold> given;
  for (const std::string& text : judge) {
    Result<stats::Threshold> rule = stats::ParseThreshold(text, stats::ThresholdSubject::kCanary);
    if (!rule.ok()) return Status::Error("--judge: " + rule.status().message());
    given.push_back(*rule);
  }
  VerdictRules rules;
  rules.alpha_ = alpha;
  rules.rules_.clear();
  if (use_defaults) {
    for (stats::Threshold& fallback : Defaults()) {
      bool replaced = std::any_of(given.begin(), given.end(), [&](const stats::Threshold& rule) {
        return rule.key.empty() && SameMetric(rule, fallback);
      });
      if (!replaced) rules.rules_.push_back(std::move(fallback));
    }
  }
  rules.rules_.insert(rules.rules_.end(), given.begin(), given.end());
  return rules;
}

std::vector<const stats::Threshold*> VerdictRules::For(std::string_view endpoint) const {
  std::vector<const stats::Threshold*> out;
  for (const stats::Threshold& rule : rules_) {
    if (!rule.key.empty()) {
      if (rule.key == endpoint) out.push_back(&rule);
      continue;
    }
    bool overridden =
        !endpoint.empty() && std::any_of(rules_.begin(), rules_.end(), [&](const auto& other) {
          return other.key == endpoint && SameMetric(other, rule);
        });
    if (!overridden) out.push_back(&rule);
  }
  return out;
}

}  // namespace hammer::dark
