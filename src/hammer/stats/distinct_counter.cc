#include "hammer/stats/distinct_counter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "hammer/stats/key_hash.h"

namespace hammer::stats {

DistinctCounter::DistinctCounter(const DistinctCounter& other) {
  if (other.registers_) {
    registers_ = std::make_unique<uint8_t[]>(kRegisters);
    std::memcpy(registers_.get(), other.registers_.get(), kRegisters);
  }
}

DistinctCounter& DistinctCounter::operator=(const DistinctCounter& other) {
  if (this != &other) {
    DistinctCounter copy(other);
    *this = std::move(copy);
  }
  return *this;
}

void DistinctCounter::Add(std::string_view key) {
  AddHash(HashKey(key));
}

void DistinctCounter::AddHash(uint64_t hash) {
  if (!registers_) registers_ = std::make_unique<uint8_t[]>(kRegisters);  // zeroed
  size_t index = hash >> (64 - kPrecision);
  // The rank of the first 1 bit in the remaining 50 bits (1-based; 51 when they are all 0).
  uint64_t rest = (hash << kPrecision) | (uint64_t{1} << (kPrecision - 1));
  uint8_t rank = static_cast<uint8_t>(std::countl_zero(rest) + 1);
  registers_[index] = std::max(registers_[index], rank);
}

void DistinctCounter::Merge(const DistinctCounter& other) {
  if (!other.registers_) return;
  if (!registers_) registers_ = std::make_unique<uint8_t[]>(kRegisters);
  for (size_t i = 0; i < kRegisters; ++i)
    registers_[i] = std::max(registers_[i], other.registers_[i]);
}

uint64_t DistinctCounter::Estimate() const {
  if (!registers_) return 0;
  const double m = static_cast<double>(kRegisters);
  double sum = 0;
  size_t zeros = 0;
  for (size_t i = 0; i < kRegisters; ++i) {
    sum += std::ldexp(1.0, -registers_[i]);
    zeros += registers_[i] == 0;
  }
  const double alpha = 0.7213 / (1.0 + 1.079 / m);
  double estimate = alpha * m * m / sum;
  // Small cardinalities: linear counting is far more accurate while registers are still empty
  // (the threshold for 2^14 registers from "HyperLogLog in Practice").
  if (zeros > 0) {
    double linear = m * std::log(m / static_cast<double>(zeros));
    if (linear <= 11500) estimate = linear;
  }
  return static_cast<uint64_t>(std::llround(estimate));
}

}  // namespace hammer::stats
