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
// Callers that keep pointers from StatsFor (a load worker caches one per prepared request)
// must look again when generation() has changed: folding and Merge move every row.
// max_keys 0 means no bound (the Hadoop reducer's exact output). A value type; not
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
#include "hammer/stats/key_stats.h"
#include "hammer/stats/key_template.h"

namespace hammer::stats {

// The row of keys that fitted in no other.
inline constexpr std::string_view kOtherKey = "(other)";

// What a KeyTable did with the keys it was given.
struct KeyFolding {
  size_t max_keys = 0;
  bool folded = false;
  uint64_t distinct_keys = 0;  // exact when !folded; else estimated (DistinctCounter)
  uint64_t rows = 0;           // rows besides "(other)"
  uint64_t other_requests = 0;
  uint64_t lost_requests = 0;  // figures no row could take without overflowing (hostile input)

  // One sentence for summaries and reports, empty when nothing was folded, e.g. "about
  // 1000000 distinct keys exceeded --max-keys 10000: grouped by path template into 3 rows,
  // and 12 requests in (other)".
  std::string Describe() const;
};

class KeyTable {
 public:
  explicit KeyTable(size_t max_keys = 0) : max_keys_(max_keys) {}

  // The row that `key`'s figures go to (created empty if needed). Valid until generation()
  // changes.
  KeyStats* StatsFor(std::string_view key);
  // StatsFor(key)->Merge(stats); when that would overflow a counter of the row (hostile input
  // only), into "(other)" instead, or else counted in KeyFolding::lost_requests.
  void Add(std::string_view key, const KeyStats& stats);
  // Adds every row of `other` (a worker's table) as Add would, busiest first, and its distinct
  // keys. The result is folded when either table was, or when the union does not fit.
  void Merge(const KeyTable& other);

  uint64_t generation() const { return generation_; }
  size_t size() const { return rows_.size(); }
  bool folded() const { return folded_; }
  KeyFolding Folding() const;

  // Every row, sorted by key (bytewise), leaving the table empty.
  std::vector<std::pair<std::string, KeyStats>> TakeRows();
  // Calls f(key, stats) for every row in key order (bytewise), without moving the rows.
  template <typename F>
  void ForEachSorted(F&& f) const {
    std::vector<const Rows::value_type*> sorted;
    sorted.reserve(rows_.size());
    for (const auto& row : rows_)
      sorted.push_back(&row);
    std::sort(sorted.begin(), sorted.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
    for (const auto* row : sorted)
      f(std::string_view(row->first), row->second);
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>()(key); }
  };
  using Rows = std::unordered_map<std::string, KeyStats, Hash, std::equal_to<>>;

  void Fold();
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
  size_t keyed_rows() const { return rows_.size() - (other_ != nullptr ? 1 : 0); }

  size_t max_keys_;
  Rows rows_;                         // includes "(other)" once it exists
  Rows::value_type* last_ = nullptr;  // the row found last (consecutive lines share keys)
  KeyStats* other_ = nullptr;
  bool folded_ = false;
  uint64_t lost_requests_ = 0;
  uint64_t generation_ = 0;
  DistinctCounter distinct_;
  // TemplateRow's and Fold's: a buffer and a cache, not part of the value.
  KeyTemplater templater_;
  std::string template_scratch_;
};

}  // namespace hammer::stats
