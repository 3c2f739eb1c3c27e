#include "hammer/dark/cluster_registry.h"

namespace hammer::dark {

size_t ClusterRegistry::IndexOf(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return i;
  }
  if (names_.size() == kMaxDarkClusters) return kMaxDarkClusters;
  names_.push_back(name);
  return names_.size() - 1;
}

std::vector<std::string> ClusterRegistry::Names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return names_;
}

}  // namespace hammer::dark
