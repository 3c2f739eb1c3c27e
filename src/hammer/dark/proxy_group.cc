#include "hammer/dark/proxy_group.h"

#include <algorithm>
#include <future>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "hammer/dark/admin_access.h"
#include "hammer/stats/counter_exposition.h"

namespace hammer::dark {

namespace {

// The effective-rate gauge counts the copies of about the last this long.
constexpr Nanos kRateWindow = 10 * kSecond;

using Json = nlohmann::ordered_json;

// The value of `name` in a query string ("a=1&cluster=canary"), as written; empty if absent.
std::string_view QueryValue(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    if (pair.size() > name.size() && pair.starts_with(name) && pair[name.size()] == '=') {
      return pair.substr(name.size() + 1);
    }
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
  }
  return {};
}

CanaryVerdict Judge(const std::vector<std::string>& names,
                    const std::vector<ComparisonReport>& reports, const VerdictRules& rules) {
  std::vector<ClusterReport> clusters;
  for (size_t i = 0; i < names.size(); ++i)
    clusters.push_back(ClusterReport{names[i], i < reports.size() ? &reports[i] : nullptr});
  return JudgeCanary(clusters, rules);
}

}  // namespace

// The admin listener (first loop only): metrics, the comparison report, the verdict, the
// membership view.
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
    std::string_view target = request.head.target;
    std::string_view path = target.substr(0, target.find('?'));
    std::string_view query = path.size() < target.size() ? target.substr(path.size() + 1) : "";
    if (path == "/metrics") {
      Metrics(std::move(responder));
    } else if (path == "/hammer/dark/report") {
      Report(std::move(responder), std::string(QueryValue(query, "cluster")));
    } else if (path == "/hammer/dark/verdict") {
      Verdict(std::move(responder));
    } else if (path == "/hammer/dark/membership") {
      responder.Respond(200, "application/json", group_->MembershipJson());
    } else {
      responder.Respond(404, "text/plain",
                        "admin routes: /metrics /hammer/dark/report /hammer/dark/verdict "
                        "/hammer/dark/membership\n");
    }
  }

 private:
  void Metrics(http::Responder responder) {
    if (!group_->options_.compare) {
      responder.Respond(200, "text/plain; version=0.0.4", group_->MetricsText());
      return;
    }
    auto shared = std::make_shared<http::Responder>(std::move(responder));
    DarkProxyGroup* group = group_;
    group_->CollectReports(
        [group, shared](std::vector<std::string> names, std::vector<ComparisonReport> reports) {
          std::string text = group->MetricsText();
          text += Judge(names, reports, group->options_.verdict).PrometheusText();
          shared->Respond(200, "text/plain; version=0.0.4", text);
        });
  }

  // Without --compare (or a flag that judges, which turns it on) there is nothing to report or
  // judge: saying "insufficient, 0 samples" would read as a canary that got no traffic.
  static constexpr std::string_view kComparisonOff =
      "comparison is off (start with --compare, or with --judge or --verdict-after, which turn "
      "it on)\n";

  void Report(http::Responder responder, std::string wanted) {
    if (!group_->options_.compare) {
      responder.Respond(404, "text/plain", kComparisonOff);
      return;
    }
    auto shared = std::make_shared<http::Responder>(std::move(responder));
    const VerdictRules* rules = &group_->options_.verdict;
    group_->CollectReports([shared, rules, wanted](std::vector<std::string> names,
                                                   std::vector<ComparisonReport> reports) {
      size_t index = 0;
      if (!wanted.empty()) {
        index = static_cast<size_t>(std::find(names.begin(), names.end(), wanted) - names.begin());
        if (index == names.size()) {
          shared->Respond(404, "text/plain", "no dark cluster named '" + wanted + "'\n");
          return;
        }
      }
      Json body;
      if (index < names.size()) {
        body["cluster"] = names[index];
        ClusterReport one{names[index], &reports[index]};
        CanaryVerdict verdict = JudgeCanary({&one, 1}, *rules);
        body.update(reports[index].ToJsonValue());
        body["verdict"] = verdict.ClusterJson(verdict.clusters.front());
      } else {
        body = ComparisonReport().ToJsonValue();
      }
      body["clusters"] = names;
      // Bodies are cut at arbitrary bytes: replace invalid UTF-8 instead of throwing.
      shared->Respond(200, "application/json",
                      body.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n");
    });
  }

  void Verdict(http::Responder responder) {
    if (!group_->options_.compare) {
      responder.Respond(404, "text/plain", kComparisonOff);
      return;
    }
    auto shared = std::make_shared<http::Responder>(std::move(responder));
    const VerdictRules* rules = &group_->options_.verdict;
    group_->CollectReports(
        [shared, rules](std::vector<std::string> names, std::vector<ComparisonReport> reports) {
          shared->Respond(200, "application/json", Judge(names, reports, *rules).ToJson());
        });
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
  if (options.upstreams.empty() && options.upstream_zookeeper.empty()) {
    return Status::Error("--upstream is required");
  }
  Result<net::SocketAddress> address = net::SocketAddress::Parse(options.listen);
  if (!address.ok()) return Status::Error("--listen: " + address.status().message());
  std::unique_ptr<DarkProxyGroup> group(new DarkProxyGroup(options, membership));
  if (Status s = group->loops_.Init(); !s.ok()) return s;
  std::random_device entropy;
  uint64_t seed = options.seed;
  // A client connection may hold one to the upstream and share dark copies' and pools': 3.
  group->resources_ = http::CreateServerResources(options.client_limits,
                                                  /*descriptors_per_connection=*/3);
  http::ServerOptions server;
  server.limits.max_body_bytes = options.max_request_body_bytes;
  server.stream_body_above = options.stream_threshold;
  server.header_timeout = options.client_limits.header_timeout;
  server.resources = group->resources_;
  server.upgrades = true;
  server.tunnel_idle_timeout = options.tunnel_idle_timeout;
  server.http2.enabled = options.http2;
  server.http2.max_concurrent_streams = options.http2_max_concurrent_streams;
  if (options.listener_tls.enabled()) {
    http::TlsServerOptions tls_options = options.listener_tls;
    if (options.http2) tls_options.alpn = {"h2", "http/1.1"};
    Result<std::shared_ptr<http::TlsServerContext>> tls =
        http::TlsServerContext::Create(tls_options);
    if (!tls.ok()) return Status::Error("--tls-cert: " + tls.status().message());
    group->listener_tls_ = *tls;
    server.tls = *tls;
  }
  // Loaded now, once: a bad --cacert or client certificate stops the start instead of failing
  // every https request, and no request waits for the trust store to load.
  Result<std::shared_ptr<const http::TlsClientConfig>> upstream_tls =
      http::TlsClientConfig::Create(options.upstream_tls);
  if (!upstream_tls.ok()) return Status::Error("upstream TLS: " + upstream_tls.status().message());
  group->upstreams_ = std::make_unique<UpstreamPool>(
      options.upstreams.size() + options.upstream_zookeeper.size(), options.outliers,
      options.balance, options.health_check.enabled());
  if (options.health_check.enabled()) {
    // Checks go as the user traffic goes: the regular side's protocol and TLS settings.
    http::ClientOptions check;
    check.connect_timeout = options.connect_timeout;
    check.tls_config = *upstream_tls;
    check.http2.enabled = options.upstream_http2;
    group->health_checker_ =
        std::make_unique<HealthChecker>(group->loops_.loop(0), &group->resolver_,
                                        group->upstreams_.get(), options.health_check, check);
    HealthChecker* checker = group->health_checker_.get();
    group->upstreams_->OnChange([checker] { checker->Notify(); });
    group->loops_.loop(0)->Post([checker] { checker->Start(); });
  }
  if (Status s = group->StartUpstreams(); !s.ok()) return s;
  if (options.capture.enabled()) {
    Result<std::unique_ptr<CaptureWriter>> capture = CaptureWriter::Open(options.capture);
    if (!capture.ok()) return Status::Error("--capture: " + capture.status().message());
    group->capture_ = std::move(capture).value();
  }
  net::SocketAddress bind_to = *address;
  for (int i = 0; i < options.threads; ++i) {
    net::EventLoop* loop = group->loops_.loop(i);
    group->counters_.push_back(
        std::make_unique<DarkLoopCounters>(ClusterRegistry::kMaxDarkClusters));
    auto handler = std::make_unique<DarkProxyHandler>(
        loop, &group->resolver_, &group->options_, membership, &group->registry_,
        group->counters_.back().get(), seed != 0 ? seed + static_cast<uint64_t>(i) : entropy(),
        *upstream_tls, &group->resources_->budget(), group->upstreams_.get(),
        group->capture_.get());
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

Status DarkProxyGroup::StartUpstreams() {
  std::vector<UpstreamDns::Name> names;
  for (size_t i = 0; i < options_.upstreams.size(); ++i) {
    const http::Url& url = options_.upstreams[i];
    const uint32_t weight = options_.upstream_weights.size() > i ? options_.upstream_weights[i] : 1;
    const bool named = !net::SocketAddress::FromIp(url.host, url.port).ok();
    if (named && options_.upstream_dns_interval > 0) {
      names.push_back(UpstreamDns::Name{i, url, weight});
    } else {
      upstreams_->SetInstances(i, {UpstreamAddress{url, std::nullopt, weight}});
    }
  }
  if (!names.empty()) {
    upstream_dns_ = std::make_unique<UpstreamDns>(upstreams_.get(), std::move(names),
                                                  options_.upstream_dns_interval);
    for (const std::string& error : upstream_dns_->Start())
      warnings_.push_back("--upstream " + error + " (no instances until it resolves)");
  }
  for (size_t i = 0; i < options_.upstream_zookeeper.size(); ++i) {
    const std::string& url = options_.upstream_zookeeper[i];
    Result<std::unique_ptr<UpstreamZooKeeper>> started =
        UpstreamZooKeeper::Start(url, options_.upstreams.size() + i, upstreams_.get());
    if (!started.ok()) return Status::Error("--upstream " + started.status().message());
    upstream_zookeeper_.push_back(std::move(started).value());
  }
  return Status::Ok();
}

void DarkProxyGroup::Stop() {
  if (stopped_) return;
  stopped_ = true;
  upstream_dns_.reset();  // the set stops changing
  upstream_zookeeper_.clear();
  loops_.StopAll();
  loops_.Join();
  admin_listener_.reset();
  listeners_.clear();
  handlers_.clear();
  health_checker_.reset();
  if (capture_) capture_->Close();  // what was captured is in the file before the summary
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
  if (capture_) out += capture_->Summary();
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
  SentSample sample{now, std::vector<uint64_t>(names.size(), 0)};
  for (size_t i = 0; i < names.size(); ++i) {
    gauges[i].name = names[i];
    if (const DarkClusterMembership* cluster = snapshot->FindDark(names[i])) {
      gauges[i].dark_instances = cluster->instances;
      gauges[i].multiplier = cluster->config.multiplier;
    }
    for (const DarkLoopCounters* loop : loops)
      sample.sent[i] += loop->clusters[i].sent.load(std::memory_order_relaxed);
  }
  {
    std::lock_guard<std::mutex> lock(rate_mutex_);
    if (sent_samples_.empty()) sent_samples_.push_back({started_, {}});
    // The base is the newest sample at least kRateWindow old, else the start.
    while (sent_samples_.size() >= 2 && now - sent_samples_[1].at >= kRateWindow)
      sent_samples_.pop_front();
    const SentSample& base = sent_samples_.front();
    const double seconds = static_cast<double>(now - base.at) / static_cast<double>(kSecond);
    for (size_t i = 0; i < names.size(); ++i) {
      const uint64_t before = i < base.sent.size() ? base.sent[i] : 0;
      gauges[i].effective_rate =
          seconds > 0 ? static_cast<double>(sample.sent[i] - before) / seconds : 0;
    }
    // One sample a second at most, so however often /metrics is read the history stays short.
    if (now - sent_samples_.back().at >= kSecond) sent_samples_.push_back(std::move(sample));
  }
  std::optional<http::TlsServerStats> tls = listener_tls_stats();
  stats::PrometheusText out;
  AppendDarkMetrics(out, loops, gauges, snapshot->regular_instances, snapshot->stale,
                    tls ? &*tls : nullptr);
  upstreams_->AppendMetrics(out, now);
  if (capture_) {
    stats::AppendCounterFamilies(out, CaptureCounters::kCounterSpecs,
                                 capture_->counters().CounterValues());
  }
  AppendServerResources(out, *resources_);
  return out.Take();
}

void DarkProxyGroup::CollectReports(ReportsDone done) {
  struct Gather {
    std::vector<std::string> names;
    std::vector<ComparisonReport> merged;
    int remaining = 0;
    ReportsDone done;
  };
  auto gather = std::make_shared<Gather>();
  gather->names = registry_.Names();
  gather->merged.resize(options_.compare ? gather->names.size() : 0);
  gather->remaining = loops_.size();
  gather->done = std::move(done);
  size_t clusters = gather->merged.size();
  net::EventLoop* home = loops_.loop(0);
  // Each loop owns its reports: they are copied on each loop's own thread and merged on the
  // first one's.
  for (int i = 0; i < loops_.size(); ++i) {
    DarkProxyHandler* handler = handlers_[static_cast<size_t>(i)].get();
    loops_.loop(i)->Post([handler, home, gather, clusters] {
      auto copies = std::make_shared<std::vector<std::optional<ComparisonReport>>>(clusters);
      for (size_t c = 0; c < clusters; ++c) {
        if (const ComparisonReport* report = handler->report(c)) (*copies)[c] = *report;
      }
      home->Post([gather, copies] {
        for (size_t c = 0; c < copies->size(); ++c) {
          if ((*copies)[c]) gather->merged[c].Merge(*(*copies)[c]);
        }
        if (--gather->remaining == 0) {
          gather->done(std::move(gather->names), std::move(gather->merged));
        }
      });
    });
  }
}

CanaryVerdict DarkProxyGroup::JudgeNow() {
  if (stopped_) return JudgeCanary({}, options_.verdict);
  std::promise<CanaryVerdict> promise;
  std::future<CanaryVerdict> verdict = promise.get_future();
  const VerdictRules* rules = &options_.verdict;
  CollectReports(
      [&promise, rules](std::vector<std::string> names, std::vector<ComparisonReport> reports) {
        promise.set_value(Judge(names, reports, *rules));
      });
  return verdict.get();
}

std::string DarkProxyGroup::MembershipJson() const {
  std::shared_ptr<const MembershipSnapshot> snapshot = membership_->Current();
  nlohmann::json clusters = nlohmann::json::array();
  for (const DarkClusterMembership& c : snapshot->dark) {
    nlohmann::json urls = nlohmann::json::array();
    for (const http::Url& u : c.urls)
      urls.push_back(u.ToString());
    clusters.push_back(
        {{"name", c.config.name},
         {"instances", c.instances},
         {"multiplier", c.config.multiplier},
         {"strategy", c.config.strategy},
         {"target_rate", c.config.target_rate},
         {"protocol", options_.DarkClusterSpeaksHttp2(c.config.name) ? "HTTP/2" : "HTTP/1.1"},
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
