#include "hammer/load/abort_watch.h"

#include <algorithm>
#include <map>
#include <utility>

namespace hammer::load {

AbortWatch::AbortWatch(AbortOptions options, FleetAbort* fleet)
    : options_(std::move(options)),
      fleet_(fleet),
      keys_(options_.max_keys, options_.max_key_bytes) {
  for (const stats::Threshold& threshold : options_.thresholds) {
    if (!threshold.key.empty()) named_keys_.push_back(threshold.key);
  }
  std::sort(named_keys_.begin(), named_keys_.end());
  named_keys_.erase(std::unique(named_keys_.begin(), named_keys_.end()), named_keys_.end());
}

void AbortWatch::BeginRun(MonoNanos start, size_t key_reader) {
  start_ = start;
  key_reader_ = key_reader;
  next_check_ = start + kCheckEvery;
}

std::optional<AbortReason> AbortWatch::Judge(MonoNanos now, const stats::ThresholdInputs& inputs,
                                             bool fleet) const {
  if (now - start_ < options_.grace) return std::nullopt;
  for (const stats::ThresholdResult& result :
       stats::EvaluateThresholds(options_.thresholds, inputs)) {
    // An empty `actual`: nothing to judge yet (no request, or none for the key).
    if (result.passed || result.actual.empty()) continue;
    AbortReason reason;
    reason.threshold = result.text;
    reason.actual = result.actual;
    reason.message = result.message;
    reason.worker = options_.worker;
    reason.fleet = fleet;
    return reason;
  }
  return std::nullopt;
}

FleetPartial AbortWatch::OwnFigures(MonoNanos now) const {
  FleetPartial own;
  own.worker = options_.worker;
  own.elapsed_ms = std::max<Nanos>(0, now - start_ - options_.warmup) / kMillisecond;
  keys_.ForEachSorted([&](std::string_view key, const stats::KeyStats& stats) {
    own.total.Merge(stats);
    if (std::binary_search(named_keys_.begin(), named_keys_.end(), key)) {
      own.keys.emplace_back(std::string(key), stats);
    }
  });
  return own;
}

void AbortWatch::Check(MonoNanos now) {
  FleetPartial merged = OwnFigures(now);
  if (fleet_ != nullptr) {
    fleet_->Publish(EncodeFleetPartial(merged));
    // Keys by name, so that the same key of several workers merges into one row.
    std::map<std::string, stats::KeyStats> keys;
    for (auto& [key, stats] : merged.keys)
      keys[key] = std::move(stats);
    for (const auto& [name, payload] : fleet_->Peers()) {
      FleetPartial peer;
      if (!ParseFleetPartial(payload, &peer).ok()) continue;  // not a hammer worker's node
      merged.total.Merge(peer.total);
      merged.elapsed_ms = std::max(merged.elapsed_ms, peer.elapsed_ms);
      for (const auto& [key, stats] : peer.keys)
        keys[key].Merge(stats);
    }
    merged.keys.assign(std::make_move_iterator(keys.begin()), std::make_move_iterator(keys.end()));
  }
  const stats::ThresholdInputs inputs{merged.total, static_cast<double>(merged.elapsed_ms) / 1000.0,
                                      merged.keys};
  reason_ = Judge(now, inputs, fleet_ != nullptr);
  if (reason_ && fleet_ != nullptr) fleet_->RequestAbort(*reason_);
}

const AbortReason* AbortWatch::Update(MonoNanos now, RunMonitor& monitor) {
  for (stats::KeyTable& interval : monitor.TakeKeyIntervals(key_reader_))
    keys_.Merge(std::move(interval));
  if (reason_) return &*reason_;
  if (fleet_ != nullptr) {
    // Any worker's abort, as soon as it is seen.
    if (std::optional<AbortReason> seen = fleet_->abort()) {
      reason_ = std::move(seen);
      return &*reason_;
    }
  }
  if (now >= next_check_) {
    next_check_ = now + kCheckEvery;
    Check(now);
  }
  return reason_ ? &*reason_ : nullptr;
}

}  // namespace hammer::load
