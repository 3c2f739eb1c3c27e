#include "hammer/load/think_time.h"

#include <algorithm>

#include "hammer/base/duration.h"

namespace hammer::load {

Result<ThinkTime> ThinkTime::Parse(std::string_view text) {
  auto bad = [&text] {
    return Status::Error("expected 250ms, uniform:100ms,500ms or exp:300ms, got '" +
                         std::string(text) + "'");
  };
  ThinkTime think;
  if (text.starts_with("uniform:")) {
    std::string_view range = text.substr(8);
    size_t comma = range.find(',');
    if (comma == std::string_view::npos) return bad();
    Result<Nanos> low = ParseDuration(range.substr(0, comma));
    Result<Nanos> high = ParseDuration(range.substr(comma + 1));
    if (!low.ok() || !high.ok() || *high < *low) return bad();
    think.kind_ = Kind::kUniform;
    think.a_ = *low;
    think.b_ = *high;
    return think;
  }
  if (text.starts_with("exp:")) {
    Result<Nanos> mean = ParseDuration(text.substr(4));
    if (!mean.ok() || *mean <= 0) return bad();
    think.kind_ = Kind::kExponential;
    think.a_ = *mean;
    return think;
  }
  Result<Nanos> fixed = ParseDuration(text);
  if (!fixed.ok()) return bad();
  think.kind_ = *fixed > 0 ? Kind::kFixed : Kind::kNone;
  think.a_ = *fixed;
  return think;
}

Nanos ThinkTime::Sample(std::mt19937_64& rng) const {
  switch (kind_) {
    case Kind::kNone:
      return 0;
    case Kind::kFixed:
      return a_;
    case Kind::kUniform:
      return std::uniform_int_distribution<Nanos>(a_, b_)(rng);
    case Kind::kExponential: {
      double mean = static_cast<double>(a_);
      double pause = std::exponential_distribution<double>(1.0 / mean)(rng);
      return static_cast<Nanos>(std::min(pause, 100 * mean));
    }
  }
  return 0;
}

}  // namespace hammer::load
