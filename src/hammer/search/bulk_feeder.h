// BulkFeeder: the reading side of `hammer bulk`, run on its own thread so that a slow input
// never stalls the event loop: reads NDJSON lines, parses documents (BulkInputParser), routes
// each one (DocumentRouter), groups them per lane into batches (BatchBuilder), compresses
// full batches when asked, and pushes them to the BatchQueue, which blocks it when the cluster
// is slower than the input.
//
// Lanes: 0..N-1 are the primary shards and lane N takes the documents without a known shard;
// with shard_lanes false (--routing round-robin) every document goes to lane N in input order,
// as a client that does not route would batch them.
// Every document read ends in exactly one place: a pushed batch, or the dead-letter writer
// (rejected input, or interrupted when the queue is aborted), and the feeder's BulkStats count
// it (documents_read, invalid_input, interrupted).
//
// Errors: Run() returns the input error that ended reading early (open/read failure, a line
// over max_line_bytes); documents read before it are still delivered.
// Ownership: borrows the queue, dead-letter writer and progress (they outlive Run()).
// Threads: Run() on the reader thread; stats() after Run() returned.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/search/batch_queue.h"
#include "hammer/search/bulk_input.h"
#include "hammer/search/bulk_stats.h"
#include "hammer/search/dead_letter.h"
#include "hammer/search/document_router.h"

namespace hammer::search {

struct FeederOptions {
  std::string input_path = "-";
  size_t max_line_bytes = 64 * 1024 * 1024;
  InputOptions input;
  BatchLimits limits;
  bool shard_lanes = true;
  bool gzip = false;
};

class BulkFeeder final : private BulkInputParser::Sink {
 public:
  BulkFeeder(FeederOptions options, DocumentRouter router, BatchQueue* queue,
             DeadLetterWriter* dead_letters, BulkProgress* progress);

  Status Run();
  const BulkStats& stats() const { return stats_; }

 private:
  void OnDocument(const BulkDocument& document) override;
  void OnRejected(InputRejection rejection) override;
  void Push(std::vector<std::unique_ptr<BulkBatch>>* batches);

  FeederOptions options_;
  DocumentRouter router_;
  BatchQueue* queue_;
  DeadLetterWriter* dead_letters_;
  BulkProgress* progress_;
  BulkInputParser parser_;
  BatchBuilder builder_;
  BulkStats stats_;
  std::vector<std::unique_ptr<BulkBatch>> full_;
  bool aborted_ = false;
};

}  // namespace hammer::search
