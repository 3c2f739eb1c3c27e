// OnceKeys: the keys of a KeyTable that have had one record each, kept as their bytes and that
// record instead of as rows.
//
// A load over a URL log sends most URLs once (a URL per item, user and query). A row for each
// (a hash node of about 240 bytes, its key in a block of its own, found behind a bucket and a
// chain of nodes) cost a run of 10,000 URLs sent once about 8 % of its req/s against a single
// URL. Here a key seen once is an entry of 32 bytes in one array, its bytes are appended to one
// buffer, and it is found by one probe of an open-addressed index of 4-byte slots (linear
// probing, at most half full): KeyTable makes a row only when the key comes again, or when it
// needs rows (key_table.h, RecordOnce).
//
// An entry's record is a success's latency (µs, >= 0), a failure, or kRow: the key has a row in
// the table. While KeyTable keeps keys here it marks its rows' keys so too: one probe tells a
// new key from a row's, and no key is both kept here and a row.
//
// A value type (entries refer to their bytes by offset); not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "hammer/base/failure.h"
#include "hammer/stats/key_stats.h"

namespace hammer::stats {

class OnceKeys {
 public:
  struct Entry {
    uint64_t hash;    // HashKey(key)
    uint64_t offset;  // of the key's bytes in the buffer
    uint32_t size;    // of the key
    int64_t record;
  };
  // Records (Entry::record).
  static constexpr int64_t kRow = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kUntypedFailure = kRow + 1;
  static int64_t FailureRecord(std::optional<Failure> type) {
    return type ? -1 - static_cast<int64_t>(*type) : kUntypedFailure;
  }
  // Records `record` (not kRow) into `stats`, as KeyStats::RecordSuccess or RecordFailure.
  static void RecordInto(int64_t record, KeyStats& stats);
  // What an entry costs as KeyTable's memory budget counts it: the entry, its share of the
  // index (two slots), its bytes.
  static uint64_t EntryBytes(std::string_view key) {
    return sizeof(Entry) + 2 * sizeof(uint32_t) + key.size();
  }

  // The entry of `key` (whose HashKey is `hash`), or null. Valid until the next Add.
  Entry* Find(std::string_view key, uint64_t hash);
  const Entry* Find(std::string_view key, uint64_t hash) const;
  // Adds `key`, which has no entry, with `record`.
  void Add(std::string_view key, uint64_t hash, int64_t record);
  // Marks a key's entry as having a row now.
  void MarkRow(Entry* entry) {
    if (entry->record != kRow) --once_;
    entry->record = kRow;
  }

  std::string_view Key(const Entry& entry) const {
    return std::string_view(bytes_.data() + entry.offset, entry.size);
  }
  // Every entry, in the order they were added (those marked kRow included).
  const std::vector<Entry>& entries() const { return entries_; }
  // The entries that are not kRow: keys with one record and no row.
  size_t once() const { return once_; }
  bool empty() const { return entries_.empty(); }
  // The sum of EntryBytes over the entries.
  uint64_t MemoryBytes() const {
    return entries_.size() * (sizeof(Entry) + 2 * sizeof(uint32_t)) + bytes_.size();
  }
  // Drops every entry and frees their memory.
  void Clear() { *this = OnceKeys(); }

 private:
  static constexpr size_t kFirstSlots = 1024;
  // Doubles the index, placing each entry again by its hash.
  void Grow();
  size_t Slot(uint64_t hash) const { return hash & (slots_.size() - 1); }
  // The first empty slot of `hash`'s probe (Add and Grow: at most half the slots are taken).
  size_t FreeSlot(uint64_t hash) const;

  std::vector<Entry> entries_;
  std::vector<uint32_t> slots_;  // an entry's index + 1, or 0 (empty); a power of two of them
  // The keys, one after the other (a vector: moving it never moves them, as a short string's
  // inline buffer would be, so views of them outlive a move of the table).
  std::vector<char> bytes_;
  size_t once_ = 0;
};

}  // namespace hammer::stats
