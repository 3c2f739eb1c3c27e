#include "hammer/dark/proxy_group.h"

#include <nlohmann/json.hpp>
#include <random>

#include "hammer/dark/admin_access.h"

namespace hammer::dark {

// The admin listener (first loop only): metrics, the comparison report, the membership view.
class DarkProxyGroup::AdminHandler final : public http::RequestHandler {
 public:
  explicit AdminHandler(DarkProxyGroup* group) : group_(group) {}

  void OnRequest(const http::IncomingRequest& request, http::Responder responder) override {
    const std::string& token = group_->admin_token_;
    if (!token.empty() &&
        !BearerMatches(http::FindHeader(request.head.headers, "Authorization"), token)) {
      const http::Header challenge[] = {{"WWW-Authenticate", "Bearer realm=\"hammer dark\""}};
      responder.Respond(401, "text/plain",
                        "hammer dark: admin requests need Authorization: Bearer <token> "
                        "(--admin-token-file)\n",
                        challenge);
      return;
    }
    std::string_view path = request.head.target.substr(0, request.head.target.find('?'));
    if (path == "/metrics") {
      responder.Respond(200, "text/plain; version=0.0.4", group_->MetricsText());
    } else if (path == "/hammer/dark/report") {
      CollectReport(std::move(responder));
    } else if (path == "/hammer/dark/membership") {
      responder.Respond(200, "application/json", group_->MembershipJson());
    } else {
      responder.Respond(404, "text/plain",
                        "admin routes: /metrics /hammer/dark/report /hammer/dark/membership\n");
    }
  }

 private:
  // Each loop owns its report; copies are made on each loop's own thread and merged here.
  void CollectReport(http::Responder responder) {
    if (!group_->options_.compare) {
      responder.Respond(404, "text/plain", "comparison is off (start with --compare)\n");
      return;
    }
    struct Gather {
      ComparisonReport merged;
      int remaining = 0;
      http::Responder responder;
    };
    auto gather = std::make_shared<Gather>();
    gather->responder = std::move(responder);
    gather->remaining = group_->loops_.size();
    net::EventLoop* home = group_->loops_.loop(0);
    for (int i = 0; i < group_->loops_.size(); ++i) {
      DarkProxyHandler* handler = group_->handlers_[static_cast<size_t>(i)].get();
      auto collect = [handler, home, gather] {
        auto copy = std::make_shared<ComparisonReport>(*handler->report());
        home->Post([gather, copy] {
          gather->merged.Merge(*copy);
          if (--gather->remaining == 0) {
            gather->responder.Respond(200, "application/json", gather->merged.ToJson());
          }
        });
      };
      group_->loops_.loop(i)->Post(collect);
    }
  }

  DarkProxyGroup* group_;
};

DarkProxyGroup::DarkProxyGroup(const DarkOptions& options, const Membership* membership)
    : options_(options), membership_(membership), resolver_(1), loops_(options.threads) {}

DarkProxyGroup::~DarkProxyGroup() {
  Stop();
}

Result<std::unique_ptr<DarkProxyGroup>> DarkProxyGroup::Start(const DarkOptions& options,
                                                              const Membership* membership) {
  if (options.threads < 1) return Status::Error("--threads must be at least 1");
  if (options.upstreams.empty()) return Status::Error("--upstream is required");
  Result<net::SocketAddress> address = net::SocketAddress::Parse(options.listen);
  if (!address.ok()) return Status::Error("--listen: " + address.status().message());
  std::unique_ptr<DarkProxyGroup> group(new DarkProxyGroup(options, membership));
  if (Status s = group->loops_.Init(); !s.ok()) return s;
  std::random_device entropy;
  uint64_t seed = options.seed;
  http::ServerOptions server;
  server.limits.max_body_bytes = options.max_request_body_bytes;
  if (options.listener_tls.enabled()) {
    Result<std::shared_ptr<http::TlsServerContext>> tls =
        http::TlsServerContext::Create(options.listener_tls);
    if (!tls.ok()) return Status::Error("--tls-cert: " + tls.status().message());
    group->listener_tls_ = *tls;
    server.tls = *tls;
  }
  // Loaded now, once: a bad --cacert or client certificate stops the start instead of failing
  // every https request, and no request waits for the trust store to load.
  Result<std::shared_ptr<const http::TlsClientConfig>> upstream_tls =
      http::TlsClientConfig::Create(options.upstream_tls);
  if (!upstream_tls.ok()) return Status::Error("upstream TLS: " + upstream_tls.status().message());
  net::SocketAddress bind_to = *address;
  for (int i = 0; i < options.threads; ++i) {
    net::EventLoop* loop = group->loops_.loop(i);
    group->counters_.push_back(
        std::make_unique<DarkLoopCounters>(ClusterRegistry::kMaxDarkClusters));
    auto handler = std::make_unique<DarkProxyHandler>(
        loop, &group->resolver_, &group->options_, membership, &group->registry_,
        group->counters_.back().get(), seed != 0 ? seed + static_cast<uint64_t>(i) : entropy(),
        *upstream_tls);
    auto listener = std::make_unique<http::HttpListener>(loop, handler.get(), server);
    if (Status s = listener->Listen(bind_to, /*reuse_port=*/true); !s.ok()) return s;
    bind_to = listener->local_address();
    group->handlers_.push_back(std::move(handler));
    group->listeners_.push_back(std::move(listener));
  }
  group->address_ = bind_to;
  if (!options.admin_listen.empty()) {
    if (!options.admin_token_file.empty()) {
      Result<std::string> token = ReadAdminToken(options.admin_token_file);
      if (!token.ok()) return token.status();
      group->admin_token_ = *token;
    }
    Result<net::SocketAddress> admin =
        AdminAddress(options.admin_listen, !group->admin_token_.empty());
    if (!admin.ok()) return admin.status();
    group->admin_handler_ = std::make_unique<AdminHandler>(group.get());
    group->admin_listener_ = std::make_unique<http::HttpListener>(
        group->loops_.loop(0), group->admin_handler_.get(), http::ServerOptions{});
    if (Status s = group->admin_listener_->Listen(*admin, /*reuse_port=*/false); !s.ok()) {
      return Status::Error("--admin: " + s.message());
    }
    group->admin_address_ = group->admin_listener_->local_address();
  }
  group->started_ = MonoNow();
  group->loops_.Start();
  return group;
}

void DarkProxyGroup::Stop() {
  if (stopped_) return;
  stopped_ = true;
  loops_.StopAll();
  loops_.Join();
  admin_listener_.reset();
  listeners_.clear();
  handlers_.clear();
}

bool DarkProxyGroup::Drain(Nanos timeout, const std::function<bool()>& interrupted) {
  if (stopped_) return true;
  for (int i = 0; i < loops_.size(); ++i) {
    http::HttpListener* listener = listeners_[static_cast<size_t>(i)].get();
    DarkProxyHandler* handler = handlers_[static_cast<size_t>(i)].get();
    loops_.loop(i)->Post([listener, handler] {
      listener->StartDraining();
      handler->StartDraining();
    });
  }
  MonoNanos deadline = MonoNow() + timeout;
  bool drained = false;
  while (true) {
    size_t open = 0;
    for (const auto& listener : listeners_)
      open += listener->open_connections();
    if (open == 0) {
      drained = true;
      break;
    }
    if (MonoNow() >= deadline || interrupted()) break;
  }
  Stop();
  return drained;
}

std::string DarkProxyGroup::Summary() const {
  std::string out;
  uint64_t requests = 0, responses = 0, abandoned = 0;
  for (const auto& c : counters_) {
    requests += c->proxy.requests.load(std::memory_order_relaxed);
    responses += c->proxy.responses.load(std::memory_order_relaxed);
    abandoned += c->proxy.abandoned.load(std::memory_order_relaxed);
  }
  out += "requests " + std::to_string(requests) + ", responses " + std::to_string(responses) +
         ", requests abandoned " + std::to_string(abandoned) + "\n";
  std::vector<std::string> names = registry_.Names();
  for (size_t i = 0; i < names.size(); ++i) {
    uint64_t sent = 0, succeeded = 0, failed = 0, dropped = 0, copies_abandoned = 0;
    for (const auto& c : counters_) {
      const ClusterCounters& k = c->clusters[i];
      sent += k.sent.load(std::memory_order_relaxed);
      succeeded += k.succeeded.load(std::memory_order_relaxed);
      dropped += k.dropped.load(std::memory_order_relaxed);
      copies_abandoned += k.abandoned.load(std::memory_order_relaxed);
      for (const auto& f : k.failed)
        failed += f.load(std::memory_order_relaxed);
    }
    out += "dark cluster " + names[i] + ": copies sent " + std::to_string(sent) + ", succeeded " +
           std::to_string(succeeded) + ", failed " + std::to_string(failed) + ", dropped " +
           std::to_string(dropped) + ", abandoned " + std::to_string(copies_abandoned) + "\n";
  }
  return out;
}

Result<std::string> DarkProxyGroup::ReloadTls() {
  if (!listener_tls_) return Status::Error("the listener has no TLS certificate to reload");
  if (Status s = listener_tls_->Reload(); !s.ok()) return s;
  return listener_tls_->stats().certificate;
}

std::optional<http::TlsServerStats> DarkProxyGroup::listener_tls_stats() const {
  if (!listener_tls_) return std::nullopt;
  return listener_tls_->stats();
}

std::string DarkProxyGroup::MetricsText() {
  std::shared_ptr<const MembershipSnapshot> snapshot = membership_->Current();
  std::vector<const DarkLoopCounters*> loops;
  for (const auto& c : counters_)
    loops.push_back(c.get());
  std::vector<std::string> names = registry_.Names();
  std::vector<ClusterGauge> gauges(names.size());
  MonoNanos now = MonoNow();
  std::lock_guard<std::mutex> lock(rate_mutex_);
  if (previous_sent_.size() < names.size()) previous_sent_.resize(names.size(), 0);
  double seconds = static_cast<double>(now - (previous_scrape_ ? previous_scrape_ : started_)) /
                   static_cast<double>(kSecond);
  for (size_t i = 0; i < names.size(); ++i) {
    gauges[i].name = names[i];
    if (const DarkClusterMembership* cluster = snapshot->FindDark(names[i])) {
      gauges[i].dark_instances = cluster->instances;
      gauges[i].multiplier = cluster->config.multiplier;
    }
    uint64_t sent = 0;
    for (const DarkLoopCounters* loop : loops) {
      sent += loop->clusters[i].sent.load(std::memory_order_relaxed);
    }
    gauges[i].effective_rate =
        seconds > 0 ? static_cast<double>(sent - previous_sent_[i]) / seconds : 0;
    previous_sent_[i] = sent;
  }
  previous_scrape_ = now;
  std::optional<http::TlsServerStats> tls = listener_tls_stats();
  return PrometheusText(loops, gauges, snapshot->regular_instances, snapshot->stale,
                        tls ? &*tls : nullptr);
}

std::string DarkProxyGroup::MembershipJson() const {
  std::shared_ptr<const MembershipSnapshot> snapshot = membership_->Current();
  nlohmann::json clusters = nlohmann::json::array();
  for (const DarkClusterMembership& c : snapshot->dark) {
    nlohmann::json urls = nlohmann::json::array();
    for (const http::Url& u : c.urls)
      urls.push_back(u.ToString());
    clusters.push_back({{"name", c.config.name},
                        {"instances", c.instances},
                        {"multiplier", c.config.multiplier},
                        {"strategy", c.config.strategy},
                        {"target_rate", c.config.target_rate},
                        {"urls", urls}});
  }
  nlohmann::json j = {{"regular_cluster", snapshot->regular_cluster},
                      {"regular_instances", snapshot->regular_instances},
                      {"stale", snapshot->stale},
                      {"version", snapshot->version},
                      {"dark", clusters}};
  return j.dump() + "\n";
}

}  // namespace hammer::dark
