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

void HadoopReporter::Counters(std::string_view group, std::span<const CounterSpec> specs,
                              std::span<const uint64_t> values) const {
  size_t first_value = 0;
  for (const CounterSpec& spec : specs) {
    if (spec.kind == CounterKind::kByFailure) {
      for (size_t type = 0; type < kFailureCount; ++type) {
        if (uint64_t n = values[first_value + type]; n > 0) {
          Counter(group, std::string(spec.field) + "_" + std::string(kFailureNames[type]), n);
        }
      }
    } else if (spec.kind == CounterKind::kCounter && values[first_value] > 0) {
      Counter(group, spec.field, values[first_value]);
    }
    first_value += spec.width();
  }
}

void HadoopReporter::FailureCounters(const FailureCounts& totals) {
  for (size_t i = 0; i < kFailureCount; ++i) {
    uint64_t increase = totals.by_type[i] - reported_.by_type[i];
    if (increase > 0) Counter("error", kFailureNames[i], increase);
  }
  reported_ = totals;
}

}  // namespace hammer
