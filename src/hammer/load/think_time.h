// ThinkTime: the pause a closed-loop slot (a simulated user) takes between the end of one
// request and the start of its next (`--think-time`), as k6's sleep() and Gatling's pause():
//   "250ms"               fixed
//   "uniform:100ms,500ms" uniform in [A, B]
//   "exp:300ms"           exponential with that mean (a Poisson user), capped at 100x the mean
// A value type; Sample is called by one worker thread with its own generator.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"

namespace hammer::load {

class ThinkTime {
 public:
  enum class Kind : uint8_t { kNone, kFixed, kUniform, kExponential };

  // Errors: "expected 250ms, uniform:100ms,500ms or exp:300ms, got '<text>'".
  static Result<ThinkTime> Parse(std::string_view text);

  bool enabled() const { return kind_ != Kind::kNone; }
  Kind kind() const { return kind_; }
  Nanos Sample(std::mt19937_64& rng) const;

 private:
  Kind kind_ = Kind::kNone;
  Nanos a_ = 0;  // fixed value, uniform low bound, or exponential mean
  Nanos b_ = 0;  // uniform high bound
};

}  // namespace hammer::load
