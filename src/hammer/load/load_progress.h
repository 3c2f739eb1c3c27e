// LoadProgress: what a `hammer load` run reports while it works, read from its RunMonitor (the
// texts of ProgressReporter, base/progress.h):
//   live line   "  12.0s  24000 requests  2000 req/s  p50 0.41ms  p99 2.10ms  errors 3  in
//               flight 12" (p50/p99 of the last second), every second on a terminal;
//   status      "<N> requests, <F> failed, <S> s", every 30 s in Hadoop mode;
//   counters    error,<type>,<increase> (base/failure.h names), every 10 s in Hadoop mode.
// Threads: the run's controlling thread (ProgressReporter::Poll) only.
#pragma once

#include <string>

#include "hammer/base/progress.h"
#include "hammer/load/run_monitor.h"

namespace hammer::load {

class LoadProgress final : public ProgressReporter::Source {
 public:
  static constexpr ProgressReporter::Schedule kSchedule{
      .live = kSecond, .status = 30 * kSecond, .counters = 10 * kSecond};

  // `monitor` must outlive this object.
  explicit LoadProgress(RunMonitor* monitor) : monitor_(monitor) {}

  std::string LiveLine(double elapsed) override;
  std::string StatusLine(double elapsed) override;
  void ReportCounters(HadoopReporter& hadoop) override;

 private:
  RunMonitor* monitor_;
};

}  // namespace hammer::load
