#include "hammer/stats/reducer.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <utility>

#include "hammer/stats/partial.h"

namespace hammer::stats {

Reducer::Reducer(Options options, KeySink* sink, Timeline* timeline)
    : options_(std::move(options)), sink_(sink), timeline_(timeline) {
  if (options_.order == Order::kUnsorted || options_.max_keys > 0 ||
      !options_.key_patterns.empty()) {
    map_ = std::make_unique<KeyTable>(options_.max_keys, options_.max_key_bytes);
    unsorted_ = true;
    window_open_ = false;
  }
}

Reducer::~Reducer() = default;

void Reducer::Malformed(std::string_view reason) {
  if (malformed_++ == 0) {
    first_malformed_line_ = lines_;
    first_malformed_reason_ = reason;
  }
}

void Reducer::OnOverlongLine() {
  ++lines_;
  Malformed("line longer than " + std::to_string(kMaxLineBytes) + " bytes");
}

template <typename Fits>
KeyStats* Reducer::StatsFor(std::string_view key, Fits fits) {
  if (map_) {
    map_->Recorded();  // may fold or shed rows
    // A new row is empty, so it always fits.
    KeyStats* stats = map_->StatsFor(key);
    return fits(*stats) ? stats : nullptr;
  }
  if (has_current_) {
    int order = key.compare(current_key_);
    if (order == 0) return fits(current_) ? &current_ : nullptr;
    if (order < 0) {
      SwitchToMap();
      return StatsFor(key, fits);
    }
    CompleteCurrent();
  }
  has_current_ = true;
  current_key_.assign(key);
  current_ = KeyStats();
  return &current_;
}

void Reducer::OnLine(std::string_view line) {
  ++lines_;
  ParsedRecord record = ParseRecordLine(line);
  std::string renamed;
  std::string_view key = record.key;
  if (!options_.key_patterns.empty() && record.kind != RecordKind::kMalformed) {
    renamed = options_.key_patterns.Rename(std::string(record.key));
    key = renamed;
  }
  switch (record.kind) {
    case RecordKind::kMalformed:
      Malformed(record.error);
      return;
    case RecordKind::kFailure:
      StatsFor(key, [](const KeyStats&) { return true; })->RecordFailure(record.failure);
      if (record.has_epoch_ms && timeline_ != nullptr) AddToTimeline(record, key);
      return;
    case RecordKind::kSuccess: {
      int64_t micros = record.micros;
      KeyStats* stats =
          StatsFor(key, [micros](const KeyStats& s) { return s.CanRecordSuccess(micros); });
      if (stats == nullptr) return Malformed("sum of the key's times overflows");
      stats->RecordSuccess(micros);
      if (record.has_epoch_ms && timeline_ != nullptr) AddToTimeline(record, key);
      return;
    }
    case RecordKind::kPartial: {
      KeyStats partial;
      if (Status status = ParsePartialFields(record.partial, &partial); !status.ok()) {
        return Malformed(status.message());
      }
      KeyStats* stats =
          StatsFor(key, [&partial](const KeyStats& s) { return s.CanMerge(partial); });
      if (stats == nullptr) return Malformed("the key's counters overflow");
      stats->Merge(partial);
      return;
    }
  }
}

size_t Reducer::OnLines(std::string_view lines) {
  if (!has_current_ || map_) return 0;
  const char* p = lines.data();
  const char* const end = p + lines.size();
  const char* const key = current_key_.data();
  const size_t key_size = current_key_.size();
  KeyStats& stats = current_;
  uint64_t taken = 0;
  // Each line: the current key, TAB, then '\n' (a failure) or 1-12 digits '.' 6 digits '\n'.
  // Any other line ends the run and goes to OnLine. `lines` ends with '\n', so the digit loops
  // stop inside it.
  while (static_cast<size_t>(end - p) > key_size + 1 && p[key_size] == '\t' &&
         std::memcmp(p, key, key_size) == 0) {
    const char* v = p + key_size + 1;
    if (*v == '\n') {
      stats.RecordFailure(std::nullopt);
    } else {
      int64_t whole = 0;
      const char* digits = v;
      while (static_cast<unsigned>(*v - '0') < 10 && v - digits < 12)
        whole = whole * 10 + (*v++ - '0');
      if (v == digits || *v != '.') break;
      int64_t fraction = 0;
      for (int i = 1; i <= 6; ++i) {
        unsigned d = static_cast<unsigned>(v[i] - '0');
        if (d >= 10) {
          fraction = -1;
          break;
        }
        fraction = fraction * 10 + d;
      }
      v += 7;
      if (fraction < 0 || *v != '\n') break;
      int64_t micros = whole * 1000000 + fraction;
      if (!stats.CanRecordSuccess(micros)) break;
      stats.RecordSuccess(micros);
    }
    p = v + 1;
    ++taken;
  }
  lines_ += taken;
  return static_cast<size_t>(p - lines.data());
}

void Reducer::AddToTimeline(const ParsedRecord& record, std::string_view key) {
  if (options_.timeline_key && key != *options_.timeline_key) return;
  if (record.kind == RecordKind::kSuccess) {
    timeline_->AddSuccess(record.epoch_ms, record.micros);
  } else {
    timeline_->AddFailure(record.epoch_ms);
  }
}

void Reducer::CompleteCurrent() {
  has_current_ = false;
  if (!window_open_) {
    sink_->OnKey(current_key_, current_);
    return;
  }
  held_bytes_ += current_key_.size() + sizeof(KeyStats) + current_.histogram.allocated_bytes();
  held_.emplace_back(std::move(current_key_), std::move(current_));
  current_key_.clear();
  if (held_.size() >= options_.window_keys || held_bytes_ >= options_.window_bytes) CloseWindow();
}

void Reducer::CloseWindow() {
  for (const auto& [key, stats] : held_)
    sink_->OnKey(key, stats);
  held_ = {};
  held_bytes_ = 0;
  window_open_ = false;
}

void Reducer::SwitchToMap() {
  if (!window_open_) late_unsorted_line_ = lines_;
  unsorted_ = true;
  map_ = std::make_unique<KeyTable>(options_.max_keys, options_.max_key_bytes);
  for (auto& [key, stats] : held_)
    map_->Add(key, stats);
  held_ = {};
  held_bytes_ = 0;
  window_open_ = false;
  if (has_current_) {
    map_->Add(current_key_, current_);
    has_current_ = false;
  }
}

void Reducer::HoldEveryKey() {
  if (!map_) SwitchToMap();
}

void Reducer::Finish() {
  if (map_) {
    key_folding_ = map_->Folding();
    map_->ForEachSorted(
        [this](std::string_view key, const KeyStats& stats) { sink_->OnKey(key, stats); });
    map_ = std::make_unique<KeyTable>(options_.max_keys, options_.max_key_bytes);
    return;
  }
  if (has_current_) CompleteCurrent();
  CloseWindow();
}

}  // namespace hammer::stats
