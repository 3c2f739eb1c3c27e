// AttemptSelector: one attempt of each task, when the partials of retried work meet.
//
// A task that was retried (a Kubernetes Indexed Job pod failed and replaced under backoffLimit,
// a worker re-run by hand, a Hadoop mapper attempt whose output was collected outside Hadoop)
// leaves the partials of several attempts; merging them all would count the task's requests
// twice. Partials that carry their origin (#ha1, record.h) are held here until the input ends;
// then each task keeps one attempt, the last complete one: among the attempts whose every line
// was read (as many distinct keys as their `lines` says), the one that started last
// (started_ms, then the attempt's name); when none is complete, the one that started last. The
// others are dropped, and counted. A line read twice (the same file given twice) counts once.
//
// Partials without an origin (#hp1) and raw records never come here: they are merged as they
// are. Memory: the lines held, as read. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "hammer/base/status.h"
#include "hammer/stats/record.h"

namespace hammer::stats {

class AttemptSelector {
 public:
  struct Summary {
    uint64_t tasks = 0;             // tasks with at least one #ha1 partial
    uint64_t attempts_dropped = 0;  // attempts whose partials were left out
    uint64_t lines_dropped = 0;     // their lines
    uint64_t duplicate_lines = 0;   // lines read again for a key their attempt already had
    uint64_t incomplete_kept = 0;   // tasks none of whose attempts had every line read
    std::string first_drop;         // "task T: kept attempt A, dropped B (complete)", or ""
  };

  // `line`: the whole "KEY<TAB>#ha1 ..." line; `record`: its parse, a kPartial with an origin.
  // Errors: the partial's own fields are wrong (ParsePartialFields); the line is then not held.
  Status Add(std::string_view line, const ParsedRecord& record);

  bool empty() const { return tasks_.empty(); }

  // Chooses, and calls keep(line) for every line of the kept attempts: tasks in name order,
  // each attempt's lines in key order. Call once, after the last Add.
  void Finish(const std::function<void(std::string_view line)>& keep);

  // Valid after Finish.
  const Summary& summary() const { return summary_; }

 private:
  struct Attempt {
    uint64_t lines = 0;                       // as the attempt declared
    std::map<std::string, std::string> keys;  // key -> its line
    bool complete() const { return keys.size() == lines; }
  };
  // (started_ms, attempt name): the order in which attempts started.
  using AttemptId = std::pair<int64_t, std::string>;
  std::map<std::string, std::map<AttemptId, Attempt>> tasks_;
  Summary summary_;
};

}  // namespace hammer::stats
