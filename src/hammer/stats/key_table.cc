#include "hammer/stats/key_table.h"

#include <algorithm>

#include "hammer/base/byte_size.h"
#include "hammer/base/prefault.h"
#include "hammer/stats/key_template.h"

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

std::string KeyFolding::Describe() const {
  if (!folded) return "";
  const std::string memory = "--max-key-memory " + FormatByteSize(max_bytes);
  std::string text = for_memory
                         ? "the statistics of about " + std::to_string(distinct_keys) +
                               " distinct keys exceeded " + memory
                         : "about " + std::to_string(distinct_keys) +
                               " distinct keys exceeded --max-keys " + std::to_string(max_keys);
  text +=
      ": grouped by path template into " + std::to_string(rows) + (rows == 1 ? " row" : " rows");
  if (other_requests > 0) {
    text += ", and " + std::to_string(other_requests) +
            (other_requests == 1 ? " request" : " requests");
    if (!shed) {
      text += " of keys beyond that in " + std::string(kOtherKey);
    } else if (for_memory) {
      text += " of the quietest rows in " + std::string(kOtherKey) + " to stay within it";
    } else {
      text += " of keys beyond that and of the quietest rows in " + std::string(kOtherKey) +
              " to stay within " + memory;
    }
  }
  if (lost_requests > 0) {
    text += "; " + std::to_string(lost_requests) + " requests left out (their sums overflow)";
  }
  return text;
}

KeyStats* KeyTable::StatsFor(std::string_view key) {
  key_order_.valid = false;  // the row may grow (SortKeys counted its bytes)
  return RowFor(key, /*new_key=*/true);
}

KeyStats* KeyTable::RowFor(std::string_view key, bool new_key) {
  if (last_ != nullptr && last_->first.size() == key.size() && last_->first == key) {
    return &last_->second;
  }
  if (folded_ && new_key && key != kOtherKey) {
    distinct_.Add(key);
    return TemplateRow(key);
  }
  if (auto it = rows_.find(key); it != rows_.end()) {
    last_ = &*it;
    return &it->second;
  }
  if (key == kOtherKey) return Other();
  return NewRow(key, new_key);
}

KeyStats* KeyTable::Insert(std::string_view key) {
  // A table that grew to kRowsBeforeReserve rows takes its buckets for max_keys rows (up to
  // kMaxReservedRows) at once: one rehash, instead of one at each doubling, each of which
  // relinks every node.
  if (rows_.size() == kRowsBeforeReserve && max_keys_ > kRowsBeforeReserve) {
    rows_.reserve(std::min(max_keys_, kMaxReservedRows));
  }
  key_order_.valid = false;
  auto [it, inserted] = rows_.try_emplace(std::string(key));
  if (inserted) bytes_ += RowBytes(it->first, it->second);
  last_ = &*it;  // element addresses survive rehashing
  return &it->second;
}

KeyStats* KeyTable::Other() {
  if (other_ == nullptr) {
    auto [it, inserted] = rows_.try_emplace(std::string(kOtherKey));
    if (inserted) bytes_ += RowBytes(it->first, it->second);
    other_ = &it->second;
  }
  return other_;
}

KeyStats* KeyTable::NewRow(std::string_view key, bool new_key) {
  if (max_keys_ == 0) return Insert(key);
  if (new_key) distinct_.Add(key);
  if (!folded_) {
    if (keyed_rows() < max_keys_) return Insert(key);
    Fold(/*for_memory=*/false);
  }
  return TemplateRow(key);
}

KeyStats* KeyTable::TemplateRow(std::string_view key) {
  // Every row of a folded table is a template, and KeyTemplate is idempotent: a key has a row
  // of its own only when it is its own template, so looking its template up is enough.
  // Distinct URLs of one endpoint arrive in runs: their template is the last one, most often.
  templater_.Template(key, &template_scratch_);
  if (last_ != nullptr && last_->first == template_scratch_) return &last_->second;
  if (auto it = rows_.find(template_scratch_); it != rows_.end()) {
    last_ = &*it;
    return &it->second;
  }
  if (keyed_rows() < max_keys_) return Insert(template_scratch_);
  return Other();
}

void KeyTable::MergeInto(KeyStats* row, const KeyStats& stats) {
  if (!row->CanMerge(stats)) row = Other();
  if (!row->CanMerge(stats)) {
    lost_requests_ += stats.total();
    return;
  }
  row->Merge(stats);
}

void KeyTable::Fold(bool for_memory) {
  key_order_.valid = false;
  Rows old = std::move(rows_);
  rows_ = Rows();
  last_ = nullptr;
  other_ = nullptr;
  folded_ = true;
  folded_for_memory_ = for_memory;
  ++generation_;
  Rows templates;
  Rows::value_type* last_template = nullptr;  // rows of one endpoint share it, most often
  // Each row is freed once merged: folding for memory must not need twice the memory.
  while (!old.empty()) {
    Rows::node_type node = old.extract(old.begin());
    KeyStats& stats = node.mapped();
    if (node.key() == kOtherKey) {
      MergeInto(Other(), stats);
      continue;
    }
    templater_.Template(node.key(), &template_scratch_);
    Rows::value_type* row = last_template;
    if (row == nullptr || row->first != template_scratch_) {
      if (auto it = templates.find(template_scratch_); it != templates.end()) {
        row = &*it;
      } else {
        // The template's first row: its node becomes the template's, renamed (no allocation).
        node.key() = template_scratch_;
        last_template = &*templates.insert(std::move(node)).position;
        continue;
      }
    }
    last_template = row;
    if (row->second.CanMerge(stats)) {
      row->second.Merge(stats);
    } else {
      MergeInto(Other(), stats);
    }
  }
  // The table had at most max_keys rows, so its templates are no more: they all fit. A new row
  // is empty, so taking the template's figures whole is its exact merge.
  while (!templates.empty()) {
    auto result = rows_.insert(templates.extract(templates.begin()));
    if (!result.inserted) MergeInto(&result.position->second, result.node.mapped());
  }
  last_ = nullptr;
  if (max_bytes_ > 0) Recount();
}

uint64_t KeyTable::RowBytes(std::string_view key, const KeyStats& stats) {
  // An estimate of the fixed cost: the hash node (next pointer and cached hash besides the
  // row), its bucket, and malloc's header of each block; a key past std::string's inline
  // buffer (15 bytes in libstdc++) is a block of its own.
  constexpr uint64_t kRowBytes = sizeof(Rows::value_type) + 2 * sizeof(void*) + 8 + 16;
  const uint64_t key_bytes = key.size() > 15 ? key.size() + 1 + 16 : 0;
  const uint64_t failure_bytes = stats.failures.allocated() ? sizeof(FailureCounts) + 16 : 0;
  return kRowBytes + key_bytes + failure_bytes + stats.histogram.allocated_bytes();
}

uint64_t KeyTable::MemoryBytes() const {
  uint64_t bytes = 0;
  for (const auto& [key, stats] : rows_)
    bytes += RowBytes(key, stats);
  return bytes;
}

void KeyTable::Recount() {
  bytes_ = MemoryBytes();
  growth_mark_ = Histogram::ThreadAllocatedBytes();
}

void KeyTable::FitMemory() {
  Recount();
  if (bytes_ <= max_bytes_) return;
  if (!folded_) {
    Fold(/*for_memory=*/true);
    if (bytes_ <= max_bytes_) return;
  }
  Shed();
}

void KeyTable::Shed() {
  key_order_.valid = false;
  const uint64_t target = max_bytes_ / 4 * 3;
  KeyStats* other = Other();  // before the iterators: inserting may rehash
  std::vector<Rows::iterator> quiet;
  quiet.reserve(rows_.size());
  for (auto it = rows_.begin(); it != rows_.end(); ++it) {
    if (&it->second != other) quiet.push_back(it);
  }
  std::sort(quiet.begin(), quiet.end(), [](const auto& a, const auto& b) {
    return a->second.total() < b->second.total() ||
           (a->second.total() == b->second.total() && a->first < b->first);
  });
  for (const Rows::iterator& it : quiet) {
    if (bytes_ <= target) break;
    const uint64_t before = RowBytes(it->first, it->second) + RowBytes(kOtherKey, *other);
    MergeInto(other, it->second);
    rows_.erase(it);
    bytes_ = bytes_ - before + RowBytes(kOtherKey, *other);
    shed_ = true;
  }
  last_ = nullptr;
  ++generation_;
  growth_mark_ = Histogram::ThreadAllocatedBytes();
}

void KeyTable::Add(std::string_view key, const KeyStats& stats) {
  MergeInto(StatsFor(key), stats);
  CheckMemory();
}

void KeyTable::Merge(const KeyTable& other) {
  MergeRows(other, nullptr);
}

void KeyTable::Merge(KeyTable&& other) {
  MergeRows(other, &other.rows_);
  other = KeyTable(other.max_keys_, other.max_bytes_);
}

void KeyTable::MergeRows(const KeyTable& other, Rows* erase_from) {
  key_order_.valid = false;
  distinct_.Merge(other.distinct_);
  lost_requests_ += other.lost_requests_;
  shed_ = shed_ || other.shed_;
  if (other.folded_ && !folded_ && max_keys_ > 0) Fold(other.folded_for_memory_);
  // When the union has at most max_keys keys, every row keeps its key, whatever the order.
  // (Past max_bytes, CheckMemory below sheds the quietest rows of the table, in any order.)
  const bool fits = !folded_ && (max_keys_ == 0 || keyed_rows() + other.keyed_rows() <= max_keys_);
  if (fits && erase_from != nullptr && rows_.empty()) {
    // An empty table takes the other's rows whole: no node is moved or rehashed.
    rows_.swap(*erase_from);
    other_ = other.other_;  // a node's address is kept
    if (max_bytes_ > 0) {
      Recount();
      CheckMemory();
    }
    return;
  }
  if (fits && erase_from != nullptr) MoveNodes(erase_from);
  // What is left (everything, but after MoveNodes only what came after a fold for memory).
  std::vector<Rows::const_iterator> order;
  order.reserve(other.rows_.size());
  for (auto it = other.rows_.begin(); it != other.rows_.end(); ++it)
    order.push_back(it);
  if (!fits || folded_) {
    // Busiest rows first: the rows that go to "(other)" are then the quiet ones, whatever the
    // hash order.
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a->second.total() > b->second.total() ||
             (a->second.total() == b->second.total() && a->first < b->first);
    });
  }
  // Their keys are in other.distinct_ already (a row of a folded table is a template, not a
  // key that was seen).
  for (const Rows::const_iterator& row : order) {
    KeyStats* target = RowFor(row->first, /*new_key=*/false);
    if (erase_from == nullptr) {
      MergeInto(target, row->second);
    } else {
      // The others' iterators stay valid.
      Absorb(target, std::move(erase_from->extract(row).mapped()));
    }
    CheckMemory();
  }
}

void KeyTable::MoveNodes(Rows* from) {
  key_order_.valid = false;
  rows_.reserve(rows_.size() + from->size());  // one rehash, not one at each doubling
  while (!from->empty() && !folded_) {
    auto result = rows_.insert(from->extract(from->begin()));
    if (result.inserted) {
      if (result.position->first == kOtherKey) other_ = &result.position->second;
      bytes_ += RowBytes(result.position->first, result.position->second);
    } else {
      Absorb(&result.position->second, std::move(result.node.mapped()));
    }
    CheckMemory();
  }
}

void KeyTable::Absorb(KeyStats* row, KeyStats&& stats) {
  if (row->total() == 0) {
    // An empty row: taking the figures whole is its exact merge, and moves the histogram's
    // storage instead of copying it: memory another thread freed is not reused by this one's
    // allocations (malloc keeps an arena per thread), so copying would need both tables'
    // bytes at once.
    *row = std::move(stats);
    bytes_ += row->histogram.allocated_bytes();  // not allocated on this thread
  } else {
    MergeInto(row, stats);
  }
}

KeyFolding KeyTable::Folding() const {
  KeyFolding folding;
  folding.max_keys = max_keys_;
  folding.max_bytes = max_bytes_;
  folding.folded = folded_;
  folding.for_memory = folded_for_memory_;
  folding.shed = shed_;
  folding.rows = keyed_rows();
  folding.distinct_keys = folded_ ? distinct_.Estimate() : keyed_rows();
  folding.other_requests = other_ != nullptr ? other_->total() : 0;
  folding.lost_requests = lost_requests_;
  return folding;
}

std::vector<std::pair<std::string, KeyStats>> KeyTable::TakeRows() {
  // Each node is taken out of the table once and its row moved once, in key order; the order
  // is computed on the keys alone (SortedKeyOrder), not on the rows.
  std::vector<Rows::node_type> nodes;
  std::vector<std::string_view> keys;
  nodes.reserve(rows_.size());
  keys.reserve(rows_.size());
  TakeNodes(rows_, nodes, &keys);
  std::vector<std::pair<std::string, KeyStats>> rows;
  MoveRows(nodes, SortedKeyOrder(keys), rows);
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

void KeyTable::MoveRows(std::vector<Rows::node_type>& nodes, const std::vector<size_t>& order,
                        std::vector<std::pair<std::string, KeyStats>>& rows) {
  rows.reserve(rows.size() + order.size());
  // The rows are read in key order, all over the heap: each is asked for kRowsAhead rows before
  // it is moved, so that the misses overlap.
  constexpr size_t kRowsAhead = 8;
  for (size_t n = 0; n < order.size(); ++n) {
    if (n + kRowsAhead < order.size()) {
      PrefetchRow<Rows::value_type>(&nodes[order[n + kRowsAhead]].key());  // the row's first
    }
    Rows::node_type node = std::move(nodes[order[n]]);  // freed here, while its memory is cached
    rows.emplace_back(std::move(node.key()), std::move(node.mapped()));
  }
}

void KeyTable::SortKeys() {
  if (folded_ || max_keys_ == 0) return;
  KeyOrder order;
  std::vector<std::string_view> keys;
  keys.reserve(rows_.size());
  order.listed.reserve(rows_.size());
  uint64_t requests = 0;
  for (const auto& row : rows_) {
    keys.push_back(row.first);
    order.listed.push_back(&row);
    order.bytes += RowBytes(row.first, row.second);
    requests += row.second.total();
  }
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
    rows += table.rows_.size();
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
    size_t looked_up = 0;
    for (auto row = tables[t].rows_.begin();
         row != tables[t].rows_.end() && looked_up < kKeysLookedUp; ++row, ++looked_up) {
      for (size_t before = 0; before < t; ++before) {
        if (tables[before].rows_.contains(row->first)) return false;
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
    count += table.rows_.size();
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
  std::vector<Rows::node_type> nodes;
  nodes.reserve(count);
  for (KeyTable& table : tables) {
    if (table.other_ != nullptr) result.other_requests = table.other_->total();
    result.shed = result.shed || table.shed_;
    result.lost_requests += table.lost_requests_;
    TakeNodes(table.rows_, nodes, nullptr,
              table.HasKeyOrder()
                  ? std::span<const Rows::value_type* const>(table.key_order_.listed)
                  : std::span<const Rows::value_type* const>());
    table = KeyTable(table.max_keys_, table.max_bytes_);
  }
  result.rows = keyed;
  result.distinct_keys = keyed;
  *folding = result;
  prefault.Wait();
  MoveRows(nodes, order, *rows);
  return true;
}

}  // namespace hammer::stats
