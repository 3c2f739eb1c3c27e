#include "hammer/load/worker_result.h"

#include <utility>

namespace hammer::load {

void WorkerResult::Merge(WorkerResult&& other) {
  keys.Merge(std::move(other.keys));  // frees each of its rows once merged
  uncorrected.Merge(other.uncorrected);
  failures.Merge(other.failures);
  for (size_t i = 0; i < kFailureCount; ++i) {
    for (std::string& example : other.failure_examples[i]) {
      if (failure_examples[i].size() < kFailureExamples) {
        failure_examples[i].push_back(std::move(example));
      }
    }
  }
  counters.MergeCounters(other.counters);
  connect_time.Merge(other.connect_time);
  handshake_time.Merge(other.handshake_time);
  grpc_statuses.Merge(other.grpc_statuses);
  status_codes.Merge(other.status_codes);
  replay.Merge(other.replay);
}

}  // namespace hammer::load
