// Progress of a long run (`hammer load`, `hammer bulk`) on standard error, while it works:
//   - a live line redrawn every second when stderr is a terminal ("\r" ESC "[K" then the text,
//     no newline), cleared at the end;
//   - for Hadoop Streaming (HadoopReporter), a status line every status interval and, when the
//     run has any, counters every counter interval.
// The run supplies the texts (ProgressReporter::Source) and its own intervals; the reporter
// decides when each is due and keeps messages from being mixed into the live line (Say).
//
// Threads: one thread (the run's controlling thread) makes every call; the Source is called
// back on it, from Poll.
#pragma once

#include <string>
#include <string_view>

#include "hammer/base/clock.h"
#include "hammer/base/hadoop_reporter.h"

namespace hammer {

// What the user chose (the command's flags and environment).
struct ProgressOptions {
  bool live_line = false;        // stderr is a terminal and the run is not quiet
  bool hadoop_reporter = false;  // reporter:counter / reporter:status lines
  std::string label;             // who this worker is, for status lines ("attempt_..._m_000003_0")
};

class ProgressReporter {
 public:
  // What the run reports and how often. A zero interval: never.
  struct Schedule {
    Nanos live = kSecond;
    Nanos status = 30 * kSecond;
    Nanos counters = 0;
  };

  class Source {
   public:
    virtual ~Source() = default;
    // The live line's text, `elapsed` seconds into the run.
    virtual std::string LiveLine(double elapsed) = 0;
    // The status message (after "<command>[ (<label>)]: "), `elapsed` seconds into the run.
    virtual std::string StatusLine(double elapsed) = 0;
    // Hadoop counters due now (only with Schedule::counters).
    virtual void ReportCounters(HadoopReporter& /*hadoop*/) {}
  };

  // `command` names the run in status lines ("hammer load"). `source` must outlive the reporter.
  ProgressReporter(std::string command, const ProgressOptions& options, Schedule schedule,
                   Source* source);

  // The run starts at `start`: intervals count from there.
  void Begin(MonoNanos start);
  // Writes what is due at `now`: the live line, then counters, then the status.
  void Poll(MonoNanos now);
  // Clears the live line (at the end of the run; nothing without a live line).
  void End();

  // `line` on a line of its own (a newline is added), never mixed into the live line.
  void Say(std::string_view line);
  // A Hadoop status line "<command>[ (<label>)]: <message>".
  void Status(std::string_view message);
  HadoopReporter& hadoop() { return hadoop_; }
  const ProgressOptions& options() const { return options_; }

 private:
  std::string command_;
  ProgressOptions options_;
  Schedule schedule_;
  Source* source_;
  HadoopReporter hadoop_;
  MonoNanos start_ = 0;
  MonoNanos next_live_ = 0;
  MonoNanos next_counters_ = 0;
  MonoNanos next_status_ = 0;
};

}  // namespace hammer
