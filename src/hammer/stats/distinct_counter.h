// DistinctCounter: how many distinct keys were seen, in constant memory (16 KiB), for reports
// that cannot keep every key (key_table.h). A HyperLogLog sketch (Flajolet, Fusy, Gandouet,
// Meunier, "HyperLogLog: the analysis of a near-optimal cardinality estimation algorithm",
// 2007) with 2^14 registers over 64-bit hashes, and linear counting for small cardinalities
// (Heule, Nunkesser, Hall, "HyperLogLog in Practice", 2013): the estimate's standard error is
// about 0.8 %, and it is exact-looking for a few thousand keys. Adding a key twice changes
// nothing.
//
// A mergeable value type (Merge gives the sketch of the union); not thread-safe. Sketches are
// never serialized: the hash (distinct_counter.cc) may change between versions.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

namespace hammer::stats {

class DistinctCounter {
 public:
  static constexpr int kPrecision = 14;
  static constexpr size_t kRegisters = size_t{1} << kPrecision;

  DistinctCounter() = default;
  DistinctCounter(const DistinctCounter& other);
  DistinctCounter& operator=(const DistinctCounter& other);
  DistinctCounter(DistinctCounter&&) noexcept = default;
  DistinctCounter& operator=(DistinctCounter&&) noexcept = default;

  void Add(std::string_view key);
  // Add for a key whose HashKey is `hash` (a caller that has it already).
  void AddHash(uint64_t hash);
  void Merge(const DistinctCounter& other);
  // The estimated number of distinct keys added (0 when none).
  uint64_t Estimate() const;

 private:
  std::unique_ptr<uint8_t[]> registers_;  // allocated on the first Add or Merge
};

}  // namespace hammer::stats
