#include "hammer/stats/top_keys.h"

#include <algorithm>

namespace hammer::stats {
namespace {

// Heap order: the root is the entry to evict first (fewest requests; among equals, the latest).
bool Before(const std::pair<std::string, KeyStats>& a, const std::pair<std::string, KeyStats>& b) {
  return a.second.total() > b.second.total();
}

}  // namespace

void TopKeys::Add(std::string_view key, const KeyStats& stats) {
  ++keys_;
  if (total_.CanMerge(stats)) total_.Merge(stats);
  if (heap_.size() < capacity_) {
    heap_.emplace_back(std::string(key), stats);
    std::push_heap(heap_.begin(), heap_.end(), Before);
    return;
  }
  ++dropped_;
  if (capacity_ == 0 || stats.total() <= heap_.front().second.total()) return;
  std::pop_heap(heap_.begin(), heap_.end(), Before);
  heap_.back() = {std::string(key), stats};
  std::push_heap(heap_.begin(), heap_.end(), Before);
}

std::vector<std::pair<std::string, KeyStats>> TopKeys::TakeSorted() {
  std::vector<std::pair<std::string, KeyStats>> rows = std::move(heap_);
  heap_.clear();
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.second.total() != b.second.total()) return a.second.total() > b.second.total();
    return a.first < b.first;
  });
  return rows;
}

}  // namespace hammer::stats
