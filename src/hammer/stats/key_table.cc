#include "hammer/stats/key_table.h"

#include <algorithm>

#include "hammer/base/byte_size.h"
#include "hammer/stats/key_template.h"

namespace hammer::stats {

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

std::vector<std::pair<std::string, KeyStats>> KeyTable::TakeRows() {
  // Each node is taken out of the table once and its row moved once, in key order; the order
  // is computed on the keys alone (SortedKeyOrder), not on the rows.
  std::vector<Rows::node_type> nodes;
  std::vector<std::string_view> keys;
  nodes.reserve(rows_.size());
  keys.reserve(rows_.size());
  while (!rows_.empty()) {
    nodes.push_back(rows_.extract(rows_.begin()));
    keys.push_back(nodes.back().key());  // the string stays in the node until it is moved
  }
  std::vector<std::pair<std::string, KeyStats>> rows;
  rows.reserve(nodes.size());
  for (size_t i : SortedKeyOrder(keys)) {
    Rows::node_type node = std::move(nodes[i]);
    rows.emplace_back(std::move(node.key()), std::move(node.mapped()));
  }
  last_ = nullptr;
  other_ = nullptr;
  bytes_ = 0;
  ++generation_;
  return rows;
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

}  // namespace hammer::stats
