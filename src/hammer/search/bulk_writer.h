// BulkWriter: one of the K concurrent writers of a lane (a primary shard, or the lane of
// documents that can go anywhere). It takes one batch at a time and owns it until every item is
// indexed or dead-lettered:
//
//   Start(batch) → send → judge the answer → done, or (after a backoff) send the rest again
//
// Judging, per request:
//  * transport failure (connect, reset, timeout): the node is reported down and every item is
//    sent again, except id-less items when the whole request had been written (the server may
//    have indexed them under ids we cannot know; a retry could duplicate): those are
//    dead-lettered as outcome_unknown. Items with an _id are safe to send again: the same _id
//    overwrites itself, and a create that had in fact succeeded answers 409, which is then
//    counted as indexed.
//  * 200: per item (bulk_response.h): 2xx → indexed; a retryable failure → sent again; anything
//    else → dead-lettered with the server's status, type and reason.
//  * 429/5xx for the whole request: everything is sent again.
//  * 400/413 for the whole request: the request is split in halves until the culprit travels
//    alone, which is then dead-lettered; the other items go through.
//  * any other status (401, 403, 404): every item is dead-lettered with that status.
// Retries wait RetryBackoff::Delay(n) where n is the highest retry count among the items; an
// item that has used max_retries is dead-lettered as retries_exhausted.
//
// Ownership: owned by the run (the host), which outlives it; the writer owns its batch, its
// request buffers and its backoff timer. Threads: the host's loop thread only. The host is
// called back with OnWriterDone() after the last item is settled, possibly from inside a
// response callback; the host may call Start() again from there.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/http/client.h"
#include "hammer/net/event_loop.h"
#include "hammer/search/bulk_batch.h"
#include "hammer/search/bulk_response.h"
#include "hammer/search/bulk_stats.h"
#include "hammer/search/retry_backoff.h"

namespace hammer::search {

class BulkWriter;

// Where one request goes.
struct SendTarget {
  int node = -1;  // the host's node index
  const http::Origin* origin = nullptr;
  bool holds_primary = false;  // shard lanes: the node holds the lane's primary
};

// What ends a document's journey without indexing it.
enum class DeadLetterKind { kRejected, kRetriesExhausted, kOutcomeUnknown, kInterrupted };

struct WriterSettings {
  RetryBackoff backoff;
  Nanos timeout = 60 * kSecond;
  bool gzip = false;
};

class BulkWriterHost {
 public:
  virtual ~BulkWriterHost() = default;
  virtual http::HttpClient* client() = 0;
  virtual const WriterSettings& settings() const = 0;
  virtual BulkStats& stats() = 0;
  virtual BulkResponseParser& response_parser() = 0;
  virtual uint64_t Random() = 0;
  virtual bool stopping() const = 0;
  // The node for the next request of `lane`.
  virtual SendTarget PickTarget(int lane) = 0;
  // The serialized request head for `target` with a body of `body_bytes`.
  virtual std::string RequestHead(const SendTarget& target, size_t body_bytes, bool gzip) = 0;
  // Accounting of a request about to be sent: its first `count` items of `batch`.
  virtual void OnSending(const SendTarget& target, const BulkBatch& batch, size_t count,
                         size_t body_bytes, size_t uncompressed_bytes) = 0;
  virtual void OnNodeFailure(const SendTarget& target, std::string_view why) = 0;
  // Placement may have changed (a primary moved or failed): refresh the cluster view soon.
  virtual void OnRoutingChanged() = 0;
  virtual void DeadLetter(const BulkBatch& batch, const BatchItem& item, DeadLetterKind kind,
                          int status, std::string_view error_type, std::string_view reason) = 0;
  virtual void OnWriterDone(BulkWriter* writer) = 0;
};

class BulkWriter final : public http::ResponseHandler {
 public:
  BulkWriter(BulkWriterHost* host, net::EventLoop* loop, int lane);
  ~BulkWriter() override;
  BulkWriter(const BulkWriter&) = delete;
  BulkWriter& operator=(const BulkWriter&) = delete;

  int lane() const { return lane_; }
  bool busy() const { return batch_ != nullptr; }
  bool in_flight() const { return in_flight_; }
  // Requires !busy().
  void Start(std::unique_ptr<BulkBatch> batch);
  // While waiting for a retry: give up now (items dead-lettered as interrupted).
  void Interrupt();

  void OnResponseHead(const http::ResponseHead& head) override;
  void OnResponseBody(std::string_view data) override;
  void OnResponseComplete(const http::ExchangeResult& result) override;

 private:
  void SendWindow();
  void JudgeItems();
  void RetryWindow(std::string_view reason, bool maybe_applied, int status);
  void DeadLetterWindow(DeadLetterKind kind, int status, std::string_view type,
                        std::string_view reason);
  // Settles the window: items flagged in retry_ go again (after a backoff), the rest of the
  // batch after the window goes next; finishes when nothing is left. An item out of retries is
  // dead-lettered with `reason` and `status`: the server's last answer (0 when none came).
  void Advance(std::string_view reason, int status = 0);

  BulkWriterHost* host_;
  int lane_;
  std::unique_ptr<BulkBatch> batch_;
  size_t window_ = 0;              // items in the request in flight
  size_t split_limit_ = SIZE_MAX;  // after 400/413: at most this many items per request
  std::vector<uint8_t> retry_;     // per window item: send again
  SendTarget target_;
  std::string head_;
  std::string gzip_scratch_;
  size_t request_bytes_ = 0;
  bool in_flight_ = false;
  int status_ = 0;
  MonoNanos sent_at_ = 0;  // when the request in flight was handed to the client
  std::string response_;
  net::Timer backoff_;
};

}  // namespace hammer::search
