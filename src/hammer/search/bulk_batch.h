// BulkBatch: documents that travel together in one POST _bulk, as one contiguous NDJSON body
// plus an index of where each document's lines are; BatchBuilder: groups documents into batches
// per lane (a lane is a primary shard, or the lane of documents that can go anywhere).
//
// Limits: a batch is closed when it holds max_documents documents, or when the next document
// would take the body past max_bytes (a single document larger than max_bytes travels alone).
// Items keep their order; the body of the first n items is the prefix body[0, items[n].offset).
//
// Ownership: a batch owns its body; BatchBuilder owns the open batches until they are handed
// out. Threads: values; one thread at a time (built by the reader, then moved to the loop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/search/bulk_input.h"

namespace hammer::search {

struct BatchItem {
  uint32_t offset = 0;  // of the action line in the body
  uint32_t action_length = 0;
  uint32_t source_length = 0;
  bool has_source = false;
  bool has_id = false;         // an explicit _id: sending it again cannot duplicate it
  bool maybe_applied = false;  // an earlier attempt may have been applied (outcome unknown)
  BulkOp op = BulkOp::kIndex;
  uint16_t retries = 0;  // sends after the first
  int32_t shard = -1;    // predicted primary shard; -1: unroutable
  uint64_t line = 0;     // input line number

  // Bytes of this item in the body, newlines included.
  size_t bytes() const { return action_length + 1 + (has_source ? source_length + 1 : 0); }
};

class BulkBatch {
 public:
  explicit BulkBatch(int lane) : lane_(lane) {}

  // Appends the document's action and source lines.
  void Add(const BulkDocument& document, int32_t shard);
  // Appends an item of another batch (retries and splits), keeping its state.
  void AddItem(const BulkBatch& from, const BatchItem& item);

  int lane() const { return lane_; }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const std::string& body() const { return body_; }
  std::vector<BatchItem>& items() { return items_; }
  const std::vector<BatchItem>& items() const { return items_; }
  // The body of the first `count` items.
  std::string_view PrefixBody(size_t count) const;
  std::string_view Action(const BatchItem& item) const {
    return std::string_view(body_).substr(item.offset, item.action_length);
  }
  std::string_view Source(const BatchItem& item) const {
    return std::string_view(body_).substr(item.offset + item.action_length + 1, item.source_length);
  }

  // The gzip-compressed full body, when the reader prepared it (--gzip); else empty.
  std::string& gzip_body() { return gzip_body_; }

 private:
  int lane_;
  std::string body_;
  std::vector<BatchItem> items_;
  std::string gzip_body_;
};

struct BatchLimits {
  size_t max_documents = 1000;
  size_t max_bytes = 5 * 1024 * 1024;
};

class BatchBuilder {
 public:
  BatchBuilder(int lanes, BatchLimits limits);

  // Adds a document to `lane`'s open batch; batches that this closes are appended to `full`.
  void Add(int lane, const BulkDocument& document, int32_t shard,
           std::vector<std::unique_ptr<BulkBatch>>* full);
  // Closes every open batch that holds documents (end of input), lane order.
  void TakeAll(std::vector<std::unique_ptr<BulkBatch>>* full);

  const BatchLimits& limits() const { return limits_; }

 private:
  BatchLimits limits_;
  std::vector<std::unique_ptr<BulkBatch>> open_;
};

// Bytes a document adds to a batch body.
size_t DocumentBytes(const BulkDocument& document);

}  // namespace hammer::search
