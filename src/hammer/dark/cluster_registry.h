// ClusterRegistry: dark cluster name -> counter slot, shared by every event loop of one
// DarkProxyGroup so each loop counts the same cluster in the same slot of its
// DarkLoopCounters.
//
// Ownership: owned by the DarkProxyGroup; handlers keep a pointer. Threading: every method is
// thread-safe (a mutex, taken only when a loop meets a cluster for the first time and when the
// admin listener renders /metrics). Slots are never reused: a cluster that leaves the
// membership keeps its slot, so its counters stay visible.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace hammer::dark {

class ClusterRegistry {
 public:
  static constexpr size_t kMaxDarkClusters = 64;
  // The slot of `name`, or kMaxDarkClusters when the registry is full (the cluster is then
  // neither counted nor forked to).
  size_t IndexOf(const std::string& name);
  // Every registered name, by slot.
  std::vector<std::string> Names() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> names_;
};

}  // namespace hammer::dark
