#include "hammer/dark/proxy_handler.h"

#include <algorithm>
#include <utility>

#include "hammer/base/base64.h"
#include "hammer/dark/comparison_join.h"
#include "hammer/dark/forwarding.h"
#include "hammer/http/grpc_wire.h"
#include "hammer/http/request_writer.h"
#include "hammer/stats/key_template.h"

namespace hammer::dark {

DarkProxyHandler::DarkProxyHandler(net::EventLoop* loop, net::Resolver* resolver,
                                   const DarkOptions* options, const Membership* membership,
                                   ClusterRegistry* registry, DarkLoopCounters* counters,
                                   uint64_t seed,
                                   std::shared_ptr<const http::TlsClientConfig> upstream_tls,
                                   http::BufferBudget* budget, UpstreamPool* pool,
                                   CaptureWriter* capture)
    : loop_(loop),
      resolver_(resolver),
      options_(options),
      counters_(counters),
      registry_(registry),
      membership_(*membership),
      eligibility_(options->allow, options->deny, options->trust_method_override,
                   options->dark_grpc_methods),
      rng_(seed),
      pool_(pool),
      capture_(capture),
      upstreams_(*pool),
      primaries_(loop),
      copies_(loop),
      taps_(loop) {
  client_options_.connect_timeout = options->connect_timeout;
  holding_.loop = loop;
  holding_.max_response_bytes = options->max_response_bytes;
  holding_.stream_threshold = options->stream_threshold;
  holding_.compare_capture_bytes = options->compare_max_body_bytes;
  holding_.budget = budget;
  client_options_.tls_config = std::move(upstream_tls);
  http2_options_ = client_options_;
  http2_options_.http2.enabled = true;  // no fallback: a server that refuses is a failure
  http2_options_.http2.window_bytes = static_cast<int32_t>(http::kDefaultStreamWindow);
  // The comparison secondary is a second regular instance: it speaks what the regular ones do.
  const http::ClientOptions& regular = options->upstream_http2 ? http2_options_ : client_options_;
  upstream_client_ = std::make_unique<http::HttpClient>(loop, resolver, regular);
  secondary_client_ = std::make_unique<http::HttpClient>(loop, resolver, regular);
  tunnel_client_ = std::make_unique<http::HttpClient>(loop, resolver, client_options_);
  if (options->compare) {
    reports_.resize(counters_->clusters.size());
    JsonDiffOptions diff;
    diff.headers = options->compare_headers;
    diff.ignore = options->compare_ignore;
    diff.max_body_bytes = options->compare_max_body_bytes;
    diff_ = std::make_unique<JsonDiff>(diff);
  }
  SyncClusters();
}

DarkProxyHandler::~DarkProxyHandler() {
  // Copies first: they may still tell the comparison joins of the requests in flight.
  AbandonCopies();
  taps_.TakeAll();  // each detaches from its request's body
  AbandonRequests();
}

size_t DarkProxyHandler::AbandonCopies() {
  for (auto& cluster : clusters_)
    cluster->client().CancelAll();
  secondary_client_->CancelAll();
  std::vector<std::unique_ptr<DarkCopy>> abandoned = copies_.TakeAll();
  for (auto& copy : abandoned)
    copy->Abandon();
  return abandoned.size();
}

void DarkProxyHandler::StartDraining() {
  draining_ = true;
  for (auto& cluster : clusters_)
    cluster->Deactivate();  // constant-qps schedules stop
  active_.clear();
  AbandonCopies();
}

size_t DarkProxyHandler::AbandonRequests() {
  upstream_client_->CancelAll();
  std::vector<std::unique_ptr<PrimaryExchange>> abandoned = primaries_.TakeAll();
  Bump(counters_->proxy.abandoned, abandoned.size());
  return abandoned.size();
}

ForwardOptions DarkProxyHandler::ForwardOptionsFor(const http::IncomingRequest& request) const {
  ForwardOptions forward;
  forward.preserve_host = options_->preserve_host;
  if (options_->forwarded_for) forward.client_ip = request.client_ip;
  return forward;
}

DarkCluster* DarkProxyHandler::ClusterFor(const DarkClusterMembership& cluster) {
  for (auto& runtime : clusters_) {
    if (runtime->name() == cluster.config.name) return runtime.get();
  }
  size_t index = registry_->IndexOf(cluster.config.name);
  if (index >= counters_->clusters.size()) return nullptr;  // beyond what can be counted
  // By name, so a cluster that ZooKeeper announces later gets its protocol too.
  const bool http2 = options_->DarkClusterSpeaksHttp2(cluster.config.name);
  clusters_.push_back(std::make_unique<DarkCluster>(cluster.config.name, index, loop_, resolver_,
                                                    http2 ? http2_options_ : client_options_));
  if (options_->compare) {
    ComparisonReportOptions report;
    report.latency_interval = options_->verdict_interval;
    reports_[index] = std::make_unique<ComparisonReport>(report);
  }
  return clusters_.back().get();
}

// Brings the clusters in line with the latest membership snapshot. A cluster keeps its
// state (credit, pools, in-flight copies) across changes; one that left stops forking.
void DarkProxyHandler::SyncClusters() {
  const MembershipSnapshot& snapshot = membership_.Get();
  if (membership_.version() == synced_version_) return;
  synced_version_ = membership_.version();
  active_.clear();
  auto send_stored = [this](DarkCluster& cluster, const StoredRequest& request) {
    http::RequestHead head = request.Head();
    SendCopy(cluster, head, request.body, request.client_ip, nullptr);
  };
  for (const DarkClusterMembership& membership : snapshot.dark) {
    DarkCluster* cluster = ClusterFor(membership);
    if (cluster == nullptr) continue;
    cluster->Apply(membership, snapshot.regular_instances, options_->bernoulli, rng_, send_stored);
    active_.push_back(cluster);
  }
  for (auto& cluster : clusters_) {
    if (std::find(active_.begin(), active_.end(), cluster.get()) == active_.end()) {
      cluster->Deactivate();
    }
  }
}

namespace {

// The largest gRPC request body kept to be sent again (a unary call's message, usually).
constexpr size_t kGrpcRetryCopy = 64 * 1024;

}  // namespace

void DarkProxyHandler::OnRequest(const http::IncomingRequest& received, http::Responder responder) {
  Bump(counters_->proxy.requests);
  const bool http2 = received.head.major_version == 2;
  if (http2) Bump(counters_->proxy.http2_requests);
  // The client never picks the upstream's virtual host: absolute-form becomes origin-form
  // here, once, for the regular request, eligibility, comparison and every copy.
  std::string_view target = ForwardTarget(received.head.method, received.head.target);
  if (target.empty()) {
    Bump(counters_->proxy.bad_targets);
    Bump(counters_->proxy.responses);
    responder.Respond(400, "text/plain",
                      "hammer dark: the request-target must be origin-form (/path) or "
                      "absolute-form (http://host/path)\n");
    return;
  }
  if (http2 && !options_->upstream_http2 && http::IsGrpc(received.head.headers)) {
    // gRPC needs HTTP/2 end to end (trailers, streams in both directions): a Trailers-Only
    // answer with status UNAVAILABLE (14) says why rather than a broken call.
    Bump(counters_->proxy.responses);
    const http::Header status[] = {{"grpc-status", "14"},
                                   {"grpc-message",
                                    "hammer dark: the upstream is spoken to in HTTP/1.1 "
                                    "(start dark with --upstream-http2 to pass gRPC)"}};
    responder.Respond(200, "application/grpc", "", status);
    return;
  }
  if (http::FindHeader(received.head.headers, kDarkHeader)) {
    Bump(counters_->proxy.dark_headers_removed);  // ForwardRequestHead never passes it on
  }
  http::RequestHead head = received.head;
  head.target = target;
  const http::IncomingRequest request{head,
                                      received.body,
                                      received.client_ip,
                                      received.body_stream,
                                      received.upgrade,
                                      received.trailers,
                                      received.connection};
  if (!draining_) SyncClusters();
  std::shared_ptr<UpstreamInstance> instance = pool_->Pick(Upstreams(), rng_, loop_->now());
  if (instance == nullptr) {
    Bump(counters_->proxy.no_instance);
    Bump(counters_->proxy.responses);
    responder.Respond(503, "text/plain",
                      "hammer dark: no regular instance to send to (the upstream's DNS name or "
                      "ZooKeeper members list none now)\n");
    return;
  }
  const http::Url& upstream = instance->url();
  bool eligible = eligibility_.Eligible(request.head);
  std::shared_ptr<ComparisonJoin> join;
  if (eligible && !request.upgrade && options_->compare && !active_.empty()) {
    join = std::make_shared<ComparisonJoin>(
        diff_.get(), stats::EndpointKey(request.head.method, request.head.target),
        std::string(request.head.method) + " " + std::string(request.head.target));
  }
  bool head_request = request.head.method == "HEAD";
  PrimaryExchange* primary = primaries_.Adopt(std::make_unique<PrimaryExchange>(
      &primaries_, &counters_->proxy, holding_, std::move(responder), head_request,
      http2 || request.head.minor_version >= 1, join, UpstreamBody(request)));
  ForwardOptions forward = ForwardOptionsFor(request);
  const bool grpc = http::IsGrpc(request.head.headers);
  std::unique_ptr<CapturedExchange> captured;
  if (capture_ != nullptr && !request.upgrade) {
    const int64_t now_us = WallNowMicros();
    if (capture_->Choose(request.head.method, request.head.target, now_us, rng_)) {
      captured = std::make_unique<CapturedExchange>();
      captured->arrival_us = now_us;
      captured->protocol = http2                             ? "HTTP/2"
                           : request.head.minor_version == 0 ? "HTTP/1.0"
                                                             : "HTTP/1.1";
      captured->https = options_->listener_tls.enabled();
      captured->authority = http::FindHeader(request.head.headers, "Host").value_or("");
      captured->connection = request.connection;
    }
  }
  if (request.upgrade) {
    // A tunnel to the primary only: never forked, compared or retried.
    primary->ExpectUpgrade();
    forward.upgrade = true;
    std::string key;
    if (http2) {  // an extended CONNECT: the HTTP/1.1 handshake needs a key of its own
      std::string nonce(16, '\0');
      for (char& c : nonce)
        c = static_cast<char>(rng_() & 0xff);
      key = Base64Encode(nonce);
      forward.websocket_key = key;
    }
    primary->head() = ForwardRequestHead(request.head, upstream, 0, forward);
  } else if (http::BodyStream* stream = primary->request_stream()) {
    if (request.body_stream != nullptr) Bump(counters_->proxy.streamed_requests);
    // A gRPC call's body is streamed (it may be a client stream) but most are one small
    // message: kept, so that an UNAVAILABLE answer can be retried (PrimaryExchange), and kept
    // up to the capture's limit for --capture.
    size_t keep = options_->retries > 0 && grpc ? kGrpcRetryCopy : 0;
    if (captured) keep = std::max(keep, capture_->body_limit());
    if (keep > 0) stream->KeepConsumed(keep);
    forward.chunked_body = !stream->length();
    primary->head() =
        ForwardRequestHead(request.head, upstream, stream->length().value_or(0), forward);
  } else {
    primary->head() = ForwardRequestHead(request.head, upstream, request.body.size(), forward);
    primary->body().assign(request.body);
  }
  primary->instance = std::move(instance);
  primary->ObserveTries(this, http::IsIdempotentMethod(request.head.method));
  primary->WatchClient();
  if (captured) primary->CaptureTo(capture_, std::move(captured));
  // --upstream-timeout is both the wait for the answer to begin and the longest pause inside
  // it (a long download, an event stream). A gRPC client may bound its call itself
  // (grpc-timeout): that is then the deadline of the whole call.
  MonoNanos deadline = MonoNow() + options_->upstream_timeout;
  primary->idle_timeout = options_->upstream_timeout;
  if (grpc) {
    primary->ExpectGrpc();
    std::optional<std::string_view> timeout =
        http::FindHeader(request.head.headers, "grpc-timeout");
    if (std::optional<int64_t> nanos = timeout ? http::ParseGrpcTimeout(*timeout) : std::nullopt) {
      deadline = MonoNow() + *nanos;
      primary->idle_timeout = 0;
    }
  }
  SendTry(*primary, deadline);

  // The copies go out after the regular request and are never awaited.
  for (DarkCluster* cluster : active_)
    Bump(counters_->clusters[cluster->index()].considered);
  if (request.upgrade || !eligible) {
    if (!active_.empty()) {
      if (request.upgrade) {
        Bump(counters_->proxy.not_forked_upgrade);
      } else if (grpc) {
        Bump(counters_->proxy.not_forked_grpc_unlisted);
      }
    }
    return;
  }
  if (grpc && request.body_stream != nullptr) {
    ForkWhenWhole(request, join);
    return;
  }
  // An HTTP/2 body is held whole (the stream's own cap), but one that HTTP/1.1 would have
  // streamed is not copied either: eligibility does not depend on the client's protocol.
  const bool streamed =
      request.body_stream != nullptr ||
      (options_->stream_threshold != 0 && request.body.size() > options_->stream_threshold);
  if (streamed && !active_.empty()) Bump(counters_->proxy.not_forked_too_large);
  Fork(request, join, streamed);
  if (!streamed && join && join->dark_expected() && !options_->compare_secondary.empty()) {
    SendSecondary(request, join);
  }
}

// The request body as the primary sends it: the client's stream, its trailers filtered as
// they will arrive; a body held whole that came with trailers, as a stream that is already
// whole (an HTTP/1.1 upstream gets it chunked, with its trailer section; an HTTP/2 one, with a
// trailing HEADERS frame); else none (the body goes with Content-Length).
std::shared_ptr<http::BodyStream> DarkProxyHandler::UpstreamBody(
    const http::IncomingRequest& request) {
  if (request.upgrade) return request.body_stream;
  if (request.body_stream != nullptr) {
    request.body_stream->FilterTrailers(&ForwardsTrailer);
    return request.body_stream;
  }
  if (request.trailers.empty()) return nullptr;
  auto whole = std::make_shared<http::BodyStream>(loop_, std::nullopt, holding_.stream_window,
                                                  holding_.budget);
  whole->FilterTrailers(&ForwardsTrailer);
  whole->Append(request.body);
  whole->SetTrailers(request.trailers);
  whole->End();
  return whole;
}

void DarkProxyHandler::SendTry(PrimaryExchange& exchange, MonoNanos deadline) {
  // A tunnel is opened over HTTP/1.1 whatever the regular side speaks (an HTTP/2 upstream
  // would need extended CONNECT, RFC 8441).
  http::HttpClient& client = exchange.upgrade() ? *tunnel_client_ : *upstream_client_;
  http::ClientRequest out;
  out.upgrade = exchange.upgrade();
  const UpstreamInstance& instance = *exchange.instance;
  out.origin = client.GetOrigin(instance.url(), instance.address());
  out.head = exchange.head();
  if (http::BodyStream* stream = exchange.request_stream()) {
    out.body_stream = stream;
  } else {
    out.body = exchange.body();
  }
  out.flow = exchange.flow();
  std::string_view method =
      std::string_view(exchange.head()).substr(0, std::string_view(exchange.head()).find(' '));
  out.head_method = method == "HEAD";
  out.idempotent = http::IsIdempotentMethod(method);
  out.deadline = deadline;
  out.idle_timeout = exchange.idle_timeout;
  if (options_->per_try_timeout > 0) {
    out.deadline = std::min(deadline, MonoNow() + options_->per_try_timeout);
  }
  exchange.deadline = deadline;
  client.Send(out, &exchange);
}

namespace {

TryOutcome OutcomeOf(const http::ExchangeResult& result) {
  if (result.failure) {
    return *result.failure == Failure::kConnect ? TryOutcome::kConnectFailure : TryOutcome::kReset;
  }
  return result.status >= 500 ? TryOutcome::kServerError : TryOutcome::kAnswered;
}

}  // namespace

bool DarkProxyHandler::TryEnded(PrimaryExchange& exchange, const http::ExchangeResult& result,
                                bool retryable) {
  const MonoNanos now = loop_->now();
  // gRPC's UNAVAILABLE is the server saying it cannot serve: a 5xx for outlier detection.
  pool_->Finished(*exchange.instance,
                  exchange.grpc_unavailable() ? TryOutcome::kServerError : OutcomeOf(result), now);
  if (exchange.retry_in_budget) --retries_in_flight_;
  exchange.retry_in_budget = false;
  const UpstreamSet& upstreams = Upstreams();
  if (!retryable || draining_ || upstreams.size() < 2 || exchange.retries >= options_->retries ||
      now >= exchange.deadline) {
    return false;
  }
  // Every other instance is known to fail: another try would only add to the load on them.
  if (!upstreams.AnyAvailable(now, exchange.instance.get())) {
    Bump(counters_->proxy.retries_no_instance);
    exchange.no_instance_available = true;
    return false;
  }
  // A retry budget, as Envoy's: retries in flight stay within a share of the requests in
  // flight (at least 3), so a failing cluster is not answered with a storm of retries. A try
  // that could not connect gave no instance any work: its retry is outside the budget (a
  // killed instance fails every try in flight on it at once), bounded by --retries and by
  // the ejection that three such failures bring.
  const bool adds_work = !result.failure || *result.failure != Failure::kConnect;
  size_t budget = std::max<size_t>(3, primaries_.size() * options_->retry_budget_percent / 100);
  if (adds_work && retries_in_flight_ >= budget) {
    Bump(counters_->proxy.retries_over_budget);
    return false;
  }
  std::shared_ptr<UpstreamInstance> from = std::move(exchange.instance);
  exchange.instance = pool_->Pick(upstreams, rng_, now, from.get());
  if (!options_->preserve_host) {
    exchange.head() = RetargetHost(exchange.head(), from->url(), exchange.instance->url());
  }
  ++exchange.retries;
  if (adds_work) ++retries_in_flight_;
  exchange.retry_in_budget = adds_work;
  Bump(counters_->proxy.retries);
  SendTry(exchange, exchange.deadline);
  return true;
}

void DarkProxyHandler::TryAbandoned(PrimaryExchange& exchange) {
  pool_->Finished(*exchange.instance, TryOutcome::kAnswered, loop_->now());
  if (exchange.retry_in_budget) --retries_in_flight_;
  exchange.retry_in_budget = false;
}

const UpstreamSet& DarkProxyHandler::Upstreams() {
  const UpstreamSet& set = upstreams_.Get();
  if (upstreams_seen_.get() == &set) return set;
  if (upstreams_seen_ != nullptr) {
    // Instances that left are drained: their tries in flight finish, their idle connections go.
    for (const auto& instance : upstreams_seen_->instances) {
      if (!instance->removed()) continue;
      upstream_client_->CloseIdle(
          upstream_client_->GetOrigin(instance->url(), instance->address()));
    }
  }
  upstreams_seen_ = upstreams_.shared();
  return set;
}

// Each cluster's share of the request is decided here, once: counted eligible, offered to a
// constant-QPS cluster's schedule, or drawn by the cluster's strategy; then every copy drawn is
// sent. A `streamed` request is not copied: its copies are counted as streamed instead (as a
// dropped copy would be), a constant-QPS cluster is not offered it, and a compared request
// counts its copies unsent.
void DarkProxyHandler::Fork(const http::IncomingRequest& request,
                            const std::shared_ptr<ComparisonJoin>& join, bool streamed) {
  IdenticalSelector identical(rng_, options_->identical_header, request.head.headers);
  for (DarkCluster* cluster : active_) {
    ClusterCounters& counters = counters_->clusters[cluster->index()];
    Bump(counters.eligible);
    if (cluster->strategy() == ForkStrategyKind::kConstantQps) {
      // Kept for the cluster's own schedule; never sent from the request path.
      if (streamed) {
        Bump(counters.streamed);
      } else {
        cluster->OfferForSchedule(request);
      }
      continue;
    }
    uint32_t copies = cluster->CopiesFor(identical);
    Bump(counters.selected, copies);
    if (copies == 0) continue;
    // The first copy to each cluster is compared (one answer per cluster and request).
    if (join) join->ExpectDark(cluster->index(), reports_[cluster->index()].get());
    if (streamed) {
      Bump(counters.streamed, copies);
      if (join) join->DarkNotSent(cluster->index());
      continue;
    }
    for (uint32_t i = 0; i < copies; ++i) {
      SendCopy(*cluster, request.head, request.body, request.client_ip,
               i == 0 ? join : std::shared_ptr<ComparisonJoin>());
    }
  }
}

void DarkProxyHandler::ForkWhenWhole(const http::IncomingRequest& request,
                                     const std::shared_ptr<ComparisonJoin>& join) {
  IdenticalSelector identical(rng_, options_->identical_header, request.head.headers);
  std::vector<TappedRequest::Planned> planned;
  for (DarkCluster* cluster : active_) {
    ClusterCounters& counters = counters_->clusters[cluster->index()];
    Bump(counters.eligible);
    if (cluster->strategy() == ForkStrategyKind::kConstantQps) {
      Bump(counters.streamed);  // its schedule replays whole requests only
      continue;
    }
    uint32_t copies = cluster->CopiesFor(identical);
    Bump(counters.selected, copies);
    if (copies == 0) continue;
    if (join) join->ExpectDark(cluster->index(), reports_[cluster->index()].get());
    if (!options_->DarkClusterSpeaksHttp2(cluster->name())) {  // gRPC needs HTTP/2
      Bump(counters.skipped_grpc_http1, copies);
      if (join) join->DarkNotSent(cluster->index());
      continue;
    }
    planned.push_back({cluster, copies});
  }
  if (planned.empty()) return;
  const size_t limit = options_->stream_threshold != 0 ? options_->stream_threshold
                                                       : options_->max_request_body_bytes;
  TappedRequest* tapped = taps_.Adopt(std::make_unique<TappedRequest>(
      &taps_, loop_, request, request.head.target, join, std::move(planned), limit,
      [this](TappedRequest& t, bool whole) { SendTapped(t, whole); }));
  if (!tapped->Attach(request.body_stream)) SendTapped(*tapped, false);
}

// A unary call's request is one message; a client or bidirectional stream's is any number of
// them, and is not copied (its answers depend on what the client sends as it goes).
void DarkProxyHandler::SendTapped(TappedRequest& tapped, bool whole) {
  std::optional<std::vector<std::string_view>> messages;
  if (whole) messages = http::SplitGrpcMessages(tapped.body());
  const bool send = messages && messages->size() == 1 && !draining_;
  if (!send && !draining_) {
    if (tapped.over_limit()) {
      Bump(counters_->proxy.not_forked_too_large);
    } else if (whole) {
      Bump(counters_->proxy.not_forked_grpc_streaming);
    }  // else the client or the upstream gave up on the call: nothing to copy
  }
  for (const TappedRequest::Planned& planned : tapped.planned()) {
    if (!send) {
      if (tapped.join()) tapped.join()->DarkNotSent(planned.cluster->index());
      continue;
    }
    for (uint32_t i = 0; i < planned.copies; ++i) {
      SendCopy(*planned.cluster, tapped.head(), tapped.body(), tapped.client_ip(),
               i == 0 ? tapped.join() : std::shared_ptr<ComparisonJoin>());
    }
  }
  tapped.Finish();
}

void DarkProxyHandler::SendCopy(DarkCluster& cluster, const http::RequestHead& head,
                                std::string_view body, std::string_view client_ip,
                                std::shared_ptr<ComparisonJoin> join) {
  if (!options_->forwarded_for) client_ip = {};
  ClusterCounters& counters = counters_->clusters[cluster.index()];
  switch (cluster.Admit(options_->dark_max_in_flight, loop_->now())) {
    case CopyAdmission::kSend:
      break;
    case CopyAdmission::kNoInstances:
      if (join) join->DarkNotSent(cluster.index());
      return;
    case CopyAdmission::kBudgetFull:
      Bump(counters.dropped);
      if (join) join->DarkNotSent(cluster.index());
      return;
    case CopyAdmission::kBackingOff:
      Bump(counters.backed_off);
      if (join) join->DarkFailed(cluster.index());
      return;
  }
  const http::Url& url = cluster.NextUrl();
  DarkCopy* copy = copies_.Adopt(std::make_unique<DarkCopy>(
      &copies_, &cluster, &counters, std::move(join), options_->compare_max_body_bytes));
  ForwardOptions forward;
  forward.preserve_host = options_->preserve_host;
  forward.client_ip = client_ip;
  forward.extra_header = cluster.dark_header();
  copy->head() = ForwardRequestHead(head, url, body.size(), forward);
  copy->body().assign(body);
  http::ClientRequest out;
  out.origin = cluster.client().GetOrigin(url);
  out.head = copy->head();
  out.body = copy->body();
  out.head_method = head.method == "HEAD";
  out.idempotent = http::IsIdempotentMethod(head.method);
  out.deadline = MonoNow() + options_->dark_timeout;
  cluster.CopyStarted();
  Bump(counters.sent);
  Bump(counters.in_flight);
  cluster.client().Send(out, copy);
}

void DarkProxyHandler::SendSecondary(const http::IncomingRequest& request,
                                     std::shared_ptr<ComparisonJoin> join) {
  const http::Url& url =
      options_->compare_secondary[next_secondary_++ % options_->compare_secondary.size()];
  join->ExpectSecondary();
  DarkCopy* copy =
      copies_.Adopt(std::make_unique<DarkCopy>(&copies_, join, options_->compare_max_body_bytes));
  ForwardOptions forward = ForwardOptionsFor(request);
  copy->head() = ForwardRequestHead(request.head, url, request.body.size(), forward);
  copy->body().assign(request.body);
  http::ClientRequest out;
  out.origin = secondary_client_->GetOrigin(url);
  out.head = copy->head();
  out.body = copy->body();
  out.deadline = MonoNow() + options_->dark_timeout;
  secondary_client_->Send(out, copy);
}

}  // namespace hammer::dark
