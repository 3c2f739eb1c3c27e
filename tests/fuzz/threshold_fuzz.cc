// libFuzzer target for ParseThreshold and EvaluateThreshold, and for the same text as a
// hammer dark --judge rule (ThresholdSubject::kCanary) judged by JudgeCanary. Input: a threshold
// text. Seeds: tests/fuzz/corpus/threshold/.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when an error message does not
// quote the text, when an accepted threshold has a percentile outside (0, 100], a negative or
// non-finite limit, an error-rate limit above 100%, or when evaluating it against a small
// fixed summary gives an empty message, or a pass with a message that says it is over/under;
// for a canary rule, when a relative part lies outside [0, 100]%, or judging it against a small
// fixed comparison report gives a rule without a message or JSON that does not parse.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/dark/canary_verdict.h"
#include "hammer/dark/json_diff.h"
#include "hammer/stats/threshold.h"

namespace {

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

struct Fixture {
  hammer::stats::KeyStats total;
  std::vector<std::pair<std::string, hammer::stats::KeyStats>> keys;
  Fixture() {
    for (int64_t v : {900, 1500, 20000, 250000, 3000000})
      total.RecordSuccess(v);
    total.RecordFailure(std::nullopt);
    hammer::stats::KeyStats a;
    a.RecordSuccess(1000);
    keys.emplace_back("/a", a);
    hammer::stats::KeyStats broken;
    broken.RecordFailure(std::nullopt);
    keys.emplace_back("/broken", broken);
  }
};

// 40 requests, 20 ms apart: the dark side 2 ms slower on every one, a changed field on a fifth.
hammer::dark::ComparisonReport CanaryReport() {
  hammer::dark::ComparisonReport report;
  hammer::dark::JsonDiff diff;
  for (int i = 0; i < 40; ++i) {
    std::string primary = R"({"price":1})";
    std::string dark = i % 5 == 0 ? R"({"price":2})" : primary;
    report.RecordPair("GET /x",
                      hammer::dark::PairOutcome{i == 7, i % 9 == 0, 300 + i, 2300 + i, false,
                                                (1000 + 20 * i) * hammer::kMillisecond});
    hammer::dark::ResponseView p{200, {}, primary}, d{200, {}, dark};
    report.Record(hammer::dark::ComparedExchange{"GET /x", "GET /x", primary, dark, {}},
                  diff.Compare(p, d), nullptr);
  }
  return report;
}

void JudgeAsCanaryRule(std::string_view input) {
  static const hammer::dark::ComparisonReport report = CanaryReport();
  hammer::Result<hammer::stats::Threshold> parsed =
      hammer::stats::ParseThreshold(input, hammer::stats::ThresholdSubject::kCanary);
  if (!parsed.ok()) {
    Require(std::string_view(parsed.status().message()).starts_with("threshold '"));
    return;
  }
  Require(std::isfinite(parsed->limit) && parsed->limit >= 0);
  Require(parsed->limit_percent >= 0 && parsed->limit_percent <= 100);
  std::vector<std::string> judge = {std::string(input)};
  hammer::Result<hammer::dark::VerdictRules> rules =
      hammer::dark::VerdictRules::Make(judge, /*use_defaults=*/true);
  Require(rules.ok());
  hammer::dark::ClusterReport cluster{"canary", &report};
  hammer::dark::CanaryVerdict verdict = hammer::dark::JudgeCanary({&cluster, 1}, *rules);
  for (const hammer::dark::RuleVerdict& rule : verdict.clusters.at(0).overall.rules)
    Require(!rule.message.empty());
  Require(!nlohmann::json::parse(verdict.ToJson(), nullptr, false).is_discarded());
  Require(!verdict.PrometheusText().empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture fixture;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  JudgeAsCanaryRule(input);
  hammer::Result<hammer::stats::Threshold> parsed = hammer::stats::ParseThreshold(input);
  if (!parsed.ok()) {
    Require(std::string_view(parsed.status().message()).starts_with("threshold '"));
    return 0;
  }
  const hammer::stats::Threshold& t = *parsed;
  Require(std::isfinite(t.limit) && t.limit >= 0);
  if (t.metric == hammer::stats::ThresholdMetric::kPercentile) {
    Require(t.percentile > 0 && t.percentile <= 100);
  }
  if (t.metric == hammer::stats::ThresholdMetric::kErrorRate) Require(t.limit <= 100);
  for (double seconds : {0.0, 2.5}) {
    hammer::stats::ThresholdInputs inputs{fixture.total, seconds, fixture.keys};
    hammer::stats::ThresholdResult result = hammer::stats::EvaluateThreshold(t, inputs);
    Require(!result.message.empty());
    Require(result.text == t.text);
    if (result.passed) {
      Require(result.message.find(" by ") == std::string::npos);
      Require(result.message.find("at the limit") == std::string::npos);
    }
  }
  return 0;
}
