#include "hammer/dark/verdict_rules.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hammer::dark {
namespace {

using Strings = std::vector<std::string>;

Strings Texts(const std::vector<const stats::Threshold*>& rules) {
  Strings out;
  for (const stats::Threshold* rule : rules)
    out.push_back(rule->text);
  return out;
}

VerdictRules Make(const Strings& judge, bool defaults = true) {
  Result<VerdictRules> rules = VerdictRules::Make(judge, defaults);
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  return rules.ok() ? *rules : VerdictRules();
}

TEST(VerdictRulesTest, DefaultsAreSoundAndParse) {
  VerdictRules rules;
  EXPECT_EQ(Texts(rules.For("")), (Strings{"samples>=500", "diff_rate<1%", "error_increase<0.1%",
                                           "latency_increase<10%+1ms"}));
  EXPECT_EQ(rules.alpha(), 0.01);
  EXPECT_EQ(Texts(Make({}).For("GET /x")), Texts(rules.For("")));
}

TEST(VerdictRulesTest, AJudgeRuleReplacesTheDefaultOnItsMetricAndOthersAreAdded) {
  VerdictRules rules = Make({"diff_rate<5%", "p99_ratio<2", "p99<250ms"});
  EXPECT_EQ(Texts(rules.For("")),
            (Strings{"samples>=500", "error_increase<0.1%", "latency_increase<10%+1ms",
                     "diff_rate<5%", "p99_ratio<2", "p99<250ms"}));
  // errors<1% and errors<=10 are one metric; p99 and p50 are two.
  VerdictRules errors = Make({"errors<1%", "errors<=10", "p50<1s"}, false);
  EXPECT_EQ(Texts(errors.For("")), (Strings{"errors<1%", "errors<=10", "p50<1s"}));
}

TEST(VerdictRulesTest, KeyedRulesApplyToTheirEndpointGroupOnly) {
  VerdictRules rules = Make({"diff_rate<5%@GET /json/{id}", "p99<1s@GET /slow"});
  EXPECT_EQ(Texts(rules.For("")), (Strings{"samples>=500", "diff_rate<1%", "error_increase<0.1%",
                                           "latency_increase<10%+1ms"}));
  EXPECT_EQ(Texts(rules.For("GET /json/{id}")),
            (Strings{"samples>=500", "error_increase<0.1%", "latency_increase<10%+1ms",
                     "diff_rate<5%@GET /json/{id}"}));
  EXPECT_EQ(Texts(rules.For("GET /slow")),
            (Strings{"samples>=500", "diff_rate<1%", "error_increase<0.1%",
                     "latency_increase<10%+1ms", "p99<1s@GET /slow"}));
}

TEST(VerdictRulesTest, WithoutDefaultsOnlyTheJudgeRules) {
  VerdictRules rules = Make({"diff_rate<2%"}, false);
  EXPECT_EQ(Texts(rules.For("")), (Strings{"diff_rate<2%"}));
}

TEST(VerdictRulesTest, ErrorsNameTheFlag) {
  Result<VerdictRules> bad = VerdictRules::Make(Strings{"rps>10"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().substr(0, 28), "--judge: threshold 'rps>10':");
  for (double alpha : {0.0, 1.0, -0.5, 2.0}) {
    Result<VerdictRules> level = VerdictRules::Make({}, true, alpha);
    ASSERT_FALSE(level.ok());
    EXPECT_EQ(level.status().message(),
              "--verdict-alpha: the significance level must be above 0 and below 1");
  }
}

}  // namespace
}  // namespace hammer::dark
