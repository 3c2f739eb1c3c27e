// KeyTable's rows taken out, sorted by key: TakeRows, and TakeMergedRows with the key orders
// that SortKeys prepares (key_table.h).
#include <algorithm>

#include "hammer/base/prefault.h"
#include "hammer/stats/key_table.h"

namespace hammer::stats {

namespace {

// Asks for the cache lines of a row in its hash node (the link before it, the cached hash
// after it), so that a walk over rows spread over the heap overlaps its misses.
template <typename Row>
void PrefetchRow(const void* row) {
  constexpr size_t kCacheLine = 64;
  const char* bytes = reinterpret_cast<const char*>(row);
  for (size_t line = 0; line < sizeof(Row) + 2 * sizeof(void*); line += kCacheLine)
    __builtin_prefetch(bytes - sizeof(void*) + line);
}

}  // namespace

std::vector<std::pair<std::string, KeyStats>> KeyTable::TakeRows() {
  // Each node is taken out of the table once and its row moved once, in key order; the order
  // is computed on the keys alone (SortedKeyOrder), not on the rows.
  EndOnce();
  std::vector<Rows::node_type> nodes;
  std::vector<std::string_view> keys;
  nodes.reserve(rows_.size());
  keys.reserve(rows_.size());
  TakeNodes(rows_, nodes, &keys);
  std::vector<std::pair<std::string, KeyStats>> rows;
  MoveRows(nodes, {}, SortedKeyOrder(keys), rows);
  key_order_.valid = false;
  last_ = nullptr;
  other_ = nullptr;
  bytes_ = 0;
  ++generation_;
  return rows;
}

void KeyTable::TakeNodes(Rows& rows, std::vector<Rows::node_type>& nodes,
                         std::vector<std::string_view>* keys,
                         std::span<const Rows::value_type* const> listed) {
  // The nodes are spread over the heap (and were written by other threads, for a load's
  // tables): each is asked for kRowsAhead rows before it is taken out when their addresses
  // are listed, else while the one before it is (a list is read a node at a time); and each
  // key for SortedKeyOrder, which reads them next.
  constexpr size_t kRowsAhead = 16;
  if (listed.size() != rows.size()) listed = {};
  for (size_t n = 0; !rows.empty(); ++n) {
    const auto first = rows.begin();
    if (!listed.empty()) {
      if (n + kRowsAhead < listed.size()) PrefetchRow<Rows::value_type>(listed[n + kRowsAhead]);
    } else if (const auto next = std::next(first); next != rows.end()) {
      PrefetchRow<Rows::value_type>(&*next);
    }
    nodes.push_back(rows.extract(first));
    if (keys != nullptr) {
      keys->push_back(nodes.back().key());  // the string stays in the node until it is moved
      __builtin_prefetch(keys->back().data());
    }
  }
}

void KeyTable::MoveRows(std::vector<Rows::node_type>& nodes, std::span<const TakenKeys> taken,
                        const std::vector<size_t>& order,
                        std::vector<std::pair<std::string, KeyStats>>& rows) {
  rows.reserve(rows.size() + order.size());
  // A place's row: its node's index, or its table and kept key's entry.
  struct Place {
    size_t node = 0;
    const TakenKeys* table = nullptr;
    const OnceKeys::Entry* kept = nullptr;  // null: a node
  };
  auto locate = [&nodes, taken](size_t place) {
    if (taken.empty()) return Place{place};
    const TakenKeys* table = taken.data();
    while (place >= table->end)  // few tables: one per load thread
      ++table;
    const size_t at = place - table->begin;
    if (at < table->rows) return Place{table->first_node + at};
    return Place{nodes.size(), table, table->Kept(at - table->rows)};
  };
  // The rows are read in key order, all over the heap: each is asked for kRowsAhead rows before
  // it is moved (a kept key's entry twice as far ahead, its bytes then), so that the misses
  // overlap.
  constexpr size_t kRowsAhead = 8;
  for (size_t n = 0; n < order.size(); ++n) {
    if (n + 2 * kRowsAhead < order.size()) {
      if (const Place ahead = locate(order[n + 2 * kRowsAhead]); ahead.kept != nullptr) {
        __builtin_prefetch(ahead.kept);
      }
    }
    if (n + kRowsAhead < order.size()) {
      const Place ahead = locate(order[n + kRowsAhead]);
      if (ahead.kept == nullptr) {
        PrefetchRow<Rows::value_type>(&nodes[ahead.node].key());  // the row's first
      } else {
        __builtin_prefetch(ahead.table->once.Key(*ahead.kept).data());
      }
    }
    const Place place = locate(order[n]);
    if (place.kept != nullptr) {  // a key kept once: its row now
      rows.emplace_back(std::string(place.table->once.Key(*place.kept)), KeyStats());
      OnceKeys::RecordInto(place.kept->record, rows.back().second);
      continue;
    }
    Rows::node_type node = std::move(nodes[place.node]);  // freed here, while its memory is cached
    rows.emplace_back(std::move(node.key()), std::move(node.mapped()));
  }
}

void KeyTable::SortKeys() {
  if (folded_ || max_keys_ == 0) return;
  KeyOrder order;
  std::vector<std::string_view>& keys = order.keys;
  keys.reserve(size());
  order.listed.reserve(rows_.size());
  uint64_t requests = 0;
  for (const auto& row : rows_) {
    keys.push_back(row.first);
    order.listed.push_back(&row);
    order.bytes += RowBytes(row.first, row.second);
    requests += row.second.total();
  }
  ForEachOnce([&](std::string_view key, int64_t record) {
    keys.push_back(key);
    order.bytes += OnceRowBytes(key, record);  // as the rows they become
    ++requests;
  });
  // Keys requested more than twice each, on average: most likely a list cycled over, whose keys
  // are in every worker's table, which TakeMergedRows then merges row by row; the sort would
  // be wasted (10,000 keys: about 2 ms).
  if (requests > 2 * keys.size()) return;
  order.places = SortedKeyOrder(keys);
  // Sorted keys share what the first and the last share.
  if (!keys.empty()) order.common = SharedPrefixLength(order.Key(0), order.Key(keys.size() - 1));
  order.words.reserve(keys.size());
  for (size_t place : order.places)
    order.words.push_back(KeyWordAt(keys[place], order.common));
  order.valid = true;
  key_order_ = std::move(order);
}

std::vector<size_t> KeyTable::MergedKeyOrder(const std::vector<KeyTable>& tables, bool* distinct) {
  // Every key shares `common` bytes with the first key of the first table that has keys: its
  // own table's common prefix, and what the tables' first keys share.
  struct Run {
    const KeyOrder* order;
    size_t first_row;  // the index of the table's first row in the result
    size_t next = 0;
    std::vector<uint64_t> words;  // KeyWordAt(key, common), in the table's key order
  };
  std::vector<Run> runs;
  size_t rows = 0;
  for (const KeyTable& table : tables) {
    if (!table.key_order_.places.empty()) runs.push_back({&table.key_order_, rows, 0, {}});
    rows += table.size();
  }
  std::vector<size_t> merged;
  merged.reserve(rows);
  if (runs.empty()) return merged;
  const std::string_view first = runs.front().order->Key(0);
  size_t common = first.size();
  for (const Run& run : runs)
    common = SharedPrefixLength(first, run.order->Key(0), 0, std::min(common, run.order->common));
  // A table whose keys share more than `common` bytes has its words from further on: its words
  // at `common` are those shared bytes followed by the start of its own words (all its keys are
  // longer than their common prefix, or equal to it, with zeros past their end either way).
  for (Run& run : runs) {
    const KeyOrder& order = *run.order;
    const size_t shift = 8 * (order.common - common);
    if (shift == 0) continue;
    const uint64_t shared = KeyWordAt(order.Key(0), common);
    run.words.reserve(order.words.size());
    for (uint64_t word : order.words)
      run.words.push_back(shift >= 64 ? shared
                                      : (shared & ~(~uint64_t{0} >> shift)) | (word >> shift));
  }
  auto word = [](const Run& run) {
    return run.words.empty() ? run.order->words[run.next] : run.words[run.next];
  };
  // The smallest head of the runs, run after run (tables are few: one per load thread).
  while (merged.size() < rows) {
    Run* least = nullptr;
    for (Run& run : runs) {
      if (run.next == run.order->places.size()) continue;
      if (least == nullptr) {
        least = &run;
        continue;
      }
      const uint64_t a = word(run);
      const uint64_t b = word(*least);
      if (a > b) continue;
      if (a == b) {
        const std::string_view key = run.order->Key(run.next);
        const std::string_view least_key = least->order->Key(least->next);
        if (key == least_key) {
          *distinct = false;
          return merged;
        }
        if (key > least_key) continue;
      }
      least = &run;
    }
    merged.push_back(least->first_row + least->order->places[least->next]);
    ++least->next;
  }
  return merged;
}

std::vector<std::pair<std::string, KeyStats>> KeyTable::TakeMergedRows(std::vector<KeyTable> tables,
                                                                       size_t max_keys,
                                                                       uint64_t max_bytes,
                                                                       KeyFolding* folding) {
  std::vector<std::pair<std::string, KeyStats>> rows;
  if (TakeDisjointRows(tables, max_keys, max_bytes, &rows, folding)) return rows;
  KeyTable merged(max_keys, max_bytes);
  for (KeyTable& table : tables)
    merged.Merge(std::move(table));
  *folding = merged.Folding();
  return merged.TakeRows();
}

bool KeyTable::TakeDisjointRows(std::vector<KeyTable>& tables, size_t max_keys, uint64_t max_bytes,
                                std::vector<std::pair<std::string, KeyStats>>* rows,
                                KeyFolding* folding) {
  // Merging the tables into an empty one would only move their rows when none is folded, their
  // keys fit in max_keys (Merge's `fits`, at each table), no key is in two of them (nothing is
  // merged into a row), and their rows' bytes fit in max_bytes (no check of the merged table
  // finds more: its rows are theirs, as they are now). Before anything is moved: the folded
  // tables, the count, and a few keys of each table looked up in the tables before it (a list
  // cycled over is in every table: its first keys say so).
  constexpr size_t kKeysLookedUp = 16;
  if (max_keys == 0) max_bytes = 0;  // as KeyTable's constructor
  size_t keyed = 0;
  for (size_t t = 0; t < tables.size(); ++t) {
    if (tables[t].folded_) return false;
    keyed += tables[t].keyed_rows();
    std::vector<std::string_view> first_keys;
    for (auto row = tables[t].rows_.begin();
         row != tables[t].rows_.end() && first_keys.size() < kKeysLookedUp; ++row) {
      first_keys.push_back(row->first);
    }
    tables[t].ForEachOnce([&first_keys](std::string_view key, int64_t) {
      if (first_keys.size() < kKeysLookedUp) first_keys.push_back(key);
    });
    for (std::string_view key : first_keys) {
      for (size_t before = 0; before < t; ++before) {
        if (tables[before].HasKey(key)) return false;
      }
    }
  }
  if (max_keys > 0 && keyed > max_keys) return false;
  // Then every key (and the rows' bytes), still in place: from the tables' own key orders when
  // each has one (SortKeys), else listed here.
  const bool sorted = std::all_of(tables.begin(), tables.end(),
                                  [](const KeyTable& table) { return table.HasKeyOrder(); });
  std::vector<std::string_view> keys;
  uint64_t bytes = 0;
  size_t count = 0;
  for (const KeyTable& table : tables) {
    count += table.size();
    if (sorted) bytes += table.key_order_.bytes;
  }
  if (!sorted) {
    keys.reserve(count);
    for (const KeyTable& table : tables) {
      for (auto row = table.rows_.begin(); row != table.rows_.end(); ++row) {
        if (const auto next = std::next(row); next != table.rows_.end()) {
          PrefetchRow<Rows::value_type>(&*next);  // as TakeNodes
        }
        keys.push_back(row->first);
        __builtin_prefetch(row->first.data());
        if (max_bytes > 0) bytes += RowBytes(row->first, row->second);
      }
      table.ForEachOnce([&](std::string_view key, int64_t record) {
        keys.push_back(key);
        bytes += OnceRowBytes(key, record);
      });
    }
  }
  if (max_bytes > 0 && bytes > max_bytes) return false;
  // The rows' vector is made now, and its fresh pages touched on a second thread while the keys
  // are sorted here: at 10,000 rows 2 MB, about 500 page faults taken off this thread.
  rows->reserve(count);
  BackgroundPrefault prefault(rows->data(), count * sizeof(rows->front()));
  bool distinct = true;
  const std::vector<size_t> order =
      sorted ? MergedKeyOrder(tables, &distinct) : SortedKeyOrder(keys, &distinct);
  if (!distinct) return false;
  // Only moves left: the nodes in the order their keys were listed in.
  KeyFolding result;
  result.max_keys = max_keys;
  result.max_bytes = max_bytes;
  // The rows' nodes, and where each table's keys are (its kept keys stay in its OnceKeys).
  std::vector<Rows::node_type> nodes;
  size_t row_count = 0;
  for (const KeyTable& table : tables)
    row_count += table.rows_.size();
  nodes.reserve(row_count);
  std::vector<TakenKeys> taken(tables.size());
  size_t places = 0;
  for (size_t t = 0; t < tables.size(); ++t) {
    KeyTable& table = tables[t];
    if (table.other_ != nullptr) result.other_requests = table.other_->total();
    result.shed = result.shed || table.shed_;
    result.lost_requests += table.lost_requests_;
    TakenKeys& table_keys = taken[t];
    table_keys.begin = places;
    places += table.size();
    table_keys.end = places;
    table_keys.rows = table.rows_.size();
    table_keys.first_node = nodes.size();
    TakeNodes(table.rows_, nodes, nullptr,
              table.HasKeyOrder()
                  ? std::span<const Rows::value_type* const>(table.key_order_.listed)
                  : std::span<const Rows::value_type* const>());
    const std::vector<OnceKeys::Entry>& entries = table.once_.entries();
    if (table.once_.once() > 0 && table.once_.once() < entries.size()) {
      table_keys.kept.reserve(table.once_.once());
      for (size_t e = 0; e < entries.size(); ++e) {
        if (entries[e].record != OnceKeys::kRow)
          table_keys.kept.push_back(static_cast<uint32_t>(e));
      }
    }
    table_keys.once = std::move(table.once_);
    table = KeyTable(table.max_keys_, table.max_bytes_);
  }
  result.rows = keyed;
  result.distinct_keys = keyed;
  *folding = result;
  prefault.Wait();
  MoveRows(nodes, taken, order, *rows);
  return true;
}

}  // namespace hammer::stats
