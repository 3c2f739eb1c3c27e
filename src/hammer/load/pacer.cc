#include "hammer/load/pacer.h"

#include <algorithm>
#include <cmath>

namespace hammer::load {

OpenLoopPacer::OpenLoopPacer(MonoNanos start, double rate, int index, int threads)
    : start_(start),
      millirate_(std::max<int64_t>(1, std::llround(rate * 1000.0))),
      index_(static_cast<uint64_t>(index)),
      threads_(static_cast<uint64_t>(threads)) {}

OpenLoopPacer::OpenLoopPacer(MonoNanos start, const RateSchedule* schedule, int index, int threads)
    : start_(start),
      millirate_(1),
      schedule_(schedule),
      index_(static_cast<uint64_t>(index)),
      threads_(static_cast<uint64_t>(threads)) {}

MonoNanos OpenLoopPacer::DueTime(uint64_t k) const {
  if (schedule_ != nullptr) {
    Nanos t = schedule_->DueTime(GlobalIndex(k));
    return t < 0 ? kNever : start_ + t;
  }
  // n / (millirate / 1000) seconds = n * 1e12 / millirate nanoseconds.
  __int128 n = static_cast<__int128>(GlobalIndex(k));
  return start_ + static_cast<MonoNanos>(n * 1'000'000'000'000LL / millirate_);
}

uint64_t OpenLoopPacer::DueCount(MonoNanos now) const {
  if (now < start_) return 0;
  if (schedule_ != nullptr) {
    uint64_t due_global = schedule_->DueCount(now - start_);
    if (due_global <= index_) return 0;
    return (due_global - index_ + threads_ - 1) / threads_;
  }
  // n is due iff floor(n * 1e12 / m) <= e (e = now - start), iff n * 1e12 < (e + 1) * m, so
  // the number of due n is ceil((e + 1) * m / 1e12). This thread owns n = index, index+T, ...
  constexpr __int128 kScale = 1'000'000'000'000LL;
  __int128 e = now - start_;
  uint64_t due_global = static_cast<uint64_t>(((e + 1) * millirate_ + kScale - 1) / kScale);
  if (due_global <= index_) return 0;
  return (due_global - index_ + threads_ - 1) / threads_;
}

uint64_t ShareOf(uint64_t total, int parts, int i) {
  uint64_t p = static_cast<uint64_t>(parts);
  uint64_t share = total / p;
  return share + (static_cast<uint64_t>(i) < total % p ? 1 : 0);
}

}  // namespace hammer::load
