// BulkSession: the event-loop side of a `hammer bulk` run. It discovers the cluster, keeps the
// view of where each primary lives (refreshed on a timer, after a node failure and when item
// errors say a primary moved), owns the writers (K per lane), hands them the batches the
// reader queues, picks the node for every request, and keeps the loop-side statistics.
//
// Node choice (PickTarget): shard-aware, lane s goes to the node holding primary s when that
// node is known and not in its down period; otherwise, and for the lane of unroutable
// documents and in round-robin mode, to the next usable node in turn. A node that failed at
// the transport level is avoided for node_down_period and until a refresh lists it again.
// A refresh whose view moves a primary or changes the listed nodes is a placement change: it is
// counted, and each node's requests_since_placement_change starts again from 0 (NodeTraffic).
//
// The run ends when the reader has closed its input, nothing is queued and every writer is
// idle; then the session stops its loop. Stop() ends it early: queued batches and pending
// retries are dead-lettered as interrupted, requests in flight finish first.
//
// Ownership: borrows the loop, resolver, dead-letter writer and progress; owns the client,
// discovery, queue, writers and timers. Threads: everything on the loop thread, except
// queue(), which the reader thread uses (BatchQueue is thread-safe), and construction.
#pragma once

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hammer/http/client.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/resolver.h"
#include "hammer/search/batch_queue.h"
#include "hammer/search/bulk_options.h"
#include "hammer/search/bulk_stats.h"
#include "hammer/search/bulk_writer.h"
#include "hammer/search/cluster_discovery.h"
#include "hammer/search/dead_letter.h"
#include "hammer/search/document_router.h"

namespace hammer::search {

class BulkSession final : public BulkWriterHost {
 public:
  BulkSession(const BulkOptions& options, net::EventLoop* loop, net::Resolver* resolver,
              DeadLetterWriter* dead_letters, BulkProgress* progress);
  ~BulkSession() override;
  BulkSession(const BulkSession&) = delete;
  BulkSession& operator=(const BulkSession&) = delete;

  // Discovers the cluster; `ready` then runs on the loop with the router for the reader (or
  // the error that ends the run, after which the loop is stopped).
  void Begin(std::function<void(Result<DocumentRouter>)> ready);
  // Graceful early end (a signal).
  void Stop();
  // Messages clear the live progress line first.
  void set_live_line(bool on) { live_line_ = on; }

  // Valid once Begin's `ready` has run with a router.
  BatchQueue* queue() { return queue_.get(); }
  // After the loop stopped.
  BulkStats TakeStats();

  // BulkWriterHost.
  http::HttpClient* client() override { return &client_; }
  const WriterSettings& settings() const override { return options_.writer; }
  BulkStats& stats() override { return stats_; }
  BulkResponseParser& response_parser() override { return parser_; }
  uint64_t Random() override { return random_(); }
  bool stopping() const override { return stopping_; }
  SendTarget PickTarget(int lane) override;
  std::string RequestHead(const SendTarget& target, size_t body_bytes, bool gzip) override;
  void OnSending(const SendTarget& target, const BulkBatch& batch, size_t count, size_t body_bytes,
                 size_t uncompressed_bytes) override;
  void OnNodeFailure(const SendTarget& target, std::string_view why) override;
  void OnRoutingChanged() override;
  void DeadLetter(const BulkBatch& batch, const BatchItem& item, DeadLetterKind kind, int status,
                  std::string_view error_type, std::string_view reason) override;
  void OnWriterDone(BulkWriter* writer) override;

 private:
  struct NodeSlot {
    std::string address;  // host:port
    std::string name;
    std::string id;
    http::Url bulk_url;  // POST target on this node
    const http::Origin* origin = nullptr;
    MonoNanos down_until = 0;
    bool listed = false;  // in the latest view
  };

  // Where the primaries are (a slot per shard) and which slots the view lists.
  using Placement = std::pair<std::vector<int>, std::vector<int>>;

  void OnFirstView(Result<ClusterView> view);
  // Takes a view's nodes and primary placement; counts a placement change (BulkStats).
  void ApplyView(const ClusterView& view);
  void ApplyPlacement(const ClusterView& view);
  Placement CurrentPlacement() const;
  int SlotFor(const ClusterNode& node);
  bool Usable(const NodeSlot& slot, MonoNanos now) const;
  int NextNodeInTurn();
  void OnQueued(int lane);
  void Feed(BulkWriter* writer);
  void RequestRefresh();
  void OnRefreshed(Result<ClusterView> view);
  void MaybeFinish();
  void PublishProgress();

  BulkOptions options_;
  net::EventLoop* loop_;
  DeadLetterWriter* dead_letters_;
  BulkProgress* progress_;
  http::HttpClient client_;
  ClusterDiscovery discovery_;
  std::unique_ptr<BatchQueue> queue_;  // created once the shard count is known
  BulkResponseParser parser_;
  std::mt19937_64 random_;
  std::function<void(Result<DocumentRouter>)> ready_;
  std::string bulk_path_;
  http::HeaderList headers_;
  http::HeaderList gzip_headers_;

  int32_t shards_ = 0;
  int any_lane_ = 0;
  std::vector<NodeSlot> nodes_;    // never shrinks: SendTarget::node stays valid
  std::vector<int> primary_slot_;  // per shard: index into nodes_, or -1
  size_t turn_ = 0;
  std::vector<std::unique_ptr<BulkWriter>> writers_;
  std::vector<uint8_t> seen_shards_;  // OnSending scratch
  BulkStats stats_;
  bool live_line_ = false;
  bool started_ = false;
  bool stopping_ = false;
  bool finished_ = false;
  MonoNanos last_refresh_ = 0;
  net::Timer refresh_timer_;  // periodic refresh
  net::Timer refresh_soon_;   // a rate-limited refresh after a failure
};

}  // namespace hammer::search
