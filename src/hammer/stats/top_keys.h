// TopKeys: the keys a report lists when there may be too many to list: keeps the `capacity`
// keys with the most requests (count + errors; ties keep the key seen first) and the exact
// total of every key added. Memory is bounded by `capacity` KeyStats whatever the input.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/stats/key_stats.h"

namespace hammer::stats {

class TopKeys {
 public:
  explicit TopKeys(size_t capacity) : capacity_(capacity) {}

  void Add(std::string_view key, const KeyStats& stats);

  // The kept keys, most requests first (then by key). Leaves the kept set empty.
  std::vector<std::pair<std::string, KeyStats>> TakeSorted();
  // Every key added, merged (a key whose counters would overflow the total is left out of it).
  const KeyStats& total() const { return total_; }
  uint64_t keys() const { return keys_; }        // added
  uint64_t dropped() const { return dropped_; }  // added but not kept

 private:
  size_t capacity_;
  std::vector<std::pair<std::string, KeyStats>> heap_;  // min-heap on requests
  KeyStats total_;
  uint64_t keys_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace hammer::stats
