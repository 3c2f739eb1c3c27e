#include "hammer/dark/constant_qps_schedule.h"

#include <algorithm>
#include <cmath>

#include "hammer/dark/cluster_shape.h"

namespace hammer::dark {

ConstantQpsSchedule::ConstantQpsSchedule(uint64_t seed, Nanos max_lag)
    : rng_(seed), max_lag_(max_lag < 0 ? 0 : max_lag) {}

MonoNanos ConstantQpsSchedule::PeriodStart(int64_t index) const {
  // From the anchor each time, so that rounding never accumulates over a long run.
  return anchor_ + std::llround(static_cast<double>(index) * interval_);
}

void ConstantQpsSchedule::StartAt(MonoNanos start) {
  anchor_ = start;
  index_ = 0;
  anchored_ = true;
  DrawDispatch();
}

void ConstantQpsSchedule::DrawDispatch() {
  MonoNanos start = PeriodStart(index_);
  Nanos length = PeriodStart(index_ + 1) - start;
  Nanos phase = static_cast<Nanos>(rng_.NextUniform() * static_cast<double>(length));
  dispatch_at_ = start + (phase < length ? phase : length - 1);
}

void ConstantQpsSchedule::SetRate(double per_second, MonoNanos now) {
  if (!(per_second > 0) || !std::isfinite(per_second)) per_second = 0;
  if (per_second > kMaxConstantQpsRate) per_second = kMaxConstantQpsRate;
  if (per_second == rate_) return;
  bool rescale = anchored_ && per_second > 0;
  MonoNanos start = rescale ? PeriodStart(index_) : 0;  // under the old interval
  double old_interval = interval_;
  rate_ = per_second;
  interval_ = per_second > 0 ? 1e9 / per_second : 0;
  if (rate_ == 0) {
    anchored_ = false;
    return;
  }
  if (!rescale) {
    if (running_) StartAt(now);
    return;
  }
  // Rescale the plan around `now`: the current period [start, start + old) becomes
  // [now + (start - now)·k, ...) with k = new/old, and so does its dispatch time. A dispatch
  // already overdue stays where it is (the caller is about to take it).
  double k = interval_ / old_interval;
  MonoNanos new_start = now + std::llround(static_cast<double>(start - now) * k);
  MonoNanos new_dispatch = dispatch_at_ < now
                               ? dispatch_at_
                               : now + std::llround(static_cast<double>(dispatch_at_ - now) * k);
  anchor_ = new_start;
  index_ = 0;
  MonoNanos end = PeriodStart(1);
  if (dispatch_at_ >= now) new_dispatch = std::clamp(new_dispatch, new_start, end - 1);
  dispatch_at_ = new_dispatch;
}

void ConstantQpsSchedule::Resume(MonoNanos now) {
  if (running_) return;
  running_ = true;
  if (rate_ <= 0) return;
  // A plan whose dispatch is still ahead is kept; one missed while paused starts afresh.
  if (!anchored_ || dispatch_at_ < now) StartAt(now);
}

void ConstantQpsSchedule::Advance(MonoNanos now) {
  int64_t next = index_ + 1;
  // Periods lying wholly before now - max_lag can only hold skipped dispatches: jump them in
  // one step instead of one by one.
  double horizon = static_cast<double>(now - max_lag_);
  double next_start = static_cast<double>(PeriodStart(next));
  if (next_start + interval_ <= horizon) {
    auto whole = static_cast<int64_t>(std::floor((horizon - next_start) / interval_));
    if (whole > 0) {
      skipped_ += static_cast<uint64_t>(whole);
      next += whole;
    }
  }
  index_ = next;
  // Re-anchor now and then so that index_ · interval_ stays well inside double precision.
  if (index_ >= (int64_t{1} << 30)) {
    anchor_ = PeriodStart(index_);
    index_ = 0;
  }
  DrawDispatch();
}

bool ConstantQpsSchedule::TakeDue(MonoNanos now) {
  if (!running_ || !anchored_) return false;
  while (dispatch_at_ <= now) {
    bool late = dispatch_at_ < now - max_lag_;
    Advance(now);
    if (!late) {
      ++taken_;
      return true;
    }
    ++skipped_;
  }
  return false;
}

void ConstantQpsSchedule::Reset() {
  running_ = false;
  anchored_ = false;
  index_ = 0;
}

}  // namespace hammer::dark
