#include "hammer/search/bulk_batch.h"

namespace hammer::search {

size_t DocumentBytes(const BulkDocument& document) {
  return document.action.size() + 1 + (document.has_source ? document.source.size() + 1 : 0);
}

void BulkBatch::Add(const BulkDocument& document, int32_t shard) {
  BatchItem item;
  item.offset = static_cast<uint32_t>(body_.size());
  item.action_length = static_cast<uint32_t>(document.action.size());
  item.source_length = static_cast<uint32_t>(document.source.size());
  item.has_source = document.has_source;
  item.has_id = document.id.has_value();
  item.op = document.op;
  item.shard = shard;
  item.line = document.line;
  body_.append(document.action);
  body_.push_back('\n');
  if (document.has_source) {
    body_.append(document.source);
    body_.push_back('\n');
  }
  items_.push_back(item);
}

void BulkBatch::AddItem(const BulkBatch& from, const BatchItem& item) {
  BatchItem copy = item;
  copy.offset = static_cast<uint32_t>(body_.size());
  body_.append(std::string_view(from.body_).substr(item.offset, item.bytes()));
  items_.push_back(copy);
}

std::string_view BulkBatch::PrefixBody(size_t count) const {
  if (count >= items_.size()) return body_;
  return std::string_view(body_).substr(0, items_[count].offset);
}

BatchBuilder::BatchBuilder(int lanes, BatchLimits limits) : limits_(limits) {
  open_.resize(static_cast<size_t>(lanes));
}

void BatchBuilder::Add(int lane, const BulkDocument& document, int32_t shard,
                       std::vector<std::unique_ptr<BulkBatch>>* full) {
  std::unique_ptr<BulkBatch>& open = open_[static_cast<size_t>(lane)];
  if (open && !open->empty() && open->body().size() + DocumentBytes(document) > limits_.max_bytes) {
    full->push_back(std::move(open));
  }
  if (!open) open = std::make_unique<BulkBatch>(lane);
  open->Add(document, shard);
  if (open->size() >= limits_.max_documents || open->body().size() >= limits_.max_bytes) {
    full->push_back(std::move(open));
  }
}

void BatchBuilder::TakeAll(std::vector<std::unique_ptr<BulkBatch>>* full) {
  for (std::unique_ptr<BulkBatch>& open : open_) {
    if (open && !open->empty()) full->push_back(std::move(open));
    open.reset();
  }
}

}  // namespace hammer::search
