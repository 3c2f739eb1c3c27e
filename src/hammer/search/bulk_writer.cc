#include "hammer/search/bulk_writer.h"

#include <algorithm>
#include <utility>

#include "hammer/search/dead_letter.h"
#include "hammer/search/gzip_body.h"

namespace hammer::search {
namespace {

constexpr size_t kMaxResponseBytes = 256 * 1024 * 1024;

// Item errors that say the shard's primary is not where we sent it, or not there any more.
bool SignalsPlacementChange(std::string_view error_type) {
  return error_type == "unavailable_shards_exception" ||
         error_type == "primary_missing_action_exception" ||
         error_type == "node_closed_exception" || error_type == "node_not_connected_exception" ||
         error_type == "no_shard_available_action_exception" ||
         error_type == "node_disconnected_exception";
}

std::string Snippet(std::string_view body) {
  std::string text(body.substr(0, 300));
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

}  // namespace

BulkWriter::BulkWriter(BulkWriterHost* host, net::EventLoop* loop, int lane)
    : host_(host), lane_(lane), backoff_(loop, [this] { SendWindow(); }) {}

BulkWriter::~BulkWriter() = default;

void BulkWriter::Start(std::unique_ptr<BulkBatch> batch) {
  batch_ = std::move(batch);
  split_limit_ = SIZE_MAX;
  SendWindow();
}

void BulkWriter::Interrupt() {
  if (!batch_ || in_flight_ || !backoff_.armed()) return;
  backoff_.Cancel();
  window_ = 0;
  retry_.clear();
  Advance("interrupted");
}

void BulkWriter::SendWindow() {
  if (host_->stopping()) {
    window_ = 0;
    retry_.clear();
    Advance("interrupted");
    return;
  }
  window_ = std::min(split_limit_, batch_->size());
  std::string_view body = batch_->PrefixBody(window_);
  const size_t uncompressed = body.size();
  bool gzip = false;
  if (host_->settings().gzip) {
    if (window_ == batch_->size() && !batch_->gzip_body().empty()) {
      body = batch_->gzip_body();
      gzip = true;
    } else if (GzipCompress(body, &gzip_scratch_).ok()) {
      body = gzip_scratch_;
      gzip = true;
    }
  }
  target_ = host_->PickTarget(lane_);
  head_ = host_->RequestHead(target_, body.size(), gzip);
  host_->OnSending(target_, *batch_, window_, body.size(), uncompressed);
  bool all_have_ids = true;
  for (size_t i = 0; i < window_; ++i)
    all_have_ids = all_have_ids && batch_->items()[i].has_id;
  http::ClientRequest request;
  request.origin = target_.origin;
  request.head = head_;
  request.body = body;
  // The client's own single retry on a stale keep-alive connection is safe only when no
  // item can be duplicated.
  request.idempotent = all_have_ids;
  request.deadline = host_->client()->loop()->UpdateNow() + host_->settings().timeout;
  request_bytes_ = head_.size() + body.size();
  status_ = 0;
  response_.clear();
  in_flight_ = true;
  sent_at_ = MonoNow();
  host_->client()->Send(request, this);
}

void BulkWriter::OnResponseHead(const http::ResponseHead& head) {
  status_ = head.status;
}

void BulkWriter::OnResponseBody(std::string_view data) {
  if (response_.size() + data.size() <= kMaxResponseBytes) response_.append(data);
}

void BulkWriter::OnResponseComplete(const http::ExchangeResult& result) {
  in_flight_ = false;
  BulkStats& stats = host_->stats();
  retry_.assign(window_, 0);
  if (result.failure) {
    ++stats.requests_failed;
    const std::string detail =
        result.detail.empty() ? std::string(FailureName(*result.failure)) : result.detail;
    host_->OnNodeFailure(target_, detail);
    // Written in full: the server may have applied it even though no answer came back.
    RetryWindow("transport failure: " + detail, result.bytes_sent >= request_bytes_, 0);
    return;
  }
  if (!IsRetryableHttpStatus(status_)) {
    stats.request_latency.Record((MonoNow() - sent_at_) / kMicrosecond);
  }
  if (status_ == 200) {
    JudgeItems();
    return;
  }
  const std::string reason = "HTTP " + std::to_string(status_) + ": " + Snippet(response_);
  if ((status_ == 400 || status_ == 413) && window_ > 1) {
    ++stats.requests_split;
    split_limit_ = std::max<size_t>(1, window_ / 2);
    window_ = 0;  // nothing settled; the batch goes again in smaller requests
    retry_.clear();
    Advance(reason);
    return;
  }
  if (IsRetryableHttpStatus(status_)) {
    ++stats.requests_rejected;
    if (status_ == 503) host_->OnRoutingChanged();
    // 429 and 503 are refusals before any work; a 500/502/504 may come after some.
    RetryWindow(reason, status_ != 429 && status_ != 503, status_);
    return;
  }
  DeadLetterWindow(DeadLetterKind::kRejected, status_, kHttpErrorType, reason);
  Advance(reason);
}

void BulkWriter::JudgeItems() {
  BulkStats& stats = host_->stats();
  BulkResponse response;
  if (Status parsed = host_->response_parser().Parse(response_, window_, &response); !parsed.ok()) {
    RetryWindow("unreadable bulk response: " + parsed.message(), true, 0);
    return;
  }
  std::string last_reason;
  int last_status = 0;
  bool placement_changed = false;
  for (size_t i = 0; i < window_; ++i) {
    const BatchItem& item = batch_->items()[i];
    const BulkItemResult& result = response.items[i];
    if (result.ok() ||
        (item.op == BulkOp::kDelete && result.status == 404 && result.error_type.empty())) {
      ++stats.indexed;
    } else if (item.op == BulkOp::kCreate && item.maybe_applied &&
               IsVersionConflict(result.status, result.error_type)) {
      ++stats.indexed;
      ++stats.conflicts_after_retry;
    } else if (IsRetryableItemFailure(result.status, result.error_type)) {
      retry_[i] = 1;
      last_reason = result.reason;
      last_status = result.status;
      placement_changed = placement_changed || SignalsPlacementChange(result.error_type);
    } else {
      host_->DeadLetter(*batch_, item, DeadLetterKind::kRejected, result.status, result.error_type,
                        result.reason);
    }
  }
  if (placement_changed) host_->OnRoutingChanged();
  Advance(last_reason, last_status);
}

void BulkWriter::RetryWindow(std::string_view reason, bool maybe_applied, int status) {
  for (size_t i = 0; i < window_; ++i) {
    BatchItem& item = batch_->items()[i];
    if (maybe_applied && !item.has_id) {
      host_->DeadLetter(*batch_, item, DeadLetterKind::kOutcomeUnknown, 0, kOutcomeUnknownType,
                        "no _id and the request's outcome is unknown (" + std::string(reason) +
                            "); not retried, since a retry could index it twice");
      continue;
    }
    item.maybe_applied = item.maybe_applied || maybe_applied;
    retry_[i] = 1;
  }
  Advance(reason, status);
}

void BulkWriter::DeadLetterWindow(DeadLetterKind kind, int status, std::string_view type,
                                  std::string_view reason) {
  for (size_t i = 0; i < window_; ++i) {
    host_->DeadLetter(*batch_, batch_->items()[i], kind, status, type, reason);
  }
}

void BulkWriter::Advance(std::string_view reason, int status) {
  BulkStats& stats = host_->stats();
  const bool stopping = host_->stopping();
  const RetryBackoff& backoff = host_->settings().backoff;
  auto next = std::make_unique<BulkBatch>(lane_);
  int highest_retry = 0;
  bool retrying = false;
  for (size_t i = 0; i < window_; ++i) {
    if (retry_.empty() || !retry_[i]) continue;
    BatchItem item = batch_->items()[i];
    if (stopping) {
      host_->DeadLetter(*batch_, item, DeadLetterKind::kInterrupted, 0, kInterruptedType,
                        "the run was stopped before this document was indexed");
    } else if (backoff.Exhausted(item.retries)) {
      host_->DeadLetter(*batch_, item, DeadLetterKind::kRetriesExhausted, status,
                        kRetriesExhaustedType,
                        "retries exhausted after " + std::to_string(item.retries) +
                            " retries; last: " + std::string(reason));
    } else {
      ++item.retries;
      ++stats.items_retried;
      highest_retry = std::max<int>(highest_retry, item.retries);
      retrying = true;
      next->AddItem(*batch_, item);
    }
  }
  for (size_t i = window_; i < batch_->size(); ++i) {
    const BatchItem& item = batch_->items()[i];
    if (stopping) {
      host_->DeadLetter(*batch_, item, DeadLetterKind::kInterrupted, 0, kInterruptedType,
                        "the run was stopped before this document was indexed");
    } else {
      next->AddItem(*batch_, item);
    }
  }
  window_ = 0;
  retry_.clear();
  if (next->empty()) {
    batch_.reset();
    host_->OnWriterDone(this);
    return;
  }
  batch_ = std::move(next);
  if (retrying) {
    backoff_.ArmAfter(backoff.Delay(highest_retry, host_->Random()));
  } else {
    SendWindow();
  }
}

}  // namespace hammer::search
