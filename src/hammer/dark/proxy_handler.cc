#include "hammer/dark/proxy_handler.h"

#include <algorithm>
#include <utility>

#include "hammer/dark/comparison_join.h"
#include "hammer/dark/forwarding.h"
#include "hammer/http/owned_headers.h"
#include "hammer/http/request_writer.h"

namespace hammer::dark {

// A request kept for later (constant-qps re-sends): head fields and body, owned.
struct StoredRequest {
  http::OwnedHeaders headers;  // Extra(0) = method, Extra(1) = target
  std::string body;
  http::BodyFraming framing = http::BodyFraming::kNone;

  http::RequestHead Head() const {
    http::RequestHead head;
    head.method = headers.Extra(0);
    head.target = headers.Extra(1);
    head.headers = headers.headers();
    head.framing = framing;
    return head;
  }
};

// constant-qps: recent eligible requests of one dark cluster, re-sent on the cluster's own
// schedule (Nd x target / Ns per second) whatever the inbound rate.
class ConstantQpsFeeder {
 public:
  ConstantQpsFeeder(DarkProxyHandler* owner, DarkProxyHandler::ClusterRuntime* cluster,
                    ConstantQpsDispatcher<std::shared_ptr<const StoredRequest>> dispatcher)
      : owner_(owner),
        cluster_(cluster),
        dispatcher_(std::move(dispatcher)),
        timer_(owner->loop_, [this] { OnTimer(); }) {}

  void Offer(const http::IncomingRequest& request);
  void SetShape(const ClusterShape& shape) {
    dispatcher_.SetShape(shape, MonoNow());
    Rearm();
  }

 private:
  void OnTimer();
  void Rearm() {
    MonoNanos next = dispatcher_.NextWakeup();
    if (next == ConstantQpsDispatcher<int>::kNever) {
      timer_.Cancel();
    } else {
      timer_.ArmAt(next);
    }
  }

  DarkProxyHandler* owner_;
  DarkProxyHandler::ClusterRuntime* cluster_;
  ConstantQpsDispatcher<std::shared_ptr<const StoredRequest>> dispatcher_;
  net::Timer timer_;
};

struct DarkProxyHandler::ClusterRuntime {
  std::string name;
  size_t index = 0;  // counter slot (ClusterRegistry)
  ClusterShape shape;
  ForkStrategyKind strategy = ForkStrategyKind::kRelative;
  std::vector<http::Url> urls;               // the dark instances, round robin
  std::unique_ptr<http::HttpClient> client;  // own pools: isolation from the regular side
  std::optional<RelativeStrategy> relative;
  std::unique_ptr<ConstantQpsFeeder> constant_qps;
  std::string dark_header;  // "X-Hammer-Dark: <name>"
  size_t next_url = 0;
  uint32_t in_flight = 0;
  bool bernoulli = false;
  // Back-off after refused connections, so a dead dark cluster costs the user path nothing:
  // after kRefusalsToBackOff refusals in a row, no copy is tried until `back_off_until`.
  uint32_t refusals_in_row = 0;
  MonoNanos back_off_until = 0;
  Nanos back_off = 0;
};

namespace {
constexpr uint32_t kRefusalsToBackOff = 3;
constexpr Nanos kFirstBackOff = 100 * kMillisecond;
constexpr Nanos kMaxBackOff = 5 * kSecond;
}  // namespace

// The regular side of one client request.
class PrimaryExchange final : public http::ResponseHandler, public net::Deletable {
 public:
  PrimaryExchange(DarkProxyHandler* owner, http::Responder responder, bool head_request,
                  std::shared_ptr<ComparisonJoin> join)
      : owner_(owner),
        responder_(std::move(responder)),
        head_request_(head_request),
        join_(std::move(join)),
        start_(MonoNow()) {}

  std::string& head() { return head_; }
  std::string& body() { return body_; }

  void OnResponseHead(const http::ResponseHead& head) override {
    status_ = head.status;
    keep_alive_ = head.keep_alive;
    const std::string_view extra[] = {head.reason};
    headers_.Assign(head.headers, extra);
  }
  void OnResponseBody(std::string_view data) override {
    if (response_body_.size() + data.size() > owner_->options_->max_response_bytes) {
      too_large_ = true;
      return;
    }
    response_body_.append(data);
  }
  void OnResponseComplete(const http::ExchangeResult& result) override {
    ProxyCounters& counters = owner_->counters_->proxy;
    if (result.failure || too_large_) {
      Failure failure = result.failure ? *result.failure : Failure::kProtocol;
      Bump(counters.upstream_failed[static_cast<size_t>(failure)]);
      int status = failure == Failure::kTimeout ? 504 : 502;
      std::string body = "hammer dark: upstream " + std::string(FailureName(failure)) +
                         (too_large_ ? ": response larger than the limit" : ": " + result.detail) +
                         "\n";
      responder_.Respond(status, "text/plain", body);
      if (join_) join_->PrimaryFailed();
    } else {
      responder_.RespondRaw(ForwardResponse(status_, headers_.Extra(0), headers_.headers(),
                                            response_body_, head_request_, true),
                            /*keep_alive=*/true);
      if (join_) {
        join_->SetPrimary(status_, headers_.headers(), response_body_,
                          (result.end - start_) / kMicrosecond);
      }
    }
    Bump(counters.responses);
    owner_->loop_->DeleteLater(std::unique_ptr<net::Deletable>(this));
  }

 private:
  DarkProxyHandler* owner_;
  http::Responder responder_;
  bool head_request_;
  std::shared_ptr<ComparisonJoin> join_;
  MonoNanos start_;
  std::string head_;
  std::string body_;
  int status_ = 0;
  bool keep_alive_ = true;
  bool too_large_ = false;
  http::OwnedHeaders headers_;
  std::string response_body_;
};

// One copy sent to a dark cluster (or to the comparison secondary). Its response is read and
// discarded, or handed to the comparison join.
class DarkCopy final : public http::ResponseHandler, public net::Deletable {
 public:
  DarkCopy(DarkProxyHandler* owner, DarkProxyHandler::ClusterRuntime* cluster,
           std::shared_ptr<ComparisonJoin> join, bool secondary)
      : owner_(owner),
        cluster_(cluster),
        join_(std::move(join)),
        secondary_(secondary),
        start_(MonoNow()) {}

  std::string& head() { return head_; }
  std::string& body() { return body_; }

  void OnResponseHead(const http::ResponseHead& head) override {
    status_ = head.status;
    if (join_) headers_.Assign(head.headers);
  }
  void OnResponseBody(std::string_view data) override {
    if (!join_) return;  // discarded
    size_t room = owner_->options_->compare_max_body_bytes -
                  std::min(owner_->options_->compare_max_body_bytes, response_body_.size());
    response_body_.append(data.substr(0, room));
  }
  void OnResponseComplete(const http::ExchangeResult& result) override {
    std::optional<Failure> failure = result.failure;
    if (!failure && status_ >= 500) failure = Failure::kHttp5xx;
    if (cluster_ != nullptr) {
      --cluster_->in_flight;
      ClusterCounters& counters = owner_->counters_->clusters[cluster_->index];
      if (failure) {
        Bump(counters.failed[static_cast<size_t>(*failure)]);
      } else {
        Bump(counters.succeeded);
      }
      if (failure == Failure::kConnect) {
        if (++cluster_->refusals_in_row >= kRefusalsToBackOff) {
          cluster_->back_off =
              std::min(kMaxBackOff, std::max(kFirstBackOff, 2 * cluster_->back_off));
          cluster_->back_off_until = MonoNow() + cluster_->back_off;
        }
      } else if (!result.failure) {
        cluster_->refusals_in_row = 0;
        cluster_->back_off = 0;
      }
    }
    if (join_) {
      int64_t micros = (result.end - start_) / kMicrosecond;
      if (result.failure) {
        secondary_ ? join_->SecondaryFailed() : join_->DarkFailed();
      } else if (secondary_) {
        join_->SetSecondary(status_, headers_.headers(), response_body_);
      } else {
        join_->SetDark(status_, headers_.headers(), response_body_, micros);
      }
    }
    owner_->loop_->DeleteLater(std::unique_ptr<net::Deletable>(this));
  }

 private:
  DarkProxyHandler* owner_;
  DarkProxyHandler::ClusterRuntime* cluster_;
  std::shared_ptr<ComparisonJoin> join_;
  bool secondary_;
  MonoNanos start_;
  std::string head_;
  std::string body_;
  int status_ = 0;
  http::OwnedHeaders headers_;
  std::string response_body_;
};

size_t ClusterRegistry::IndexOf(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return i;
  }
  if (names_.size() == kMaxDarkClusters) return kMaxDarkClusters;
  names_.push_back(name);
  return names_.size() - 1;
}

std::vector<std::string> ClusterRegistry::Names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return names_;
}

DarkProxyHandler::DarkProxyHandler(net::EventLoop* loop, net::Resolver* resolver,
                                   const DarkOptions* options, const Membership* membership,
                                   ClusterRegistry* registry, DarkLoopCounters* counters,
                                   uint64_t seed)
    : loop_(loop),
      options_(options),
      counters_(counters),
      membership_(*membership),
      registry_(registry),
      resolver_(resolver),
      eligibility_(options->allow, options->deny),
      rng_(seed) {
  http::ClientOptions upstream;
  upstream.connect_timeout = options->connect_timeout;
  upstream_client_ = std::make_unique<http::HttpClient>(loop, resolver, upstream);
  if (options->compare) {
    report_ = std::make_unique<ComparisonReport>();
    JsonDiffOptions diff;
    diff.headers = options->compare_headers;
    diff.ignore = options->compare_ignore;
    diff.max_body_bytes = options->compare_max_body_bytes;
    diff_ = std::make_unique<JsonDiff>(diff);
  }
  SyncClusters();
}

DarkProxyHandler::~DarkProxyHandler() = default;

DarkProxyHandler::ClusterRuntime* DarkProxyHandler::RuntimeFor(
    const DarkClusterMembership& cluster) {
  for (auto& runtime : clusters_) {
    if (runtime->name == cluster.config.name) return runtime.get();
  }
  size_t index = registry_->IndexOf(cluster.config.name);
  if (index >= counters_->clusters.size()) return nullptr;  // beyond what can be counted
  auto runtime = std::make_unique<ClusterRuntime>();
  runtime->name = cluster.config.name;
  runtime->index = index;
  http::ClientOptions dark;
  dark.connect_timeout = options_->connect_timeout;
  runtime->client = std::make_unique<http::HttpClient>(loop_, resolver_, dark);
  runtime->dark_header = "X-Hammer-Dark: " + cluster.config.name;
  clusters_.push_back(std::move(runtime));
  return clusters_.back().get();
}

// Brings the clusters in line with the latest membership snapshot. A cluster keeps its
// runtime (credit, pools, in-flight copies) across changes; one that left stops forking.
void DarkProxyHandler::SyncClusters() {
  const MembershipSnapshot& snapshot = membership_.Get();
  if (membership_.version() == synced_version_) return;
  synced_version_ = membership_.version();
  active_.clear();
  for (const DarkClusterMembership& cluster : snapshot.dark) {
    ClusterRuntime* runtime = RuntimeFor(cluster);
    if (runtime == nullptr) continue;
    const DarkClusterConfig& config = cluster.config;
    runtime->shape = ClusterShape{config.multiplier, snapshot.regular_instances, cluster.instances,
                                  config.target_rate};
    runtime->urls = cluster.urls;
    runtime->strategy = config.strategy == "identical"      ? ForkStrategyKind::kIdentical
                        : config.strategy == "constant-qps" ? ForkStrategyKind::kConstantQps
                                                            : ForkStrategyKind::kRelative;
    bool bernoulli = options_->bernoulli || config.sampling == "bernoulli";
    if (!runtime->relative || runtime->bernoulli != bernoulli) {
      runtime->relative.emplace(rng_(), bernoulli ? RelativeStrategy::Mode::kBernoulli
                                                  : RelativeStrategy::Mode::kAccumulator);
      runtime->bernoulli = bernoulli;
    }
    if (runtime->strategy == ForkStrategyKind::kConstantQps) {
      if (!runtime->constant_qps) {
        ConstantQpsOptions qps;
        qps.buffer_capacity = config.buffer_capacity;
        qps.buffer_ttl = config.buffer_ttl;
        auto dispatcher =
            ConstantQpsDispatcher<std::shared_ptr<const StoredRequest>>::Create(qps, rng_());
        if (dispatcher.ok()) {
          runtime->constant_qps =
              std::make_unique<ConstantQpsFeeder>(this, runtime, std::move(*dispatcher));
        }
      }
      if (runtime->constant_qps) runtime->constant_qps->SetShape(runtime->shape);
    } else if (runtime->constant_qps) {
      runtime->constant_qps.reset();  // stops its schedule (rest.li #1132: no orphan limiter)
    }
    active_.push_back(runtime);
  }
  // Clusters that left the snapshot stop their constant-qps schedule too.
  for (auto& runtime : clusters_) {
    bool active = std::find(active_.begin(), active_.end(), runtime.get()) != active_.end();
    if (!active) runtime->constant_qps.reset();
  }
}

void ConstantQpsFeeder::Offer(const http::IncomingRequest& request) {
  auto stored = std::make_shared<StoredRequest>();
  const std::string_view extra[] = {request.head.method, request.head.target};
  stored->headers.Assign(request.head.headers, extra);
  stored->body.assign(request.body);
  stored->framing = request.head.framing;
  dispatcher_.Offer(std::move(stored), MonoNow());
  Rearm();
}

void ConstantQpsFeeder::OnTimer() {
  dispatcher_.Due(MonoNow(), [this](const std::shared_ptr<const StoredRequest>& request) {
    http::RequestHead head = request->Head();
    owner_->SendCopy(*cluster_, head, request->body, nullptr);
  });
  Rearm();
}

void DarkProxyHandler::OnRequest(const http::IncomingRequest& request, http::Responder responder) {
  Bump(counters_->proxy.requests);
  SyncClusters();
  const http::Url& upstream = options_->upstreams[next_upstream_++ % options_->upstreams.size()];
  bool eligible = eligibility_.Eligible(request.head);
  std::shared_ptr<ComparisonJoin> join;
  if (eligible && report_ && !active_.empty()) {
    join = std::make_shared<ComparisonJoin>(
        report_.get(), diff_.get(), EndpointKey(request.head.method, request.head.target),
        std::string(request.head.method) + " " + std::string(request.head.target));
  }
  auto* primary =
      new PrimaryExchange(this, std::move(responder), request.head.method == "HEAD", join);
  ForwardOptions forward;
  forward.preserve_host = options_->preserve_host;
  primary->head() = ForwardRequestHead(request.head, upstream, request.body.size(), forward);
  primary->body().assign(request.body);
  http::ClientRequest out;
  out.origin = upstream_client_->GetOrigin(upstream);
  out.head = primary->head();
  out.body = primary->body();
  out.head_method = request.head.method == "HEAD";
  out.idempotent = http::IsIdempotentMethod(request.head.method);
  out.deadline = MonoNow() + options_->upstream_timeout;
  upstream_client_->Send(out, primary);

  // The copies go out after the regular request and are never awaited.
  for (ClusterRuntime* cluster : active_)
    Bump(counters_->clusters[cluster->index].considered);
  if (!eligible) return;
  Fork(request, join);
  if (join && join->dark_expected() && !options_->compare_secondary.empty()) {
    SendSecondary(request, join);
  }
}

void DarkProxyHandler::Fork(const http::IncomingRequest& request,
                            std::shared_ptr<ComparisonJoin> join) {
  IdenticalSelector identical(rng_, options_->identical_header, request.head.headers);
  for (ClusterRuntime* cluster : active_) {
    ClusterCounters& counters = counters_->clusters[cluster->index];
    Bump(counters.eligible);
    uint32_t copies = 0;
    switch (cluster->strategy) {
      case ForkStrategyKind::kRelative:
        copies = cluster->relative->CopiesFor(cluster->shape);
        break;
      case ForkStrategyKind::kIdentical:
        copies = identical.CopiesFor(cluster->shape);
        break;
      case ForkStrategyKind::kConstantQps:
        // Kept for the cluster's own schedule; never sent from the request path.
        if (cluster->constant_qps) cluster->constant_qps->Offer(request);
        continue;
    }
    Bump(counters.selected, copies);
    for (uint32_t i = 0; i < copies; ++i) {
      // Only the first copy of the first cluster is compared (one dark answer per request).
      if (join) join->ExpectDark();
      SendCopy(*cluster, request.head, request.body, std::move(join));
      join = nullptr;
    }
  }
}

void DarkProxyHandler::SendCopy(ClusterRuntime& cluster, const http::RequestHead& head,
                                std::string_view body, std::shared_ptr<ComparisonJoin> join) {
  ClusterCounters& counters = counters_->clusters[cluster.index];
  if (cluster.urls.empty()) return;
  if (cluster.in_flight >= options_->dark_max_in_flight) {
    Bump(counters.dropped);
    if (join) join->DarkFailed();
    return;
  }
  if (cluster.back_off_until != 0 && loop_->now() < cluster.back_off_until) {
    Bump(counters.backed_off);
    if (join) join->DarkFailed();
    return;
  }
  const http::Url& url = cluster.urls[cluster.next_url++ % cluster.urls.size()];
  auto* copy = new DarkCopy(this, &cluster, std::move(join), /*secondary=*/false);
  ForwardOptions forward;
  forward.preserve_host = options_->preserve_host;
  forward.extra_header = cluster.dark_header;
  copy->head() = ForwardRequestHead(head, url, body.size(), forward);
  copy->body().assign(body);
  http::ClientRequest out;
  out.origin = cluster.client->GetOrigin(url);
  out.head = copy->head();
  out.body = copy->body();
  out.head_method = head.method == "HEAD";
  out.idempotent = http::IsIdempotentMethod(head.method);
  out.deadline = MonoNow() + options_->dark_timeout;
  ++cluster.in_flight;
  Bump(counters.sent);
  cluster.client->Send(out, copy);
}

void DarkProxyHandler::SendSecondary(const http::IncomingRequest& request,
                                     std::shared_ptr<ComparisonJoin> join) {
  const http::Url& url =
      options_->compare_secondary[next_secondary_++ % options_->compare_secondary.size()];
  auto* copy = new DarkCopy(this, nullptr, join, /*secondary=*/true);
  join->ExpectSecondary();
  ForwardOptions forward;
  forward.preserve_host = options_->preserve_host;
  copy->head() = ForwardRequestHead(request.head, url, request.body.size(), forward);
  copy->body().assign(request.body);
  http::ClientRequest out;
  out.origin = upstream_client_->GetOrigin(url);
  out.head = copy->head();
  out.body = copy->body();
  out.deadline = MonoNow() + options_->dark_timeout;
  upstream_client_->Send(out, copy);
}

}  // namespace hammer::dark
