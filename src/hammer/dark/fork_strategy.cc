#include "hammer/dark/fork_strategy.h"

#include <cmath>
#include <optional>

namespace hammer::dark {

RelativeStrategy::RelativeStrategy(uint64_t seed, Mode mode) : rng_(seed), mode_(mode) {
  // 32 significant bits: phase + k stays exact for any whole k below 2^21, which keeps the
  // whole-number averages exact (see the header).
  credit_ = static_cast<double>(rng_.Next() >> 32) * 0x1.0p-32;
}

uint32_t RelativeStrategy::CopiesFor(const ClusterShape& shape) {
  if (mode_ == Mode::kBernoulli) return CopiesForUniform(shape, rng_.NextUniform());
  double average = CopiesPerRequest(shape);
  if (average <= 0) return 0;
  credit_ += average;
  double whole = std::floor(credit_);
  credit_ -= whole;  // exact: credit_ is in [whole, whole + 1)
  return static_cast<uint32_t>(whole);
}

uint32_t CopiesForUniform(const ClusterShape& shape, double u) {
  double average = CopiesPerRequest(shape);
  if (average <= 0) return 0;
  double whole = std::floor(average);
  return static_cast<uint32_t>(whole) + (u < average - whole ? 1 : 0);
}

IdenticalSelector::IdenticalSelector(std::mt19937_64& rng, std::string_view header_name,
                                     std::span<const http::Header> headers) {
  if (!header_name.empty()) {
    std::optional<std::string_view> key = http::FindHeader(headers, header_name);
    if (key && !key->empty()) {
      u_ = UniformFromKey(*key);
      from_header_ = true;
      return;
    }
  }
  u_ = UniformFromBits(rng());
}

}  // namespace hammer::dark
