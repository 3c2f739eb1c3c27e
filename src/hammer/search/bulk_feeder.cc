#include "hammer/search/bulk_feeder.h"

#include <utility>

#include "hammer/base/line_reader.h"
#include "hammer/search/gzip_body.h"

namespace hammer::search {

BulkFeeder::BulkFeeder(FeederOptions options, DocumentRouter router, BatchQueue* queue,
                       DeadLetterWriter* dead_letters, BulkProgress* progress)
    : options_(std::move(options)),
      router_(std::move(router)),
      queue_(queue),
      dead_letters_(dead_letters),
      progress_(progress),
      parser_(options_.input),
      builder_(router_.number_of_shards() + 1, options_.limits) {}

Status BulkFeeder::Run() {
  Result<LineReader> lines =
      LineReader::Open(options_.input_path, LineReader::WholeLines(options_.max_line_bytes));
  Status status;
  if (lines.ok()) {
    std::string_view line;
    while (!aborted_) {
      Result<bool> more = lines->Next(&line);
      if (!more.ok()) {
        status = more.status();
        break;
      }
      if (!*more) break;
      parser_.Feed(line, lines->line_number(), this);
      if (!full_.empty()) Push(&full_);
    }
    parser_.Finish(this);
  } else {
    status = lines.status();
  }
  builder_.TakeAll(&full_);
  Push(&full_);
  queue_->CloseInput();
  return status;
}

void BulkFeeder::OnDocument(const BulkDocument& document) {
  ++stats_.documents_read;
  progress_->read.fetch_add(1, std::memory_order_relaxed);
  Result<DocumentRoute> route = router_.Route(document);
  if (!route.ok()) {
    ++stats_.invalid_input;
    progress_->dead_lettered.fetch_add(1, std::memory_order_relaxed);
    const std::string reason = route.status().message();
    dead_letters_->Write({reason, 0, kInvalidInputType, document.action, document.source,
                          document.has_source, document.line});
    return;
  }
  if (!route->routable()) {
    ++stats_.unroutable;
    ++stats_.unroutable_reasons[std::string(route->reason)];
  }
  const int any_lane = router_.number_of_shards();
  const int lane = options_.shard_lanes && route->routable() ? route->shard : any_lane;
  stats_.input_bytes += DocumentBytes(document);
  builder_.Add(lane, document, route->shard, &full_);
}

void BulkFeeder::OnRejected(InputRejection rejection) {
  ++stats_.documents_read;
  ++stats_.invalid_input;
  progress_->read.fetch_add(1, std::memory_order_relaxed);
  progress_->dead_lettered.fetch_add(1, std::memory_order_relaxed);
  dead_letters_->Write({rejection.reason, 0, kInvalidInputType, rejection.action, rejection.source,
                        !rejection.source.empty(), rejection.line});
}

void BulkFeeder::Push(std::vector<std::unique_ptr<BulkBatch>>* batches) {
  for (std::unique_ptr<BulkBatch>& batch : *batches) {
    if (!aborted_ && options_.gzip) {
      // Compressed here, off the event loop; a failure just leaves the body uncompressed.
      (void)GzipCompress(batch->body(), &batch->gzip_body());
    }
    if (aborted_ || !queue_->Push(&batch)) {
      aborted_ = true;
      for (const BatchItem& item : batch->items()) {
        ++stats_.interrupted;
        progress_->dead_lettered.fetch_add(1, std::memory_order_relaxed);
        dead_letters_->Write({"the run was stopped before this document was sent", 0,
                              kInterruptedType, batch->Action(item), batch->Source(item),
                              item.has_source, item.line});
      }
    }
  }
  batches->clear();
}

}  // namespace hammer::search
