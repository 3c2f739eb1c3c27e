// CanaryVerdict's JSON (GET /hammer/dark/verdict, --verdict-json) and Prometheus text.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "hammer/base/clock.h"
#include "hammer/dark/canary_verdict.h"
#include "hammer/dark/dark_metrics.h"

namespace hammer::dark {
namespace {

using Json = nlohmann::ordered_json;

bool IsDuration(const RuleVerdict& rule) {
  return rule.metric == "latency_increase" || rule.metric == "max" || rule.metric == "mean" ||
         (rule.metric.size() > 1 && rule.metric[0] == 'p' && !rule.metric.ends_with("_ratio"));
}

Json RuleJson(const RuleVerdict& rule) {
  Json j;
  j["rule"] = rule.rule;
  j["metric"] = rule.metric;
  j["verdict"] = VerdictStateName(rule.state);
  if (rule.value) {
    // Durations in microseconds, as everywhere in the report.
    j["value"] = IsDuration(rule) ? *rule.value / kMicrosecond : *rule.value;
    j["value_text"] = rule.value_text;
  }
  j["limit"] = rule.limit_text;
  if (rule.p_value) j["p_value"] = *rule.p_value;
  if (rule.alpha > 0) j["alpha"] = rule.alpha;
  j["primary_samples"] = rule.primary_samples;
  j["dark_samples"] = rule.dark_samples;
  j["message"] = rule.message;
  for (const auto& [name, value] : rule.figures)
    j[name] = value;
  if (!rule.fields.empty()) j["fields"] = rule.fields;
  return j;
}

Json ScopeJson(const ScopeVerdict& scope) {
  Json j;
  if (!scope.endpoint.empty()) j["endpoint"] = scope.endpoint;
  j["verdict"] = VerdictStateName(scope.state);
  j["samples"] = scope.samples;
  Json rules = Json::array();
  for (const RuleVerdict& rule : scope.rules)
    rules.push_back(RuleJson(rule));
  j["rules"] = std::move(rules);
  return j;
}

void AddDeciding(Json& deciding, const ScopeVerdict& scope, VerdictState state) {
  for (const RuleVerdict* rule : DecidingRules(scope, state)) {
    deciding.push_back({{"scope", scope.endpoint.empty() ? "overall" : scope.endpoint},
                        {"rule", rule->rule},
                        {"message", rule->message}});
  }
}

constexpr VerdictState kStates[] = {VerdictState::kPass, VerdictState::kFail,
                                    VerdictState::kInsufficient};

}  // namespace

Json CanaryVerdict::ClusterJson(const ClusterVerdict& cluster) const {
  Json j;
  j["cluster"] = cluster.cluster;
  j["verdict"] = VerdictStateName(cluster.state);
  Json deciding = Json::array();
  if (cluster.state == VerdictState::kFail) {
    AddDeciding(deciding, cluster.overall, VerdictState::kFail);
    for (const ScopeVerdict& scope : cluster.endpoints)
      AddDeciding(deciding, scope, VerdictState::kFail);
  } else if (cluster.state == VerdictState::kInsufficient) {
    AddDeciding(deciding, cluster.overall, VerdictState::kInsufficient);
  }
  j["deciding"] = std::move(deciding);
  j["overall"] = ScopeJson(cluster.overall);
  Json endpoints = Json::array();
  for (const ScopeVerdict& scope : cluster.endpoints)
    endpoints.push_back(ScopeJson(scope));
  j["endpoints"] = std::move(endpoints);
  return j;
}

Json CanaryVerdict::ToJsonValue() const {
  Json j;
  j["verdict"] = VerdictStateName(state);
  if (!note.empty()) j["note"] = note;
  j["alpha"] = alpha;
  j["rules"] = rules;
  Json list = Json::array();
  for (const ClusterVerdict& cluster : clusters)
    list.push_back(ClusterJson(cluster));
  j["clusters"] = std::move(list);
  return j;
}

std::string CanaryVerdict::ToJson() const {
  return ToJsonValue().dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string CanaryVerdict::PrometheusText() const {
  using Labels = std::initializer_list<stats::PrometheusLabelPair>;
  stats::PrometheusText out;
  auto flag = [](bool on) { return uint64_t{on ? 1u : 0u}; };
  out.Family("hammer_dark_verdict", "gauge",
             "The canary verdict of each dark cluster: 1 for its current state.");
  for (const ClusterVerdict& cluster : clusters) {
    for (VerdictState s : kStates) {
      out.Sample("hammer_dark_verdict",
                 Labels{{"cluster", cluster.cluster}, {"state", VerdictStateName(s)}},
                 flag(s == cluster.state));
    }
  }
  out.Family("hammer_dark_verdict_rule", "gauge",
             "Each rule's state for the whole dark cluster: 1 for its current state.");
  for (const ClusterVerdict& cluster : clusters) {
    for (const RuleVerdict& rule : cluster.overall.rules) {
      for (VerdictState s : kStates) {
        out.Sample(
            "hammer_dark_verdict_rule",
            Labels{
                {"cluster", cluster.cluster}, {"rule", rule.rule}, {"state", VerdictStateName(s)}},
            flag(s == rule.state));
      }
    }
  }
  out.Family("hammer_dark_verdict_rule_value", "gauge",
             "Each rule's statistic for the whole dark cluster: percent, percentage points, "
             "seconds, a ratio or a count.");
  for (const ClusterVerdict& cluster : clusters) {
    for (const RuleVerdict& rule : cluster.overall.rules) {
      if (!rule.value) continue;
      double value = IsDuration(rule) ? *rule.value / kSecond : *rule.value;
      out.Sample("hammer_dark_verdict_rule_value",
                 Labels{{"cluster", cluster.cluster}, {"rule", rule.rule}}, value);
    }
  }
  out.Family("hammer_dark_verdict_rule_p_value", "gauge",
             "The p-value of each tested rule for the whole dark cluster.");
  for (const ClusterVerdict& cluster : clusters) {
    for (const RuleVerdict& rule : cluster.overall.rules) {
      if (!rule.p_value) continue;
      out.Sample("hammer_dark_verdict_rule_p_value",
                 Labels{{"cluster", cluster.cluster}, {"rule", rule.rule}}, *rule.p_value);
    }
  }
  out.Family("hammer_dark_verdict_endpoint_groups", "gauge",
             "Endpoint groups in each verdict state.");
  for (const ClusterVerdict& cluster : clusters) {
    for (VerdictState s : kStates) {
      uint64_t n = 0;
      for (const ScopeVerdict& scope : cluster.endpoints)
        n += scope.state == s ? 1 : 0;
      out.Sample("hammer_dark_verdict_endpoint_groups",
                 Labels{{"cluster", cluster.cluster}, {"state", VerdictStateName(s)}}, n);
    }
  }
  return out.Take();
}

}  // namespace hammer::dark
