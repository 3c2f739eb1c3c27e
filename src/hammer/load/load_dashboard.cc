#include "hammer/load/load_dashboard.h"

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>

#include "hammer/base/signals.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/server.h"
#include "hammer/http/server_resources.h"
#include "hammer/stats/report/html.h"

namespace hammer::load {

namespace {

constexpr std::string_view kEventsPath = "/events";
constexpr Nanos kWaitStep = 20 * kMillisecond;

std::string PageResponse(int status, std::string_view content_type, std::string_view body) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " +
                    std::string(http::ReasonPhrase(status)) +
                    "\r\nContent-Type: " + std::string(content_type) +
                    "\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
  out += body;
  return out;
}

// The head of an event stream: chunked, since it has no length; closed at its end.
constexpr std::string_view kEventStreamHead =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
    "Cache-Control: no-store\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";

std::string ServerSentEvent(std::string_view name, const nlohmann::ordered_json& data) {
  return "event: " + std::string(name) + "\ndata: " + data.dump() + "\n\n";
}

}  // namespace

Result<net::SocketAddress> ParseDashboardAddress(std::string_view address) {
  std::string text(address);
  if (text.starts_with(":")) text = text.substr(1);
  text = net::SocketAddress::LoopbackIfPortOnly(text);
  if (text.starts_with("localhost:")) text = "127.0.0.1:" + text.substr(10);
  Result<net::SocketAddress> parsed = net::SocketAddress::Parse(text);
  if (!parsed.ok()) {
    return Status::Error(
        "--dashboard: expected [IP]:PORT (:0, 127.0.0.1:8089, [::1]:0, localhost:8089; "
        "0.0.0.0:8089 for every interface), got '" +
        std::string(address) + "'");
  }
  return parsed;
}

std::string DashboardUpdateEvent(const DashboardFigures& f, std::string_view main_html) {
  nlohmann::ordered_json j;
  j["seq"] = f.seq;
  j["running"] = f.running;
  j["elapsed_seconds"] = f.elapsed_seconds;
  j["requests"] = f.succeeded + f.failed;
  j["succeeded"] = f.succeeded;
  j["failed"] = f.failed;
  j["rps"] = f.rps;
  j["p50_ms"] = f.p50_ms;
  j["p99_ms"] = f.p99_ms;
  j["in_flight"] = f.in_flight;
  j["main"] = main_html;
  return ServerSentEvent("update", j);
}

std::string DashboardDoneEvent(std::string_view report_html) {
  nlohmann::ordered_json j;
  j["html"] = report_html;
  return ServerSentEvent("done", j);
}

// Everything here runs on the dashboard's loop thread, except the counters.
class LoadDashboard::Handler final : public http::RequestHandler {
 public:
  explicit Handler(net::EventLoop* loop) : loop_(loop) {}

  void OnRequest(const http::IncomingRequest& request, http::Responder responder) override {
    std::string_view target = request.head.target;
    std::string_view path = target.substr(0, target.find('?'));
    if (path != "/" && path != kEventsPath) {
      responder.RespondRaw(PageResponse(404, "text/plain", "hammer load: the dashboard is at /\n"),
                           false);
      return;
    }
    if (request.head.method != "GET") {
      responder.RespondRaw(PageResponse(405, "text/plain", "hammer load: GET only\n"), false);
      return;
    }
    if (path == "/") {
      pages_.fetch_add(1, std::memory_order_relaxed);
      const std::string& page = final_page_ ? *final_page_ : *live_page_;
      responder.RespondRaw(PageResponse(200, "text/html; charset=utf-8", page), false);
      return;
    }
    if (done_event_) {  // the run has ended: the final report, and the stream's end
      responder.RespondRaw(PageResponse(200, "text/event-stream; charset=utf-8", *done_event_),
                           false);
      return;
    }
    std::erase_if(streams_, [](const auto& s) { return s->cancelled() || s->failed(); });
    if (streams_.size() >= kMaxClients) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      responder.RespondRaw(
          PageResponse(503, "text/plain", "hammer load: too many dashboard pages open\n"), false);
      return;
    }
    auto stream = std::make_shared<http::BodyStream>(loop_, std::nullopt, kClientBufferBytes,
                                                     /*budget=*/nullptr);
    responder.RespondStream(kEventStreamHead, stream, /*keep_alive=*/false);
    streams_opened_.fetch_add(1, std::memory_order_relaxed);
    // A browser reconnects this long after a broken stream (the HTML standard's "retry").
    stream->Append("retry: 1000\n\n");
    if (update_event_) stream->Append(*update_event_);
    streams_.push_back(std::move(stream));
  }

  void SetLivePage(std::shared_ptr<const std::string> page,
                   std::shared_ptr<const std::string> event) {
    live_page_ = std::move(page);
    if (!event) return;
    update_event_ = std::move(event);
    for (auto& stream : streams_) {
      if (stream->cancelled() || stream->failed()) continue;
      if (stream->available().size() + update_event_->size() > kClientBufferBytes) {
        stream->Fail();  // the client reads too slowly: closed, and it may reconnect
        dropped_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      stream->Append(*update_event_);
    }
    std::erase_if(streams_, [](const auto& s) { return s->cancelled() || s->failed(); });
  }

  void SetFinal(std::shared_ptr<const std::string> page, std::shared_ptr<const std::string> done) {
    final_page_ = std::move(page);
    done_event_ = std::move(done);
    // The last event goes out whatever the buffer holds: the stream ends with it.
    for (auto& stream : streams_) {
      if (stream->cancelled() || stream->failed()) continue;
      stream->Append(*done_event_);
      stream->End();
    }
    streams_.clear();
  }

  Counts counts() const {
    return {pages_.load(std::memory_order_relaxed), streams_opened_.load(std::memory_order_relaxed),
            refused_.load(std::memory_order_relaxed), dropped_.load(std::memory_order_relaxed)};
  }

 private:
  net::EventLoop* loop_;
  std::shared_ptr<const std::string> live_page_;
  std::shared_ptr<const std::string> update_event_;  // the latest, for a stream that opens
  std::shared_ptr<const std::string> final_page_;
  std::shared_ptr<const std::string> done_event_;
  std::vector<std::shared_ptr<http::BodyStream>> streams_;
  std::atomic<uint64_t> pages_{0};
  std::atomic<uint64_t> streams_opened_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> dropped_{0};
};

LoadDashboard::LoadDashboard(const LoadOptions* options)
    : options_(options), keys_(options->max_keys, options->max_key_bytes) {}

Result<std::unique_ptr<LoadDashboard>> LoadDashboard::Start(
    std::string_view address, const LoadOptions* options, std::string title,
    std::vector<std::pair<std::string, std::string>> metadata) {
  Result<net::SocketAddress> bind_to = ParseDashboardAddress(address);
  if (!bind_to.ok()) return bind_to.status();
  std::unique_ptr<LoadDashboard> dashboard(new LoadDashboard(options));
  dashboard->title_ = std::move(title);
  dashboard->metadata_ = std::move(metadata);
  if (Status s = dashboard->loop_.Init(); !s.ok()) return s;
  dashboard->handler_ = std::make_unique<Handler>(dashboard->loop_.loop(0));
  http::ServerOptions server;
  server.resources = std::make_shared<http::ServerResources>(
      http::ServerResourceLimits{.max_connections = kMaxConnections, .max_buffered_bytes = 0});
  server.limits.max_body_bytes = 4096;  // the dashboard takes no body
  dashboard->listener_ = std::make_unique<http::HttpListener>(dashboard->loop_.loop(0),
                                                              dashboard->handler_.get(), server);
  if (Status s = dashboard->listener_->Listen(*bind_to, /*reuse_port=*/false); !s.ok()) {
    return Status::Error("--dashboard " + std::string(address) + ": " + s.message());
  }
  dashboard->address_ = dashboard->listener_->local_address();
  // Before the run: the page with no figures yet, and no update.
  stats::HtmlReportInput input;
  input.title = dashboard->title_;
  input.metadata = dashboard->metadata_;
  input.notes.push_back("Waiting for the run to start.");
  dashboard->handler_->SetLivePage(
      std::make_shared<const std::string>(stats::RenderHtmlReportPage(
          input.title, stats::RenderHtmlReportMain(input), kEventsPath)),
      nullptr);
  dashboard->loop_.Start();
  return dashboard;
}

LoadDashboard::~LoadDashboard() {
  loop_.StopAll();
  loop_.Join();
  // The loop no longer runs: its listener and connections go on this thread.
  listener_.reset();
}

std::string LoadDashboard::url() const {
  return "http://" + address_.ToString() + "/";
}

LoadDashboard::Counts LoadDashboard::counts() const {
  return handler_->counts();
}

void LoadDashboard::BeginRun(MonoNanos start, int64_t wall_start_ms, RunMonitor& monitor,
                             size_t key_reader) {
  start_ = start;
  wall_start_ms_ = wall_start_ms;
  key_reader_ = key_reader;
  running_ = true;
  monitor.TakeRecentTimeline();  // from now on the monitor keeps it for us
}

void LoadDashboard::Update(MonoNanos now, RunMonitor& monitor, bool force) {
  for (stats::KeyTable& interval : monitor.TakeKeyIntervals(key_reader_)) {
    interval.ForEachSorted(
        [this](std::string_view, const stats::KeyStats& stats) { total_.Merge(stats); });
    keys_.Merge(std::move(interval));
  }
  timeline_.Merge(monitor.TakeRecentTimeline());
  if (!force && now - last_publish_ < kPublishEvery) return;
  last_publish_ = now;
  Publish(now, monitor.Totals());
}

void LoadDashboard::EndRun(MonoNanos now, RunMonitor& monitor) {
  running_ = false;
  Update(now, monitor, /*force=*/true);
}

void LoadDashboard::Publish(MonoNanos now, RunMonitor::View totals) {
  const double elapsed = static_cast<double>(std::max<Nanos>(0, now - start_)) / kSecond;
  // The busiest keys: the table, the spectrum and the error bars show these; the rest count in
  // the total.
  std::vector<std::pair<std::string_view, const stats::KeyStats*>> rows;
  keys_.ForEachSorted([&rows](std::string_view key, const stats::KeyStats& stats) {
    rows.emplace_back(key, &stats);
  });
  const size_t shown = std::min(rows.size(), kTableKeys);
  std::partial_sort(
      rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(shown), rows.end(),
      [](const auto& a, const auto& b) { return a.second->total() > b.second->total(); });
  stats::HtmlReportInput input;
  input.title = title_;
  input.metadata = metadata_;
  input.metadata.emplace_back("status", running_ ? "running (this page updates every second)"
                                                 : "finished, writing the report");
  for (size_t i = 0; i < shown; ++i)
    input.keys.emplace_back(std::string(rows[i].first), *rows[i].second);
  input.unlisted_keys = rows.size() - shown;
  input.total = total_;
  input.timeline = timeline_.empty() ? nullptr : &timeline_;
  input.covered_from_ms = wall_start_ms_;
  input.covered_to_ms = wall_start_ms_ + static_cast<int64_t>(elapsed * 1000);
  input.duration_seconds = elapsed;
  input.max_table_rows = kTableKeys;
  const std::string main = stats::RenderHtmlReportMain(input);

  DashboardFigures figures;
  figures.seq = ++seq_;
  figures.running = running_;
  figures.elapsed_seconds = elapsed;
  figures.succeeded = total_.count;
  figures.failed = total_.errors;
  figures.rps = elapsed > 0 ? static_cast<double>(total_.total()) / elapsed : 0;
  if (total_.count > 0) {
    figures.p50_ms = static_cast<double>(total_.Percentile(50)) / 1000;
    figures.p99_ms = static_cast<double>(total_.Percentile(99)) / 1000;
  }
  figures.in_flight = totals.in_flight;
  auto page =
      std::make_shared<const std::string>(stats::RenderHtmlReportPage(title_, main, kEventsPath));
  auto event = std::make_shared<const std::string>(DashboardUpdateEvent(figures, main));
  Handler* handler = handler_.get();
  loop_.loop(0)->Post([handler, page, event] { handler->SetLivePage(page, event); });
}

void LoadDashboard::Finish(std::string report_html) {
  auto done = std::make_shared<const std::string>(DashboardDoneEvent(report_html));
  auto page = std::make_shared<const std::string>(std::move(report_html));
  Handler* handler = handler_.get();
  loop_.loop(0)->Post([handler, page, done] { handler->SetFinal(page, done); });
}

bool LoadDashboard::WaitForClients(Nanos timeout) {
  const MonoNanos deadline = MonoNow() + timeout;
  while (listener_->open_connections() > 0) {
    const Nanos left = deadline - MonoNow();
    if (left <= 0) return false;
    if (WaitForShutdownSignal(std::min(left, kWaitStep)) != 0) return false;
  }
  return true;
}

}  // namespace hammer::load
