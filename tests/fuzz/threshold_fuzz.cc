// libFuzzer target for ParseThreshold and EvaluateThreshold. Input: a threshold text.
// Seeds: tests/fuzz/corpus/threshold/.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when an error message does not
// quote the text, when an accepted threshold has a percentile outside (0, 100], a negative or
// non-finite limit, an error-rate limit above 100%, or when evaluating it against a small
// fixed summary gives an empty message, or a pass with a message that says it is over/under.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture fixture;
  std::string_view input(reinterpret_cast<const char*>(data), size);
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
