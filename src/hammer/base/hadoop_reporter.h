// HadoopReporter: the lines a Hadoop Streaming task writes on standard error to update its job's
// counters and its own status. Streaming gives a task no other channel; the format is Hadoop
// Streaming's ("How do I update counters in streaming applications?" and "How do I update
// status in streaming applications?" in its documentation,
// https://hadoop.apache.org/docs/stable/hadoop-streaming/HadoopStreaming.html):
//
//   reporter:counter:<group>,<counter>,<amount>   adds <amount> to the job's counter
//   reporter:status:<message>                     replaces the task's status message
//
// Group and counter names must not contain a comma and messages no newline (callers pass fixed
// names: error types, hammer_bulk, ...). A reporter that is not enabled writes nothing, so
// callers need no "if Hadoop" of their own. Each line goes to stderr in one write. Not
// thread-safe: FailureCounters remembers what it has reported.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "hammer/base/counters.h"
#include "hammer/base/failure.h"

namespace hammer {

class HadoopReporter {
 public:
  explicit HadoopReporter(bool enabled) : enabled_(enabled) {}

  bool enabled() const { return enabled_; }

  void Counter(std::string_view group, std::string_view counter, uint64_t amount) const;
  void Status(std::string_view message) const;

  // Each counter of a table (base/counters.h) that is not zero, as "<group>,<field>,<value>";
  // a kByFailure entry as "<group>,<field>_<type>,<n>". Gauges are left out: Hadoop adds a
  // counter up across tasks, and a gauge's sum means nothing.
  void Counters(std::string_view group, std::span<const CounterSpec> specs,
                std::span<const uint64_t> values) const;

  // The increase of each failure type since the previous call (since zero at the first), as
  // counters "error,<type>,<increase>" (base/failure.h names); types that did not increase are
  // not written.
  void FailureCounters(const FailureCounts& totals);

  // The line Counter writes, '\n' included, for output that is collected before it is printed.
  static std::string CounterLine(std::string_view group, std::string_view counter, uint64_t amount);

 private:
  bool enabled_;
  FailureCounts reported_;
};

}  // namespace hammer
