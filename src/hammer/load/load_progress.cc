#include "hammer/load/load_progress.h"

#include <cinttypes>
#include <cstdio>

namespace hammer::load {
namespace {

std::string Millis(int64_t micros) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fms", static_cast<double>(micros) / 1000.0);
  return buf;
}

}  // namespace

std::string LoadProgress::LiveLine(double elapsed) {
  RunMonitor::View view = monitor_->TakeView();
  uint64_t done = view.succeeded + view.failed;
  char line[256];
  std::snprintf(line, sizeof(line),
                "%6.1fs  %" PRIu64
                " requests  %.0f req/s  p50 %s  p99 %s  "
                "errors %" PRIu64 "  in flight %" PRIu64,
                elapsed, done, elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0,
                Millis(view.recent.ValueAtPercentile(50)).c_str(),
                Millis(view.recent.ValueAtPercentile(99)).c_str(), view.failed, view.in_flight);
  return line;
}

std::string LoadProgress::StatusLine(double elapsed) {
  RunMonitor::View view = monitor_->Totals();
  char line[128];
  std::snprintf(line, sizeof(line), "%" PRIu64 " requests, %" PRIu64 " failed, %.0f s",
                view.succeeded + view.failed, view.failed, elapsed);
  return line;
}

void LoadProgress::ReportCounters(HadoopReporter& hadoop) {
  hadoop.FailureCounters(monitor_->Totals().failures);
}

}  // namespace hammer::load
