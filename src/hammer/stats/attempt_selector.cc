#include "hammer/stats/attempt_selector.h"

#include <iterator>

#include "hammer/stats/key_stats.h"
#include "hammer/stats/partial.h"

namespace hammer::stats {

Status AttemptSelector::Add(std::string_view line, const ParsedRecord& record) {
  KeyStats checked;  // a line is held only when it would merge
  if (Status status = ParsePartialFields(record.partial, &checked); !status.ok()) return status;
  const PartialOrigin& origin = *record.origin;
  Attempt& attempt =
      tasks_[std::string(origin.task)][AttemptId(origin.started_ms, std::string(origin.attempt))];
  if (attempt.lines == 0) attempt.lines = origin.lines;
  const bool added = attempt.keys.emplace(std::string(record.key), std::string(line)).second;
  if (!added) ++summary_.duplicate_lines;
  return Status::Ok();
}

void AttemptSelector::Finish(const std::function<void(std::string_view line)>& keep) {
  summary_.tasks = tasks_.size();
  for (const auto& [task, attempts] : tasks_) {
    // The last complete attempt, else the last one: attempts are in starting order.
    auto kept = std::prev(attempts.end());
    for (auto it = attempts.rbegin(); it != attempts.rend(); ++it) {
      if (it->second.complete()) {
        kept = std::prev(it.base());
        break;
      }
    }
    if (!kept->second.complete()) ++summary_.incomplete_kept;
    for (auto it = attempts.begin(); it != attempts.end(); ++it) {
      if (it == kept) continue;
      ++summary_.attempts_dropped;
      summary_.lines_dropped += it->second.keys.size();
      if (summary_.first_drop.empty()) {
        summary_.first_drop = "task " + task + ": kept attempt " + kept->first.second + " (" +
                              (kept->second.complete() ? "complete" : "incomplete") +
                              "), dropped " + it->first.second + " (" +
                              (it->second.complete() ? "complete" : "incomplete") + ")";
      }
    }
    for (const auto& [key, line] : kept->second.keys)
      keep(line);
  }
  tasks_.clear();
}

}  // namespace hammer::stats
