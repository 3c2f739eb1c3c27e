#include "hammer/search/bulk_session.h"

#include <cstdio>
#include <utility>

namespace hammer::search {
BulkSession::BulkSession(const BulkOptions& options, net::EventLoop* loop, net::Resolver* resolver,
                         DeadLetterWriter* dead_letters, BulkProgress* progress)
    : options_(options),
      loop_(loop),
      dead_letters_(dead_letters),
      progress_(progress),
      client_(loop, resolver, options.client),
      discovery_(&client_, options.discovery),
      random_(std::random_device{}()),
      refresh_timer_(loop,
                     [this] {
                       RequestRefresh();
                       refresh_timer_.ArmAfter(options_.refresh_interval);
                     }),
      refresh_soon_(loop, [this] { RequestRefresh(); }) {
  bulk_path_ = "/" + EncodePathSegment(options_.discovery.target) +
               "/_bulk?filter_path=took,errors,items.*.status,items.*.error";
  headers_ = options_.discovery.headers;
  headers_.emplace_back("Content-Type", "application/x-ndjson");
  gzip_headers_ = headers_;
  gzip_headers_.emplace_back("Content-Encoding", "gzip");
  stats_.target = options_.discovery.target;
  stats_.routing_mode =
      options_.routing == BulkRouting::kShardAware ? "shard-aware" : "round-robin";
}

BulkSession::~BulkSession() = default;

void BulkSession::Begin(std::function<void(Result<DocumentRouter>)> ready) {
  ready_ = std::move(ready);
  ++stats_.refreshes_started;
  discovery_.Refresh([this](Result<ClusterView> view) { OnFirstView(std::move(view)); });
}

void BulkSession::OnFirstView(Result<ClusterView> view) {
  if (stopping_) return;
  auto fail = [this](Status status) {
    finished_ = true;
    ready_(std::move(status));
    loop_->Stop();
  };
  if (!view.ok()) return fail(view.status());
  const IndexMetadata& metadata = view->metadata;
  Result<ShardRouter> router = ShardRouter::Create(metadata.spec);
  if (!router.ok()) {
    return fail(Status::Error("index " + view->resolved.index + ": " + router.status().message()));
  }
  shards_ = metadata.spec.number_of_shards;
  any_lane_ = shards_;
  stats_.shards = shards_;
  const int k = options_.writers_per_shard;
  const bool shard_aware = options_.routing == BulkRouting::kShardAware;
  const int writer_count = shard_aware ? (shards_ + 1) * k : shards_ * k;
  queue_ = std::make_unique<BatchQueue>(
      shards_ + 1, static_cast<size_t>(2 * writer_count + 2),
      [this](int lane) { loop_->Post([this, lane] { OnQueued(lane); }); });
  for (int i = 0; i < writer_count; ++i) {
    const int lane = shard_aware ? i / k : any_lane_;
    writers_.push_back(std::make_unique<BulkWriter>(this, loop_, lane));
  }
  ApplyView(*view);
  ++stats_.discoveries;
  last_refresh_ = loop_->UpdateNow();
  if (metadata.spec.has_routing_path) {
    std::fprintf(stderr,
                 "hammer bulk: index %s routes on index.routing_path (fields of _source): every "
                 "document is unroutable and goes to any node\n",
                 view->resolved.index.c_str());
  }
  for (const std::string* pipeline : {&metadata.default_pipeline, &metadata.final_pipeline}) {
    if (!pipeline->empty()) {
      std::fprintf(stderr,
                   "hammer bulk: index %s has ingest pipeline %s; if it changes _id, routing "
                   "or _index, hammer's shard guesses cost a hop (never correctness)\n",
                   view->resolved.index.c_str(), pipeline->c_str());
    }
  }
  refresh_timer_.ArmAfter(options_.refresh_interval);
  started_ = true;
  ready_(DocumentRouter(*router, options_.discovery.target, view->resolved.index,
                        view->resolved.index_routing));
}

int BulkSession::SlotFor(const ClusterNode& node) {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].address == node.http_address) return static_cast<int>(i);
  }
  NodeSlot slot;
  slot.address = node.http_address;
  Result<http::Url> url =
      http::ParseUrl(NodeBaseUrl(options_.discovery, node.http_address) + bulk_path_);
  if (!url.ok()) return -1;
  slot.bulk_url = std::move(*url);
  slot.origin = client_.GetOrigin(slot.bulk_url);
  nodes_.push_back(std::move(slot));
  return static_cast<int>(nodes_.size()) - 1;
}

void BulkSession::ApplyView(const ClusterView& view) {
  const bool first = primary_slot_.empty();
  const Placement before = CurrentPlacement();
  ApplyPlacement(view);
  if (!first && CurrentPlacement() != before) {
    ++stats_.placement_changes;
    for (NodeTraffic& traffic : stats_.nodes)
      traffic.requests_since_placement_change = 0;
  }
}

BulkSession::Placement BulkSession::CurrentPlacement() const {
  Placement placement{primary_slot_, {}};
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].listed) placement.second.push_back(static_cast<int>(i));
  }
  return placement;
}

void BulkSession::ApplyPlacement(const ClusterView& view) {
  for (NodeSlot& slot : nodes_)
    slot.listed = false;
  std::vector<int> slot_of_view_node;
  for (const ClusterNode& node : view.nodes) {
    const int slot = SlotFor(node);
    slot_of_view_node.push_back(slot);
    if (slot < 0) continue;
    nodes_[static_cast<size_t>(slot)].listed = true;
    nodes_[static_cast<size_t>(slot)].name = node.name;
    nodes_[static_cast<size_t>(slot)].id = node.id;
    stats_.Node(node.http_address, node.name);
  }
  if (static_cast<int32_t>(view.primary_node_ids.size()) != shards_) return;  // index replaced?
  primary_slot_.assign(static_cast<size_t>(shards_), -1);
  for (int32_t shard = 0; shard < shards_; ++shard) {
    const int node = view.PrimaryNodeIndex(shard);
    if (node >= 0)
      primary_slot_[static_cast<size_t>(shard)] = slot_of_view_node[static_cast<size_t>(node)];
  }
}

bool BulkSession::Usable(const NodeSlot& slot, MonoNanos now) const {
  return slot.listed && slot.origin != nullptr && slot.down_until <= now;
}

int BulkSession::NextNodeInTurn() {
  const MonoNanos now = loop_->now();
  const size_t n = nodes_.size();
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < n; ++i) {
      const size_t candidate = (turn_ + i) % n;
      const NodeSlot& slot = nodes_[candidate];
      const bool ok = pass == 0 ? Usable(slot, now) : slot.listed && slot.origin != nullptr;
      if (ok) {
        turn_ = candidate + 1;
        return static_cast<int>(candidate);
      }
    }
  }
  // Nothing listed is reachable: any node we ever knew (the request will fail and back off).
  for (size_t i = 0; i < n; ++i) {
    const size_t candidate = (turn_ + i) % n;
    if (nodes_[candidate].origin != nullptr) {
      turn_ = candidate + 1;
      return static_cast<int>(candidate);
    }
  }
  return 0;
}

SendTarget BulkSession::PickTarget(int lane) {
  if (options_.routing == BulkRouting::kShardAware && lane < shards_) {
    const int primary = primary_slot_[static_cast<size_t>(lane)];
    if (primary >= 0 && Usable(nodes_[static_cast<size_t>(primary)], loop_->now())) {
      return {primary, nodes_[static_cast<size_t>(primary)].origin, true};
    }
  }
  const int node = NextNodeInTurn();
  const bool holds = lane < shards_ && primary_slot_[static_cast<size_t>(lane)] == node;
  return {node, nodes_[static_cast<size_t>(node)].origin, holds};
}

std::string BulkSession::RequestHead(const SendTarget& target, size_t body_bytes, bool gzip) {
  return http::SerializeRequestHead("POST", nodes_[static_cast<size_t>(target.node)].bulk_url,
                                    gzip ? gzip_headers_ : headers_, body_bytes);
}

void BulkSession::OnSending(const SendTarget& target, const BulkBatch& batch, size_t count,
                            size_t body_bytes, size_t uncompressed_bytes) {
  const NodeSlot& slot = nodes_[static_cast<size_t>(target.node)];
  ++stats_.requests;
  stats_.body_bytes_sent += body_bytes;
  stats_.body_bytes_uncompressed += uncompressed_bytes;
  NodeTraffic& traffic = stats_.Node(slot.address, slot.name);
  ++traffic.requests;
  ++traffic.requests_since_placement_change;
  traffic.documents += count;
  traffic.body_bytes += body_bytes;
  // The server splits a bulk into one request per shard; those whose primary is elsewhere
  // travel to another node. Counted from hammer's view of the placement.
  seen_shards_.assign(static_cast<size_t>(shards_), 0);
  bool any_remote = false;
  bool any_unknown = false;
  for (size_t i = 0; i < count; ++i) {
    const int32_t shard = batch.items()[i].shard;
    if (shard < 0) {
      any_unknown = true;
      continue;
    }
    if (seen_shards_[static_cast<size_t>(shard)]) continue;
    seen_shards_[static_cast<size_t>(shard)] = 1;
    ++stats_.shard_requests;
    if (primary_slot_[static_cast<size_t>(shard)] != target.node) {
      ++stats_.shard_requests_remote;
      any_remote = true;
    }
  }
  if (any_remote) ++stats_.requests_off_primary;
  if (any_unknown) ++stats_.requests_unroutable;
  PublishProgress();
}

void BulkSession::OnNodeFailure(const SendTarget& target, std::string_view why) {
  NodeSlot& slot = nodes_[static_cast<size_t>(target.node)];
  const MonoNanos now = loop_->UpdateNow();
  if (slot.down_until <= now) {
    std::fprintf(stderr, "%shammer bulk: node %s (%s) failed: %.*s; avoiding it\n",
                 live_line_ ? "\r\x1b[K" : "", slot.name.c_str(), slot.address.c_str(),
                 static_cast<int>(why.size()), why.data());
  }
  slot.down_until = now + options_.node_down_period;
  discovery_.AvoidAddress(slot.address);
  RequestRefresh();
}

void BulkSession::OnRoutingChanged() {
  RequestRefresh();
}

void BulkSession::RequestRefresh() {
  if (!started_ || stopping_ || discovery_.running()) return;
  const MonoNanos now = loop_->UpdateNow();
  if (now - last_refresh_ < options_.min_refresh_gap) {
    if (!refresh_soon_.armed()) refresh_soon_.ArmAt(last_refresh_ + options_.min_refresh_gap);
    return;
  }
  last_refresh_ = now;
  ++stats_.refreshes_started;
  discovery_.Refresh([this](Result<ClusterView> view) { OnRefreshed(std::move(view)); });
}

void BulkSession::OnRefreshed(Result<ClusterView> view) {
  if (!view.ok()) {
    ++stats_.discovery_failures;
    return;
  }
  if (view->metadata.spec.number_of_shards != shards_) {
    ++stats_.discovery_failures;
    std::fprintf(stderr, "hammer bulk: %s now has %d shards (was %d); keeping the old view\n",
                 view->resolved.index.c_str(), view->metadata.spec.number_of_shards, shards_);
    return;
  }
  ++stats_.discoveries;
  ApplyView(*view);
}

void BulkSession::DeadLetter(const BulkBatch& batch, const BatchItem& item, DeadLetterKind kind,
                             int status, std::string_view error_type, std::string_view reason) {
  switch (kind) {
    case DeadLetterKind::kRejected:
      ++stats_.rejected_by_server;
      break;
    case DeadLetterKind::kRetriesExhausted:
      ++stats_.retries_exhausted;
      break;
    case DeadLetterKind::kOutcomeUnknown:
      ++stats_.outcome_unknown;
      break;
    case DeadLetterKind::kInterrupted:
      ++stats_.interrupted;
      break;
  }
  progress_->dead_lettered.fetch_add(1, std::memory_order_relaxed);
  dead_letters_->Write({reason, status, error_type, batch.Action(item), batch.Source(item),
                        item.has_source, item.line});
}

void BulkSession::OnQueued(int lane) {
  if (queue_ == nullptr) return;
  if (lane >= 0) {
    for (auto& writer : writers_) {
      if (writer->lane() == lane && !writer->busy()) {
        Feed(writer.get());
        if (!writer->busy()) break;  // the lane is empty
      }
    }
  }
  MaybeFinish();
}

void BulkSession::Feed(BulkWriter* writer) {
  if (stopping_) return;
  std::unique_ptr<BulkBatch> batch = queue_->Pop(writer->lane());
  if (batch) writer->Start(std::move(batch));
}

void BulkSession::OnWriterDone(BulkWriter* writer) {
  queue_->Release();
  PublishProgress();
  Feed(writer);
  MaybeFinish();
}

void BulkSession::Stop() {
  if (stopping_) return;
  stopping_ = true;
  if (!started_) {
    finished_ = true;
    loop_->Stop();
    return;
  }
  queue_->Abort();
  for (std::unique_ptr<BulkBatch>& batch : queue_->DrainAll()) {
    for (const BatchItem& item : batch->items()) {
      DeadLetter(*batch, item, DeadLetterKind::kInterrupted, 0, kInterruptedType,
                 "the run was stopped before this document was sent");
    }
  }
  for (auto& writer : writers_)
    writer->Interrupt();
  PublishProgress();
  MaybeFinish();
}

void BulkSession::MaybeFinish() {
  if (finished_ || queue_ == nullptr) return;
  if (!stopping_ && (!queue_->input_closed() || queue_->queued() > 0)) return;
  for (const auto& writer : writers_) {
    if (writer->busy()) return;
  }
  finished_ = true;
  refresh_timer_.Cancel();
  refresh_soon_.Cancel();
  loop_->Stop();
}

void BulkSession::PublishProgress() {
  progress_->indexed.store(stats_.indexed, std::memory_order_relaxed);
  progress_->requests.store(stats_.requests, std::memory_order_relaxed);
  progress_->retries.store(stats_.items_retried, std::memory_order_relaxed);
  uint64_t in_flight = 0;
  for (const auto& writer : writers_)
    in_flight += writer->in_flight() ? 1 : 0;
  progress_->in_flight.store(in_flight, std::memory_order_relaxed);
}

BulkStats BulkSession::TakeStats() {
  client_.CloseIdle();
  return std::move(stats_);
}

}  // namespace hammer::search
