#include "hammer/stats/once_keys.h"

#include <cassert>

namespace hammer::stats {

void OnceKeys::RecordInto(int64_t record, KeyStats& stats) {
  assert(record != kRow);
  if (record >= 0) {
    stats.RecordSuccess(record);
  } else if (record == kUntypedFailure) {
    stats.RecordFailure(std::nullopt);
  } else {
    stats.RecordFailure(static_cast<Failure>(-1 - record));
  }
}

const OnceKeys::Entry* OnceKeys::Find(std::string_view key, uint64_t hash) const {
  if (slots_.empty()) return nullptr;
  // At most half the slots are taken: an empty one ends every probe.
  for (size_t slot = Slot(hash);; slot = (slot + 1) & (slots_.size() - 1)) {
    const uint32_t taken = slots_[slot];
    if (taken == 0) return nullptr;
    const Entry& entry = entries_[taken - 1];
    if (entry.hash == hash && Key(entry) == key) return &entry;
  }
}

OnceKeys::Entry* OnceKeys::Find(std::string_view key, uint64_t hash) {
  return const_cast<Entry*>(static_cast<const OnceKeys&>(*this).Find(key, hash));
}

void OnceKeys::Add(std::string_view key, uint64_t hash, int64_t record) {
  if (2 * (entries_.size() + 1) > slots_.size()) Grow();
  const size_t slot = FreeSlot(hash);
  entries_.push_back({hash, bytes_.size(), static_cast<uint32_t>(key.size()), record});
  slots_[slot] = static_cast<uint32_t>(entries_.size());
  bytes_.insert(bytes_.end(), key.begin(), key.end());
  if (record != kRow) ++once_;
}

void OnceKeys::Grow() {
  slots_.assign(slots_.empty() ? kFirstSlots : 2 * slots_.size(), 0);
  for (size_t i = 0; i < entries_.size(); ++i)
    slots_[FreeSlot(entries_[i].hash)] = static_cast<uint32_t>(i + 1);
}

size_t OnceKeys::FreeSlot(uint64_t hash) const {
  size_t slot = Slot(hash);
  while (slots_[slot] != 0)
    slot = (slot + 1) & (slots_.size() - 1);
  return slot;
}

}  // namespace hammer::stats
