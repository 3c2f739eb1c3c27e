#include "hammer/load/load_metrics.h"

#include "hammer/base/failure.h"
#include "hammer/http/server.h"
#include "hammer/stats/counter_exposition.h"
#include "hammer/stats/prometheus_text.h"

namespace hammer::load {

namespace {

constexpr std::string_view kContentType = "text/plain; version=0.0.4";

Result<net::SocketAddress> ParseListenAddress(std::string_view address) {
  std::string text(address);
  if (text.starts_with("localhost:")) text = "127.0.0.1:" + text.substr(10);
  Result<net::SocketAddress> parsed = net::SocketAddress::Parse(text);
  if (!parsed.ok()) {
    return Status::Error(
        "--metrics-listen: expected IP:PORT (127.0.0.1:9464, [::1]:0, "
        "localhost:9464), got '" +
        std::string(address) + "'");
  }
  return parsed;
}

}  // namespace

class LoadMetrics::Handler final : public http::RequestHandler {
 public:
  explicit Handler(const LoadMetrics* metrics) : metrics_(metrics) {}

  void OnRequest(const http::IncomingRequest& request, http::Responder responder) override {
    std::string_view target = request.head.target;
    std::string_view path = target.substr(0, target.find('?'));
    if (path == "/metrics") {
      responder.Respond(200, kContentType, metrics_->Text());
    } else {
      responder.Respond(404, "text/plain", "hammer load: metrics are at /metrics\n");
    }
  }

 private:
  const LoadMetrics* metrics_;
};

LoadMetrics::LoadMetrics(const LoadOptions* options, bool keep_samples)
    : options_(options),
      keep_samples_(keep_samples),
      keys_(options->max_keys, options->max_key_bytes) {}

Result<std::unique_ptr<LoadMetrics>> LoadMetrics::Start(std::string_view address,
                                                        const LoadOptions* options,
                                                        bool keep_samples) {
  std::unique_ptr<LoadMetrics> metrics(new LoadMetrics(options, keep_samples));
  if (address.empty()) {
    metrics->snapshot_ = metrics->Render(MonoNow(), {});
    return metrics;
  }
  Result<net::SocketAddress> bind_to = ParseListenAddress(address);
  if (!bind_to.ok()) return bind_to.status();
  if (Status s = metrics->loop_.Init(); !s.ok()) return s;
  metrics->handler_ = std::make_unique<Handler>(metrics.get());
  metrics->listener_ = std::make_unique<http::HttpListener>(
      metrics->loop_.loop(0), metrics->handler_.get(), http::ServerOptions{});
  if (Status s = metrics->listener_->Listen(*bind_to, /*reuse_port=*/false); !s.ok()) {
    return Status::Error("--metrics-listen " + std::string(address) + ": " + s.message());
  }
  metrics->address_ = metrics->listener_->local_address();
  metrics->snapshot_ = metrics->Render(MonoNow(), {});
  metrics->loop_.Start();
  return metrics;
}

LoadMetrics::~LoadMetrics() {
  loop_.StopAll();
  loop_.Join();
  // The loop no longer runs: its listener and connections go on this thread.
  listener_.reset();
}

std::string LoadMetrics::Text() const {
  return Latest()->text;
}

std::shared_ptr<const LoadMetrics::Snapshot> LoadMetrics::Latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return snapshot_;
}

void LoadMetrics::BeginRun(MonoNanos start) {
  start_ = start;
  running_ = true;
}

double LoadMetrics::AchievedRate(MonoNanos now, uint64_t requests) {
  ended_.emplace_back(now, requests);
  while (ended_.size() > 2 && now - ended_[1].first >= kRateWindow)
    ended_.pop_front();
  const auto& [then, before] = ended_.front();
  if (now <= then) return 0;
  return static_cast<double>(requests - before) * kSecond / static_cast<double>(now - then);
}

void LoadMetrics::Update(MonoNanos now, RunMonitor& monitor, bool force) {
  for (const stats::KeyTable& interval : monitor.TakeKeyIntervals())
    keys_.Merge(interval);
  RunMonitor::View totals = monitor.Totals();
  rate_ = AchievedRate(now, totals.succeeded + totals.failed);
  if (!force && now - last_publish_ < kPublishEvery) return;
  last_publish_ = now;
  std::shared_ptr<const Snapshot> snapshot = Render(now, totals);
  std::lock_guard<std::mutex> lock(mutex_);
  snapshot_ = std::move(snapshot);
}

void LoadMetrics::EndRun(MonoNanos now, RunMonitor& monitor) {
  running_ = false;
  end_ = now;
  Update(now, monitor, /*force=*/true);
}

std::shared_ptr<const LoadMetrics::Snapshot> LoadMetrics::Render(
    MonoNanos now, const RunMonitor::View& totals) const {
  using Labels = std::initializer_list<stats::PrometheusLabelPair>;
  stats::PrometheusText out(keep_samples_);
  out.Family("hammer_load_requests_total", "counter",
             "Requests ended, by key and outcome (success, or the failure type).");
  keys_.ForEachSorted([&out](std::string_view key, const stats::KeyStats& stats) {
    out.Sample("hammer_load_requests_total", Labels{{"key", key}, {"outcome", "success"}},
               stats.count);
    for (size_t i = 0; i < kFailureCount; ++i) {
      if (stats.failures.counts().by_type[i] == 0) continue;
      out.Sample("hammer_load_requests_total", Labels{{"key", key}, {"outcome", kFailureNames[i]}},
                 stats.failures.counts().by_type[i]);
    }
    // Records of the seed's form carry no type; a load run's failures always have one.
    if (uint64_t untyped = stats.errors - stats.failures.Total(); untyped > 0) {
      out.Sample("hammer_load_requests_total", Labels{{"key", key}, {"outcome", "untyped"}},
                 untyped);
    }
  });
  out.Family("hammer_load_latency_seconds", "histogram",
             "Latency of successful requests (open loop: from the due time).");
  keys_.ForEachSorted([&out](std::string_view key, const stats::KeyStats& stats) {
    out.HistogramSeconds("hammer_load_latency_seconds", Labels{{"key", key}}, stats.histogram,
                         stats.sum_micros, kLatencyBoundsMicros);
  });
  stats::AppendCounterFamilies(out, LoadCounters::kCounterSpecs, totals.counters.CounterValues());
  out.Family("hammer_load_in_flight", "gauge", "Requests sent and not yet ended.");
  out.Sample("hammer_load_in_flight", Labels{}, totals.in_flight);
  out.Family("hammer_load_rate", "gauge", "Requests ended per second over the last 5 s.");
  out.Sample("hammer_load_rate", Labels{}, rate_);
  if (options_->rate > 0) {
    const double target = options_->stages && running_ ? options_->stages->RateAt(now - start_)
                                                       : (running_ ? options_->rate : 0.0);
    out.Family("hammer_load_target_rate", "gauge",
               "Open loop: requests per second the schedule asks for now (--rate, --stages).");
    out.Sample("hammer_load_target_rate", Labels{}, target);
  }
  out.Family("hammer_load_elapsed_seconds", "gauge", "Time since the run started.");
  out.Sample("hammer_load_elapsed_seconds", Labels{},
             start_ > 0 ? static_cast<double>((end_ > 0 ? end_ : now) - start_) / kSecond : 0.0);
  out.Family("hammer_load_running", "gauge", "1 while the run sends requests, 0 before and after.");
  out.Sample("hammer_load_running", Labels{}, uint64_t{running_ ? 1u : 0u});
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->text = out.Take();
  snapshot->samples = out.TakeSamples();
  snapshot->wall_millis = WallNowMicros() / 1000;
  return snapshot;
}

}  // namespace hammer::load
