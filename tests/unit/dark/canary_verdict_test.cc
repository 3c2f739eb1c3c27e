// CanaryVerdict: each rule on canaries built request by request, as the proxy records them —
// identical, a changed field, noise, failures, added latency — and the verdict's outputs.
#include "hammer/dark/canary_verdict.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/dark/json_diff.h"

namespace hammer::dark {
namespace {

using Strings = std::vector<std::string>;

std::string Item(int id, int price, int64_t timestamp) {
  return "{\"id\":" + std::to_string(id) + ",\"price\":" + std::to_string(price) +
         ",\"updated_at\":" + std::to_string(timestamp) + "}";
}

// A regular latency in µs that varies deterministically: 200 .. 1199.
int64_t Latency(int i) {
  return 200 + (static_cast<int64_t>(i) * 7919) % 1000;
}

struct Request {
  std::string endpoint = "GET /json/{id}";
  bool primary_failed = false;
  bool dark_failed = false;
  int64_t primary_us = 0;
  int64_t dark_us = 0;
  int price_change = 0;             // added to the dark side's price
  bool timestamp_noise = true;      // every answer has its own updated_at
  bool secondary_differs = false;   // the secondary changes the price too (noise)
  Nanos after = 10 * kMillisecond;  // since the previous request
};

class Canary {
 public:
  void Add(const Request& r) {
    int64_t t = clock_;
    clock_ += 3;
    now_ += r.after;
    int64_t noise = r.timestamp_noise ? 1 : 0;
    std::string primary = Item(7, 100, t);
    std::string dark = Item(7, 100 + r.price_change, t + noise);
    std::string secondary = Item(7, r.secondary_differs ? 101 : 100, t + 2 * noise);
    report_.RecordPair(r.endpoint, PairOutcome{r.primary_failed, r.dark_failed, r.primary_us,
                                               r.dark_us, false, now_});
    if (r.primary_failed || r.dark_failed) return;
    ResponseView p{200, {}, primary}, d{200, {}, dark}, s{200, {}, secondary};
    DiffResult raw = diff_.Compare(p, d);
    DiffResult noisy = diff_.Compare(p, s);
    report_.Record(ComparedExchange{r.endpoint, "GET /json/7", primary, dark, secondary}, raw,
                   with_secondary ? &noisy : nullptr);
  }

  bool with_secondary = true;  // false: --compare without --compare-secondary (no noise measured)

  // n identical requests with regular latencies 10 ms apart (100 a second), the dark side
  // shifted by `dark_shift_us`.
  void AddMany(int n, int64_t dark_shift_us = 0, std::string endpoint = "GET /json/{id}",
               Nanos apart = 10 * kMillisecond) {
    for (int i = 0; i < n; ++i) {
      Request r;
      r.endpoint = endpoint;
      r.primary_us = Latency(i);
      r.dark_us = Latency(i + 1) + dark_shift_us;
      r.after = apart;
      Add(r);
    }
  }

  CanaryVerdict Judge(const Strings& judge = {}, bool defaults = true) const {
    Result<VerdictRules> rules = VerdictRules::Make(judge, defaults);
    EXPECT_TRUE(rules.ok()) << rules.status().message();
    ClusterReport cluster{"canary", &report_};
    return JudgeCanary({&cluster, 1}, *rules);
  }

  ComparisonReport& report() { return report_; }

 private:
  JsonDiff diff_;
  ComparisonReport report_;
  int64_t clock_ = 1'700'000'000'000;
  MonoNanos now_ = 1000 * kSecond;
};

const RuleVerdict& Rule(const ScopeVerdict& scope, std::string_view metric) {
  for (const RuleVerdict& rule : scope.rules) {
    if (rule.metric == metric) return rule;
  }
  static const RuleVerdict kNone;
  ADD_FAILURE() << "no rule " << metric;
  return kNone;
}

Strings Failing(const ClusterVerdict& cluster) {
  Strings out;
  for (const ScopeVerdict* scope : {&cluster.overall}) {
    for (const RuleVerdict& rule : scope->rules) {
      if (rule.state == VerdictState::kFail) out.push_back(rule.rule);
    }
  }
  return out;
}

TEST(CanaryVerdictTest, IdenticalCanaryWithNoisyTimestampPasses) {
  Canary canary;
  canary.AddMany(2000);
  CanaryVerdict verdict = canary.Judge();
  ASSERT_EQ(verdict.clusters.size(), 1u);
  const ClusterVerdict& cluster = verdict.clusters[0];
  EXPECT_EQ(verdict.state, VerdictState::kPass);
  EXPECT_EQ(cluster.state, VerdictState::kPass);
  EXPECT_EQ(cluster.overall.samples, 2000u);
  const RuleVerdict& diff = Rule(cluster.overall, "diff_rate");
  EXPECT_EQ(diff.value, 0);
  EXPECT_EQ(diff.primary_samples, 2000u);
  EXPECT_EQ(diff.message,
            "diff_rate = 0% (0 of 2000 compared responses differ; noisy fields cancelled: 1), "
            "limit < 1%");
  ASSERT_EQ(cluster.endpoints.size(), 1u);
  EXPECT_EQ(cluster.endpoints[0].endpoint, "GET /json/{id}");
  EXPECT_EQ(cluster.endpoints[0].state, VerdictState::kPass);
}

TEST(CanaryVerdictTest, WithoutASecondaryTheFieldsAreNamedByFrequencyWithANoiseHint) {
  Canary canary;
  canary.with_secondary = false;
  for (int i = 0; i < 2000; ++i) {
    Request r;
    r.primary_us = Latency(i);
    r.dark_us = Latency(i + 1);
    r.price_change = i % 20 == 3 ? 1 : 0;  // 100 of 2000; updated_at differs in all
    canary.Add(r);
  }
  const CanaryVerdict verdict = canary.Judge();
  const RuleVerdict& diff = Rule(verdict.clusters.at(0).overall, "diff_rate");
  EXPECT_EQ(diff.state, VerdictState::kFail);
  EXPECT_EQ(diff.fields, (Strings{"GET /json/{id} body.updated_at", "GET /json/{id} body.price"}));
  EXPECT_NE(diff.message.find(" at GET /json/{id} body.updated_at (2000), GET /json/{id} "
                              "body.price (100);"),
            std::string::npos)
      << diff.message;
  EXPECT_NE(diff.message.find("which looks like noise (a timestamp, an id): start with "
                              "--compare-secondary URL (a second regular instance) to cancel "
                              "noise, or --compare-ignore body.updated_at to leave the field out"),
            std::string::npos)
      << diff.message;
  // With a secondary measuring noise the timestamp is cancelled, and no hint is given.
  Canary measured;
  for (int i = 0; i < 2000; ++i) {
    Request r;
    r.primary_us = Latency(i);
    r.dark_us = Latency(i + 1);
    r.price_change = i % 20 == 3 ? 1 : 0;
    measured.Add(r);
  }
  const CanaryVerdict judged = measured.Judge();
  const RuleVerdict& cancelled = Rule(judged.clusters.at(0).overall, "diff_rate");
  EXPECT_EQ(cancelled.fields, Strings{"GET /json/{id} body.price"});
  EXPECT_EQ(cancelled.message.find("looks like noise"), std::string::npos) << cancelled.message;
}

TEST(CanaryVerdictTest, TooFewSamplesIsInsufficientEvenWhenEverythingDiffers) {
  Canary canary;
  for (int i = 0; i < 100; ++i) {
    Request r;
    r.price_change = 1;
    r.primary_us = r.dark_us = 500;
    canary.Add(r);
  }
  CanaryVerdict verdict = canary.Judge();
  const ClusterVerdict& cluster = verdict.clusters[0];
  EXPECT_EQ(verdict.state, VerdictState::kInsufficient);
  EXPECT_EQ(cluster.overall.state, VerdictState::kInsufficient);
  EXPECT_EQ(Rule(cluster.overall, "samples").message,
            "samples = 100 answered on both sides, limit >= 500 (under by 400, 80%)");
  // The statistics are still shown; no rule may fail below the minimum.
  EXPECT_EQ(Rule(cluster.overall, "diff_rate").value, 100);
  EXPECT_EQ(Rule(cluster.overall, "diff_rate").state, VerdictState::kInsufficient);
  // A smaller minimum lets it fail.
  EXPECT_EQ(canary.Judge({"samples>=50"}).state, VerdictState::kFail);
}

TEST(CanaryVerdictTest, AChangedFieldInFivePercentFailsTheDiffRule) {
  Canary canary;
  for (int i = 0; i < 2000; ++i) {
    Request r;
    r.primary_us = Latency(i);
    r.dark_us = Latency(i + 1);
    r.price_change = i % 20 == 3 ? 1 : 0;
    canary.Add(r);
  }
  CanaryVerdict verdict = canary.Judge();
  const ClusterVerdict& cluster = verdict.clusters[0];
  EXPECT_EQ(cluster.state, VerdictState::kFail);
  EXPECT_EQ(Failing(cluster), Strings{"diff_rate<1%"});
  const RuleVerdict& diff = Rule(cluster.overall, "diff_rate");
  EXPECT_EQ(diff.value, 5);
  EXPECT_EQ(diff.fields, Strings{"GET /json/{id} body.price"});
  EXPECT_EQ(Rule(cluster.endpoints[0], "diff_rate").fields, Strings{"body.price"});
  EXPECT_EQ(cluster.endpoints[0].state, VerdictState::kFail);
  // A looser limit on that endpoint group passes it there, but not the whole cluster.
  CanaryVerdict keyed = canary.Judge({"diff_rate<10%@GET /json/{id}"});
  EXPECT_EQ(keyed.clusters[0].endpoints[0].state, VerdictState::kPass);
  EXPECT_EQ(keyed.clusters[0].state, VerdictState::kFail);
  EXPECT_EQ(canary.Judge({"diff_rate<10%"}).state, VerdictState::kPass);
}

TEST(CanaryVerdictTest, AFieldAsNoisyOnTheSecondaryIsCancelled) {
  // The price differs on a third of the requests, between the two regular instances as much as
  // between primary and dark: noise, whatever the Diffy thresholds make of the counts.
  Canary canary;
  for (int i = 0; i < 2000; ++i) {
    Request r;
    r.primary_us = Latency(i);
    r.dark_us = Latency(i + 1);
    r.price_change = (i * 7) % 3 == 0 ? 1 : 0;
    r.secondary_differs = (i * 11) % 3 == 1;
    canary.Add(r);
  }
  CanaryVerdict verdict = canary.Judge();
  EXPECT_EQ(verdict.state, VerdictState::kPass);
  EXPECT_EQ(Rule(verdict.clusters[0].overall, "diff_rate").value, 0);
}

TEST(CanaryVerdictTest, FailuresAreJudgedWithFishersExactTest) {
  // 3 failures in 50 against none: not significant (p = 0.12), so not a failure.
  Canary few;
  for (int i = 0; i < 50; ++i) {
    Request r;
    r.dark_failed = i % 17 == 5;
    r.primary_us = r.dark_us = 300;
    few.Add(r);
  }
  CanaryVerdict small = few.Judge({"samples>=10"});
  const RuleVerdict& errors = Rule(small.clusters[0].overall, "error_increase");
  EXPECT_EQ(errors.state, VerdictState::kPass);
  EXPECT_NEAR(*errors.p_value, 0.12121212121212122, 1e-9);  // SciPy's fisher_exact
  EXPECT_NEAR(*errors.value, 6, 1e-9);
  EXPECT_NE(errors.message.find("not significant at alpha 0.01"), std::string::npos)
      << errors.message;

  // 2 % of 2000 failing against none: significant and above the margin.
  Canary many;
  for (int i = 0; i < 2000; ++i) {
    Request r;
    r.dark_failed = i % 50 == 7;
    r.primary_us = Latency(i);
    r.dark_us = Latency(i + 1);
    many.Add(r);
  }
  CanaryVerdict big = many.Judge();
  EXPECT_EQ(big.state, VerdictState::kFail);
  EXPECT_EQ(Failing(big.clusters[0]), Strings{"error_increase<0.1%"});
  const RuleVerdict& failing = Rule(big.clusters[0].overall, "error_increase");
  EXPECT_NEAR(*failing.p_value, 7.469072998268716e-13, 1e-20);  // SciPy's fisher_exact
  EXPECT_EQ(failing.value_text, "+2");
  // Failed answers are failures, not differences.
  EXPECT_EQ(Rule(big.clusters[0].overall, "diff_rate").value, 0);
  EXPECT_EQ(Rule(big.clusters[0].overall, "diff_rate").primary_samples, 1960u);
}

TEST(CanaryVerdictTest, ANegligibleSignificantIncreaseIsWithinTheMargin) {
  // 1.05 % against 1.00 % of 400 000: significant (p ~ 0.015 at alpha 0.05) but 0.05 points.
  Canary canary;
  for (int i = 0; i < 400'000; ++i) {
    bool primary_failed = i % 100 == 0;
    bool dark_failed = i % 100 == 1 || i % 2000 == 3;
    canary.report().RecordPair("GET /json/{id}",
                               PairOutcome{primary_failed, dark_failed, 300, 300});
  }
  canary.AddMany(100);
  Result<VerdictRules> rules = VerdictRules::Make({}, true, 0.05);
  ClusterReport cluster{"canary", &canary.report()};
  CanaryVerdict verdict = JudgeCanary({&cluster, 1}, *rules);
  const RuleVerdict& errors = Rule(verdict.clusters[0].overall, "error_increase");
  EXPECT_LT(*errors.p_value, 0.05);
  EXPECT_EQ(errors.state, VerdictState::kPass);
}

TEST(CanaryVerdictTest, LatencyFailsOnlyWhenSlowerByMoreThanTheMargin) {
  // Margin: 10 % of the primary median (~700 µs) + 1 ms = ~1.07 ms.
  for (auto [shift, expected] :
       {std::pair{0, VerdictState::kPass}, std::pair{-150, VerdictState::kPass},
        std::pair{500, VerdictState::kPass}, std::pair{1500, VerdictState::kFail},
        std::pair{5000, VerdictState::kFail}}) {
    Canary canary;
    canary.AddMany(2000, shift);
    CanaryVerdict verdict = canary.Judge();
    const RuleVerdict& latency = Rule(verdict.clusters[0].overall, "latency_increase");
    EXPECT_EQ(latency.state, expected) << "shift " << shift << ": " << latency.message;
    EXPECT_EQ(verdict.state, expected) << "shift " << shift;
    EXPECT_NEAR(*latency.value / kMicrosecond, shift, 3) << "Hodges-Lehmann shift";
  }
  Canary slow;
  slow.AddMany(2000, 5000);
  CanaryVerdict slow_verdict = slow.Judge();
  const RuleVerdict& latency = Rule(slow_verdict.clusters[0].overall, "latency_increase");
  EXPECT_EQ(latency.value_text, "5ms");
  EXPECT_LT(*latency.p_value, 1e-100);
  auto figure = [&](std::string_view name) {
    for (const auto& [key, value] : latency.figures) {
      if (key == name) return value;
    }
    return -1.0;
  };
  EXPECT_NEAR(figure("margin_us"), 0.1 * figure("p50_primary_us") + 1000, 1e-9);
  EXPECT_NEAR(figure("p50_ratio"), figure("p50_dark_us") / figure("p50_primary_us"), 1e-9);
  EXPECT_GT(figure("p99_ratio"), 1);
  EXPECT_EQ(latency.primary_samples, 2000u);
}

double Figure(const RuleVerdict& rule, std::string_view name) {
  for (const auto& [key, value] : rule.figures) {
    if (key == name) return value;
  }
  ADD_FAILURE() << "no figure " << name;
  return -1;
}

TEST(CanaryVerdictTest, APassingStallIsNotASlowdown) {
  // 20 s of traffic; for the last 5 s the dark side stalls (30 ms more, a descheduled process)
  // while the traffic is busiest: 60 % of the requests are slower by far more than the margin,
  // significantly, but in a minority of the intervals.
  Canary canary;
  canary.AddMany(800, 0, "GET /json/{id}", 18'750 * kMicrosecond);
  canary.AddMany(1200, 30'000, "GET /json/{id}", 4'166 * kMicrosecond);
  CanaryVerdict verdict = canary.Judge();
  const RuleVerdict& latency = Rule(verdict.clusters[0].overall, "latency_increase");
  EXPECT_LT(Figure(latency, "mann_whitney_p"), 0.01);
  EXPECT_EQ(Figure(latency, "intervals"), 20);
  EXPECT_EQ(Figure(latency, "intervals_slower"), 5);
  EXPECT_EQ(Figure(latency, "interval_threshold_us"), 1000);
  EXPECT_EQ(latency.state, VerdictState::kPass) << latency.message;
  EXPECT_NE(latency.message.find("most requests slower by more than 1ms in 5 of 20 intervals of "
                                 "1s: slower in a passing spell, not persistently"),
            std::string::npos)
      << latency.message;
  // The same slowdown over most of the time fails.
  Canary slow;
  slow.AddMany(800);
  slow.AddMany(1200, 30'000);
  CanaryVerdict slow_verdict = slow.Judge();
  EXPECT_EQ(Rule(slow_verdict.clusters[0].overall, "latency_increase").state, VerdictState::kFail);
}

TEST(CanaryVerdictTest, TooShortAnObservationCannotShowASlowdownPersists) {
  // 2000 requests in 0.4 s: 5 ms slower, but in at most one interval of 1 s.
  Canary canary;
  canary.AddMany(2000, 5000, "GET /json/{id}", 200 * kMicrosecond);
  CanaryVerdict verdict = canary.Judge();
  const RuleVerdict& latency = Rule(verdict.clusters[0].overall, "latency_increase");
  EXPECT_EQ(latency.state, VerdictState::kInsufficient) << latency.message;
  EXPECT_EQ(verdict.state, VerdictState::kInsufficient);
}

TEST(CanaryVerdictTest, QuantileRatiosAndDarkSideThresholds) {
  Canary canary;
  canary.AddMany(1000, 400);
  CanaryVerdict verdict = canary.Judge({"p50_ratio<1.2", "p99<2ms", "max<1ms"}, false);
  const ScopeVerdict& overall = verdict.clusters[0].overall;
  EXPECT_EQ(Rule(overall, "p50_ratio").state, VerdictState::kFail);
  EXPECT_EQ(Rule(overall, "p99").state, VerdictState::kPass);
  EXPECT_EQ(Rule(overall, "max").state, VerdictState::kFail);
  EXPECT_EQ(Rule(overall, "max").message,
            "max = 1.6ms (dark side), limit < 1ms (over by 599us, 60%)");
  EXPECT_EQ(verdict.state, VerdictState::kFail);
}

TEST(CanaryVerdictTest, AQuietEndpointGroupDoesNotHoldTheClusterBack) {
  Canary canary;
  canary.AddMany(2000);
  canary.AddMany(20, 0, "GET /rare");
  CanaryVerdict verdict = canary.Judge();
  const ClusterVerdict& cluster = verdict.clusters[0];
  EXPECT_EQ(cluster.state, VerdictState::kPass);
  ASSERT_EQ(cluster.endpoints.size(), 2u);
  EXPECT_EQ(cluster.endpoints[0].endpoint, "GET /json/{id}");
  EXPECT_EQ(cluster.endpoints[1].endpoint, "GET /rare");
  EXPECT_EQ(cluster.endpoints[1].state, VerdictState::kInsufficient);
}

TEST(CanaryVerdictTest, EndpointGroupsShareTheSignificanceLevel) {
  Canary canary;
  canary.AddMany(600, 0, "GET /a");
  canary.AddMany(600, 0, "GET /b");
  CanaryVerdict verdict = canary.Judge();
  const ClusterVerdict& cluster = verdict.clusters[0];
  EXPECT_EQ(Rule(cluster.overall, "latency_increase").alpha, 0.01);
  EXPECT_EQ(Rule(cluster.endpoints[0], "latency_increase").alpha, 0.005);
}

TEST(CanaryVerdictTest, NoClusterOrNoDataIsInsufficient) {
  EXPECT_EQ(JudgeCanary({}, VerdictRules()).state, VerdictState::kInsufficient);
  ClusterReport empty{"canary", nullptr};
  CanaryVerdict verdict = JudgeCanary({&empty, 1}, VerdictRules());
  EXPECT_EQ(verdict.state, VerdictState::kInsufficient);
  EXPECT_EQ(Rule(verdict.clusters[0].overall, "latency_increase").message,
            "latency_increase: no successful answers on the primary side yet");
}

TEST(CanaryVerdictTest, CutShortTurnsAPassIntoInsufficient) {
  Canary canary;
  canary.AddMany(600);
  CanaryVerdict pass = canary.Judge();
  pass.CutShort("interrupted");
  EXPECT_EQ(pass.state, VerdictState::kInsufficient);
  Canary broken;
  broken.AddMany(1200, 5000);
  CanaryVerdict fail = broken.Judge();
  fail.CutShort("interrupted");
  EXPECT_EQ(fail.state, VerdictState::kFail);
}

TEST(CanaryVerdictTest, JsonAndPrometheusText) {
  Canary canary;
  canary.AddMany(1200, 5000);
  CanaryVerdict verdict = canary.Judge();
  nlohmann::json json = nlohmann::json::parse(verdict.ToJson());
  EXPECT_EQ(json["verdict"], "fail");
  EXPECT_EQ(json["alpha"], 0.01);
  EXPECT_EQ(json["rules"].size(), 4u);
  const nlohmann::json& cluster = json["clusters"][0];
  EXPECT_EQ(cluster["cluster"], "canary");
  EXPECT_EQ(cluster["verdict"], "fail");
  ASSERT_EQ(cluster["deciding"].size(), 2u);
  EXPECT_EQ(cluster["deciding"][0]["scope"], "overall");
  EXPECT_EQ(cluster["deciding"][0]["rule"], "latency_increase<10%+1ms");
  EXPECT_EQ(cluster["deciding"][1]["scope"], "GET /json/{id}");
  const nlohmann::json& latency = cluster["overall"]["rules"][3];
  EXPECT_EQ(latency["metric"], "latency_increase");
  EXPECT_EQ(latency["verdict"], "fail");
  EXPECT_NEAR(latency["value"].get<double>(), 5000, 3);  // µs
  EXPECT_EQ(latency["limit"], "10%+1ms");
  EXPECT_EQ(latency["primary_samples"], 1200);
  EXPECT_TRUE(latency.contains("p_value"));
  EXPECT_TRUE(latency.contains("hodges_lehmann_us"));
  EXPECT_EQ(cluster["endpoints"][0]["endpoint"], "GET /json/{id}");

  std::string text = verdict.PrometheusText();
  EXPECT_NE(text.find("hammer_dark_verdict{cluster=\"canary\",state=\"fail\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("hammer_dark_verdict{cluster=\"canary\",state=\"pass\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("hammer_dark_verdict_rule{cluster=\"canary\",rule=\"latency_increase<10%+"
                      "1ms\",state=\"fail\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("hammer_dark_verdict_rule_value{cluster=\"canary\",rule=\"samples>=500\"} "
                      "1200\n"),
            std::string::npos);
  EXPECT_NE(text.find("hammer_dark_verdict_rule_p_value{cluster=\"canary\",rule=\"error_increase"
                      "<0.1%\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("hammer_dark_verdict_endpoint_groups{cluster=\"canary\",state=\"fail\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(verdict.Summary().substr(0, 28), "canary: fail (latency_increa");
}

}  // namespace
}  // namespace hammer::dark
