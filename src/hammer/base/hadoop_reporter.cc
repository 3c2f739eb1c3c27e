#include "hammer/base/hadoop_reporter.h"

#include <cstdio>

namespace hammer {

std::string HadoopReporter::CounterLine(std::string_view group, std::string_view counter,
                                        uint64_t amount) {
  std::string line = "reporter:counter:";
  line.append(group).append(",").append(counter).append(",");
  line.append(std::to_string(amount)).append("\n");
  return line;
}

void HadoopReporter::Counter(std::string_view group, std::string_view counter,
                             uint64_t amount) const {
  if (!enabled_) return;
  std::fputs(CounterLine(group, counter, amount).c_str(), stderr);
}

void HadoopReporter::Status(std::string_view message) const {
  if (!enabled_) return;
  std::string line = "reporter:status:";
  line.append(message).append("\n");
  std::fputs(line.c_str(), stderr);
}

void HadoopReporter::FailureCounters(const FailureCounts& totals) {
  for (size_t i = 0; i < kFailureCount; ++i) {
    uint64_t increase = totals.by_type[i] - reported_.by_type[i];
    if (increase > 0) Counter("error", kFailureNames[i], increase);
  }
  reported_ = totals;
}

}  // namespace hammer
