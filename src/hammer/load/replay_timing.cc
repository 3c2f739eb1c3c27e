#include "hammer/load/replay_timing.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace hammer::load {

ReplayTiming::Second& ReplayTiming::Row(Nanos offset) {
  const size_t index =
      std::min<size_t>(static_cast<size_t>(std::max<Nanos>(0, offset) / kSecond), kMaxSeconds - 1);
  if (seconds_.size() <= index) seconds_.resize(index + 1);
  return seconds_[index];
}

void ReplayTiming::Sent(Nanos due, Nanos sent) {
  Second& scheduled = Row(due);
  ++scheduled.due;
  const Nanos behind = sent - due;
  if (behind > kLateThreshold) ++scheduled.late;
  scheduled.max_behind = std::max(scheduled.max_behind, behind);
  ++Row(sent).sent;
  if (last_due_ >= 0) {
    scheduled_gaps_.Record(std::max<Nanos>(0, due - last_due_));
    achieved_gaps_.Record(std::max<Nanos>(0, sent - last_sent_));
  }
  last_due_ = due;
  last_sent_ = sent;
}

void ReplayTiming::Merge(const ReplayTiming& other) {
  if (seconds_.size() < other.seconds_.size()) seconds_.resize(other.seconds_.size());
  for (size_t i = 0; i < other.seconds_.size(); ++i) {
    Second& row = seconds_[i];
    const Second& more = other.seconds_[i];
    row.due += more.due;
    row.sent += more.sent;
    row.late += more.late;
    row.max_behind = std::max(row.max_behind, more.max_behind);
  }
  scheduled_gaps_.Merge(other.scheduled_gaps_);
  achieved_gaps_.Merge(other.achieved_gaps_);
  if (last_due_ < 0) {
    last_due_ = other.last_due_;
    last_sent_ = other.last_sent_;
  }
}

uint64_t ReplayTiming::late() const {
  uint64_t n = 0;
  for (const Second& row : seconds_)
    n += row.late;
  return n;
}

Nanos ReplayTiming::max_behind() const {
  Nanos most = 0;
  for (const Second& row : seconds_)
    most = std::max(most, row.max_behind);
  return most;
}

double ReplayTiming::InterArrivalKs() const {
  const uint64_t n = scheduled_gaps_.total_count();
  const uint64_t m = achieved_gaps_.total_count();
  if (n == 0 || m == 0) return 0;
  // Both histograms have the same buckets: walk them in value order, the cumulative fractions
  // compared after each bucket.
  std::map<int64_t, std::pair<uint64_t, uint64_t>> buckets;
  scheduled_gaps_.ForEachBucket(
      [&](int64_t low, int64_t, uint64_t count) { buckets[low].first += count; });
  achieved_gaps_.ForEachBucket(
      [&](int64_t low, int64_t, uint64_t count) { buckets[low].second += count; });
  uint64_t a = 0;
  uint64_t b = 0;
  double most = 0;
  for (const auto& [low, counts] : buckets) {
    a += counts.first;
    b += counts.second;
    most = std::max(most, std::fabs(static_cast<double>(a) / static_cast<double>(n) -
                                    static_cast<double>(b) / static_cast<double>(m)));
  }
  return most;
}

}  // namespace hammer::load
