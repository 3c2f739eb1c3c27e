// KeyTable: the per-key rows of a report, bounded whatever the variety of the input.
//
// Real traffic has a URL per item, user and query: a day of it holds millions of distinct
// URLs, and a row of statistics for each would not fit in memory. A KeyTable keeps at most
// `max_keys` rows (plus one "(other)" row):
//   1. while the input has at most max_keys distinct keys, each key has its own row;
//   2. the first key beyond that folds the table: every row moves to its key's template
//      (key_template.h: "http://h/item/81237?ref=x" -> "http://h/item/{id}?ref={id}"), and
//      from then on each key's figures go to its template's row;
//   3. a template that finds the table full (more than max_keys templates) goes to "(other)".
//      Folding never needs that: max_keys rows have at most max_keys templates.
// Figures are only ever merged, never dropped, so the rows always add up to the total. A
// DistinctCounter estimates how many distinct keys were seen, for the sentence that says
// what was folded (Folding::Describe).
//
// Rows also have a byte budget, `max_bytes` (--max-key-memory): a list of 10,000 URLs
// replayed for hours stays under max_keys, but each row's histogram grows to tens of
// kilobytes. The rows' bytes are their histograms' allocated_bytes() plus an estimate of
// each row's fixed cost (hash node, key, KeyStats). When they pass the budget:
//   4. a table not folded yet folds as in 2. (rows merge exactly into their templates);
//   5. a folded table still over it merges its quietest rows (fewest requests) into
//      "(other)" until it is under 3/4 of the budget, so that the next check does not fire at
//      once. A key whose row went so keeps coming to a new row of its template.
// The budget is checked by CheckMemory(), which Recorded() calls every 1024 records for callers
// that record through StatsFor pointers (it costs a few instructions:
// Histogram::ThreadAllocatedBytes() bounds the growth since the rows were last counted, and
// they are counted again only when that bound passes the budget); Add and Merge check it
// themselves. It holds between checks up to what those records allocated (8 KiB a page).
//
// Callers that keep pointers from StatsFor (a load worker caches one per prepared request)
// must look again when generation() has changed: folding, CheckMemory and Merge move rows.
// max_keys 0 means no bound (the Hadoop reducer's exact output), and then no memory bound
// either: exact rows cannot be folded. max_bytes 0 means no memory bound. A value type; not
// thread-safe (a load worker keeps one per thread, merged at the end).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hammer/stats/distinct_counter.h"
#include "hammer/stats/key_hash.h"
#include "hammer/stats/key_order.h"
#include "hammer/stats/key_stats.h"
#include "hammer/stats/key_template.h"

namespace hammer::stats {

// The row of keys that fitted in no other.
inline constexpr std::string_view kOtherKey = "(other)";
// --max-key-memory's default (hammer load and hammer stats): the bytes of a process's rows.
inline constexpr std::string_view kDefaultMaxKeyMemory = "256MiB";
inline constexpr uint64_t kDefaultMaxKeyBytes = uint64_t{256} << 20;

// What a KeyTable did with the keys it was given.
struct KeyFolding {
  size_t max_keys = 0;
  uint64_t max_bytes = 0;  // --max-key-memory; 0: no memory bound
  bool folded = false;
  bool for_memory = false;     // folded because the rows passed max_bytes, not max_keys
  bool shed = false;           // the quietest rows went to "(other)" to stay within max_bytes
  uint64_t distinct_keys = 0;  // exact when !folded; else estimated (DistinctCounter)
  uint64_t rows = 0;           // rows besides "(other)"
  uint64_t other_requests = 0;
  uint64_t lost_requests = 0;  // figures no row could take without overflowing (hostile input)

  // One sentence for summaries and reports, empty when nothing was folded, e.g. "about
  // 1000000 distinct keys exceeded --max-keys 10000: grouped by path template into 3 rows,
  // and 12 requests in (other)", or "the statistics of about 10000 distinct keys exceeded
  // --max-key-memory 256MiB: grouped by path template into 1 row".
  std::string Describe() const;
  // The flag a reader raises for more rows: "--max-keys" or "--max-key-memory".
  std::string_view Limit() const { return for_memory ? "--max-key-memory" : "--max-keys"; }
};

class KeyTable {
 public:
  explicit KeyTable(size_t max_keys = 0, uint64_t max_bytes = 0)
      : max_keys_(max_keys), max_bytes_(max_keys > 0 ? max_bytes : 0) {}

  // The row that `key`'s figures go to (created empty if needed). Valid until generation()
  // changes.
  KeyStats* StatsFor(std::string_view key);
  // StatsFor(key)->Merge(stats); when that would overflow a counter of the row (hostile input
  // only), into "(other)" instead, or else counted in KeyFolding::lost_requests.
  void Add(std::string_view key, const KeyStats& stats);
  // Adds every row of `other` (a worker's table) as Add would (busiest first when the union
  // may not fit in max_keys), and its distinct keys. The result is folded when either table was, or
  // when the union does not fit (in max_keys or in max_bytes). The rvalue form takes each row of
  // `other` out once it is added, moving its histogram into a new row instead of copying it, so
  // that the tables together hold no more than they did; `other` is left empty.
  void Merge(const KeyTable& other);
  void Merge(KeyTable&& other);

  // Folds or sheds rows (4. and 5. above) when the rows' bytes passed max_bytes since the last
  // check. Cheap unless they may have (Recorded() calls it every kRecordsPerCheck records).
  void CheckMemory() {
    if (max_bytes_ == 0) return;
    const uint64_t allocated = Histogram::ThreadAllocatedBytes();
    if (allocated < growth_mark_ || bytes_ + (allocated - growth_mark_) > max_bytes_) FitMemory();
  }
  // Callers that record through StatsFor pointers call this once a record: every
  // kRecordsPerCheck records it calls CheckMemory. A record grows a row by a histogram page
  // (8 KiB) at most, a merged partial by a whole histogram (184 KiB), so between checks the
  // rows pass the budget by at most 8 MiB of records (184 MiB of partials).
  void Recorded() {
    if (--until_check_ == 0) {
      until_check_ = kRecordsPerCheck;
      CheckMemory();
    }
  }
  // The rows' bytes, counted now (every histogram visited), as the budget counts them.
  uint64_t MemoryBytes() const;

  uint64_t generation() const { return generation_; }
  size_t size() const { return rows_.size(); }
  bool folded() const { return folded_; }
  KeyFolding Folding() const;

  // Every row, sorted by key (bytewise), leaving the table empty.
  std::vector<std::pair<std::string, KeyStats>> TakeRows();
  // Calls f(key, stats) for every row in key order (bytewise), without moving the rows.
  template <typename F>
  void ForEachSorted(F&& f) const {
    std::vector<std::string_view> keys;
    std::vector<const KeyStats*> stats;
    keys.reserve(rows_.size());
    stats.reserve(rows_.size());
    for (const auto& row : rows_) {
      keys.push_back(row.first);
      stats.push_back(&row.second);
    }
    for (size_t i : SortedKeyOrder(keys))
      f(keys[i], *stats[i]);
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return HashKey(key); }
  };
  using Rows = std::unordered_map<std::string, KeyStats, Hash, std::equal_to<>>;

  void Fold(bool for_memory);
  // CheckMemory's slow path: counts the rows' bytes, then folds and sheds if they are over.
  void FitMemory();
  // Merges the quietest rows into "(other)" until the rows' bytes are under 3/4 of max_bytes_.
  void Shed();
  // Sets bytes_ to MemoryBytes(), as of Histogram::ThreadAllocatedBytes() now.
  void Recount();
  // A row's bytes as the budget counts them.
  static uint64_t RowBytes(std::string_view key, const KeyStats& stats);
  // Merge's loop; erases each row of `other` from `erase_from` (its rows, or null) once merged.
  void MergeRows(const KeyTable& other, Rows* erase_from);
  // StatsFor; `new_key`: a key of the input (counted as distinct), not a row of another table.
  KeyStats* RowFor(std::string_view key, bool new_key);
  // The row for a key not in the table.
  KeyStats* NewRow(std::string_view key, bool new_key);
  // The row of a key once the table is folded: its template's (not counted as distinct here).
  KeyStats* TemplateRow(std::string_view key);
  KeyStats* Other();
  KeyStats* Insert(std::string_view key);
  // Merges `stats` into `row`, or into "(other)" if `row` would overflow.
  void MergeInto(KeyStats* row, const KeyStats& stats);
  // MergeInto for figures taken out of another table: an empty row takes them whole.
  void Absorb(KeyStats* row, KeyStats&& stats);
  // Merge's path while the union's keys fit in max_keys: each node of `from` moves over whole
  // (key, figures and histogram: nothing allocated or copied) unless its key has a row here,
  // until CheckMemory folds the table, if it does; the nodes left stay in `from`.
  void MoveNodes(Rows* from);
  // The rows besides "(other)".
  size_t keyed_rows() const { return rows_.size() - (other_ != nullptr ? 1 : 0); }

  size_t max_keys_;
  uint64_t max_bytes_;                // 0: no memory bound (always so when max_keys_ is 0)
  Rows rows_;                         // includes "(other)" once it exists
  Rows::value_type* last_ = nullptr;  // the row found last (consecutive lines share keys)
  KeyStats* other_ = nullptr;
  bool folded_ = false;
  bool folded_for_memory_ = false;
  bool shed_ = false;
  // The rows' bytes when Histogram::ThreadAllocatedBytes() was growth_mark_, plus the fixed
  // cost of the rows inserted since: with the histograms' growth since the mark, a bound.
  uint64_t bytes_ = 0;
  uint64_t growth_mark_ = 0;
  static constexpr uint32_t kRecordsPerCheck = 1024;
  static constexpr size_t kRowsBeforeReserve = 256;
  static constexpr size_t kMaxReservedRows = 65536;  // buckets of 8 bytes: 512 KiB
  uint32_t until_check_ = 1;  // Recorded() calls until the next CheckMemory()
  uint64_t lost_requests_ = 0;
  uint64_t generation_ = 0;
  DistinctCounter distinct_;
  // TemplateRow's and Fold's: a buffer and a cache, not part of the value.
  KeyTemplater templater_;
  std::string template_scratch_;
};

}  // namespace hammer::stats
