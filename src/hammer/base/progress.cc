#include "hammer/base/progress.h"

#include <cstdio>
#include <utility>

namespace hammer {
namespace {

// Back to the start of the line and clear it (ANSI "erase in line").
constexpr std::string_view kClearLine = "\r\x1b[K";

}  // namespace

ProgressReporter::ProgressReporter(std::string command, const ProgressOptions& options,
                                   Schedule schedule, Source* source)
    : command_(std::move(command)),
      options_(options),
      schedule_(schedule),
      source_(source),
      hadoop_(options.hadoop_reporter) {}

void ProgressReporter::Begin(MonoNanos start) {
  start_ = start;
  next_live_ = start + schedule_.live;
  next_counters_ = start + schedule_.counters;
  next_status_ = start + schedule_.status;
}

void ProgressReporter::Poll(MonoNanos now) {
  const double elapsed = static_cast<double>(now - start_) / kSecond;
  if (options_.live_line && schedule_.live > 0 && now >= next_live_) {
    std::string line(kClearLine);
    line += source_->LiveLine(elapsed);
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    next_live_ = now + schedule_.live;
  }
  if (hadoop_.enabled() && schedule_.counters > 0 && now >= next_counters_) {
    source_->ReportCounters(hadoop_);
    next_counters_ = now + schedule_.counters;
  }
  if (hadoop_.enabled() && schedule_.status > 0 && now >= next_status_) {
    Status(source_->StatusLine(elapsed));
    next_status_ = now + schedule_.status;
  }
}

void ProgressReporter::End() {
  if (options_.live_line) std::fputs(std::string(kClearLine).c_str(), stderr);
}

void ProgressReporter::Say(std::string_view line) {
  std::string text(options_.live_line ? kClearLine : "");
  text.append(line).append("\n");
  std::fputs(text.c_str(), stderr);
}

void ProgressReporter::Status(std::string_view message) {
  std::string line = command_;
  if (!options_.label.empty()) line.append(" (").append(options_.label).append(")");
  line.append(": ").append(message);
  hadoop_.Status(line);
}

}  // namespace hammer
