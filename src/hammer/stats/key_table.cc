#include "hammer/stats/key_table.h"

#include <algorithm>

#include "hammer/stats/key_template.h"

namespace hammer::stats {

std::string KeyFolding::Describe() const {
  if (!folded) return "";
  std::string text = "about " + std::to_string(distinct_keys) +
                     " distinct keys exceeded --max-keys " + std::to_string(max_keys) +
                     ": grouped by path template into " + std::to_string(rows) +
                     (rows == 1 ? " row" : " rows");
  if (other_requests > 0) {
    text += ", and " + std::to_string(other_requests) +
            (other_requests == 1 ? " request" : " requests") + " of keys beyond that in " +
            std::string(kOtherKey);
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
  auto it = rows_.try_emplace(std::string(key)).first;
  last_ = &*it;  // element addresses survive rehashing
  return &it->second;
}

KeyStats* KeyTable::Other() {
  if (other_ == nullptr) other_ = &rows_.try_emplace(std::string(kOtherKey)).first->second;
  return other_;
}

KeyStats* KeyTable::NewRow(std::string_view key, bool new_key) {
  if (max_keys_ == 0) return Insert(key);
  if (new_key) distinct_.Add(key);
  if (!folded_) {
    if (keyed_rows() < max_keys_) return Insert(key);
    Fold();
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

void KeyTable::Fold() {
  Rows old = std::move(rows_);
  rows_ = Rows();
  last_ = nullptr;
  other_ = nullptr;
  folded_ = true;
  ++generation_;
  Rows templates;
  for (auto& [key, stats] : old) {
    if (key == kOtherKey) {
      MergeInto(Other(), stats);
      continue;
    }
    templater_.Template(key, &template_scratch_);
    KeyStats& row = templates.try_emplace(template_scratch_).first->second;  // copied if new
    if (row.CanMerge(stats)) {
      row.Merge(stats);
    } else {
      MergeInto(Other(), stats);
    }
  }
  old = Rows();
  // The table was full (max_keys rows), so its templates are no more: they all fit.
  for (auto& [key, stats] : templates)
    MergeInto(Insert(key), stats);
  last_ = nullptr;
}

void KeyTable::Add(std::string_view key, const KeyStats& stats) {
  MergeInto(StatsFor(key), stats);
}

void KeyTable::Merge(const KeyTable& other) {
  distinct_.Merge(other.distinct_);
  lost_requests_ += other.lost_requests_;
  if (other.folded_ && !folded_ && max_keys_ > 0) Fold();
  // Busiest rows first: when the union does not fit, the rows that go to "(other)" are the
  // quiet ones, whatever the hash order.
  std::vector<const Rows::value_type*> sorted;
  sorted.reserve(other.rows_.size());
  for (const auto& row : other.rows_)
    sorted.push_back(&row);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return a->second.total() > b->second.total() ||
           (a->second.total() == b->second.total() && a->first < b->first);
  });
  // Their keys are in other.distinct_ already (a row of a folded table is a template, not a
  // key that was seen).
  for (const auto* row : sorted)
    MergeInto(RowFor(row->first, /*new_key=*/false), row->second);
}

KeyFolding KeyTable::Folding() const {
  KeyFolding folding;
  folding.max_keys = max_keys_;
  folding.folded = folded_;
  folding.rows = keyed_rows();
  folding.distinct_keys = folded_ ? distinct_.Estimate() : keyed_rows();
  folding.other_requests = other_ != nullptr ? other_->total() : 0;
  folding.lost_requests = lost_requests_;
  return folding;
}

std::vector<std::pair<std::string, KeyStats>> KeyTable::TakeRows() {
  // Sorted as node handles (a pointer each), not as rows: a row moves once, not log n times.
  std::vector<Rows::node_type> nodes;
  nodes.reserve(rows_.size());
  while (!rows_.empty())
    nodes.push_back(rows_.extract(rows_.begin()));
  std::sort(nodes.begin(), nodes.end(),
            [](const auto& a, const auto& b) { return a.key() < b.key(); });
  std::vector<std::pair<std::string, KeyStats>> rows;
  rows.reserve(nodes.size());
  for (Rows::node_type& node : nodes) {
    rows.emplace_back(std::move(node.key()), std::move(node.mapped()));
  }
  last_ = nullptr;
  other_ = nullptr;
  ++generation_;
  return rows;
}

}  // namespace hammer::stats
