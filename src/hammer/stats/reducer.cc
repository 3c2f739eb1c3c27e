#include "hammer/stats/reducer.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "hammer/stats/partial.h"
#include "hammer/stats/record.h"

namespace hammer {

// Keys of unsorted input. Lookups take string_views (no allocation per line) and remember the
// last entry found, since consecutive lines often share a key.
class Reducer::KeyMap {
 public:
  KeyStats* Find(std::string_view key) {
    if (last_ != nullptr && last_->first == key) return &last_->second;
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    last_ = &*it;
    return &it->second;
  }

  KeyStats* Insert(std::string_view key) {
    auto it = map_.try_emplace(std::string(key)).first;
    last_ = &*it;  // element addresses survive rehashing
    return &it->second;
  }

  void EmitSorted(KeySink* sink) {
    std::vector<const Entry*> entries;
    entries.reserve(map_.size());
    for (const Entry& entry : map_)
      entries.push_back(&entry);
    std::sort(entries.begin(), entries.end(),
              [](const Entry* a, const Entry* b) { return a->first < b->first; });
    for (const Entry* entry : entries)
      sink->OnKey(entry->first, entry->second);
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>()(key); }
  };
  using Map = std::unordered_map<std::string, KeyStats, Hash, std::equal_to<>>;
  using Entry = Map::value_type;

  Map map_;
  Entry* last_ = nullptr;
};

Reducer::Reducer(Options options, KeySink* sink) : options_(options), sink_(sink) {
  if (options_.order == Order::kUnsorted) {
    map_ = std::make_unique<KeyMap>();
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
    if (KeyStats* stats = map_->Find(key)) return fits(*stats) ? stats : nullptr;
    return map_->Insert(key);
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
  switch (record.kind) {
    case RecordKind::kMalformed:
      Malformed(record.error);
      return;
    case RecordKind::kFailure:
      StatsFor(record.key, [](const KeyStats&) { return true; })->RecordFailure(std::nullopt);
      return;
    case RecordKind::kSuccess: {
      int64_t micros = record.micros;
      KeyStats* stats =
          StatsFor(record.key, [micros](const KeyStats& s) { return s.CanRecordSuccess(micros); });
      if (stats == nullptr) return Malformed("sum of the key's times overflows");
      stats->RecordSuccess(micros);
      return;
    }
    case RecordKind::kPartial: {
      KeyStats partial;
      if (Status status = ParsePartialFields(record.partial, &partial); !status.ok()) {
        return Malformed(status.message());
      }
      KeyStats* stats =
          StatsFor(record.key, [&partial](const KeyStats& s) { return s.CanMerge(partial); });
      if (stats == nullptr) return Malformed("the key's counters overflow");
      stats->Merge(partial);
      return;
    }
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
  map_ = std::make_unique<KeyMap>();
  for (auto& [key, stats] : held_)
    *map_->Insert(key) = std::move(stats);
  held_ = {};
  held_bytes_ = 0;
  window_open_ = false;
  if (has_current_) {
    *map_->Insert(current_key_) = std::move(current_);
    has_current_ = false;
  }
}

void Reducer::Finish() {
  if (map_) {
    map_->EmitSorted(sink_);
    map_ = std::make_unique<KeyMap>();
    return;
  }
  if (has_current_) CompleteCurrent();
  CloseWindow();
}

}  // namespace hammer
