// LoadDashboard: the live page of a `hammer load` run (--dashboard ADDR).
//
// Served on ADDR (loopback unless an address says otherwise, see ParseDashboardAddress):
//   GET /        while the run goes on, the HTML report (stats/report/html.h) of the figures so
//                far, whose script follows /events; once the run has ended, the final report,
//                the page --html writes.
//   GET /events  a Server-Sent Events stream (text/event-stream, the HTML standard's "Server-sent
//                events"): at once the latest "update", then one every kPublishEvery, each
//                carrying the figures (DashboardUpdateEvent) and the report's <main> rendered
//                by the same renderer as --html: rate, latency percentiles over time, errors by
//                type, the busiest kTableKeys keys. At the end one "done" event carries the
//                final report (DashboardDoneEvent) and the stream ends. A request after the end
//                gets the "done" event alone.
//   anything else 404; methods other than GET 405.
// Every answer closes its connection, so that after the run hammer can tell when every open
// page has had its last bytes (WaitForClients).
//
// Bounds: at most kMaxClients event streams at once (more are answered 503 and counted as
// refused); a stream whose client leaves more than kClientBufferBytes unread is closed and
// counted as dropped (a page that reconnects starts from the latest update); the process-wide
// cap of kMaxConnections connections (server_resources.h) bounds the rest.
//
// Threads: the server runs on its own event-loop thread, which only copies what was last
// published. The run's controlling thread (RunLoad) calls BeginRun, Update and EndRun: Update
// merges the per-key intervals and the timeline the workers queued in the RunMonitor (the
// snapshot mechanism --metrics-listen uses) and renders the page at most every kPublishEvery.
// Workers never wait for a page. LoadCommand calls Finish with the final report, then
// WaitForClients.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/load/load_options.h"
#include "hammer/load/run_monitor.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/socket.h"
#include "hammer/stats/key_stats.h"
#include "hammer/stats/key_table.h"
#include "hammer/stats/timeline.h"

namespace hammer::http {
class HttpListener;
}

namespace hammer::load {

// --dashboard's address: "IP:PORT", "[IPv6]:PORT", "localhost:PORT", or ":PORT" / "PORT" for
// 127.0.0.1 (port 0 picks a free one). Only an address written out binds anything but
// loopback ("0.0.0.0:8080"). Errors name --dashboard.
Result<net::SocketAddress> ParseDashboardAddress(std::string_view address);

// The figures of one "update" event.
struct DashboardFigures {
  uint64_t seq = 0;  // 1 for the first update, then +1 each
  bool running = true;
  double elapsed_seconds = 0;  // since the measured run began
  uint64_t succeeded = 0;
  uint64_t failed = 0;
  double rps = 0;  // requests ended per second over the run so far
  double p50_ms = 0;
  double p99_ms = 0;
  uint64_t in_flight = 0;
};

// One Server-Sent Events message: "event: update\ndata: " + one line of JSON + "\n\n". The JSON
// object holds the figures ("requests" = succeeded + failed; p50_ms and p99_ms as the report's
// summary computes them, held within the exact min and max) and "main", the HTML. JSON escapes
// every line break, so the data is a single line whatever the HTML holds.
std::string DashboardUpdateEvent(const DashboardFigures& figures, std::string_view main_html);
// "event: done\ndata: {\"html\":...}\n\n": the final report.
std::string DashboardDoneEvent(std::string_view report_html);

class LoadDashboard {
 public:
  static constexpr Nanos kPublishEvery = kSecond;
  static constexpr size_t kMaxClients = 8;
  static constexpr size_t kClientBufferBytes = 4 * 1024 * 1024;
  static constexpr uint64_t kMaxConnections = 64;
  static constexpr size_t kTableKeys = 20;

  // Binds `address` (ParseDashboardAddress) and starts serving (before the run: no figures
  // yet). `options` must outlive this object; `title` and `metadata` head the live page.
  // Errors name --dashboard: a malformed address, a failed bind.
  static Result<std::unique_ptr<LoadDashboard>> Start(
      std::string_view address, const LoadOptions* options, std::string title,
      std::vector<std::pair<std::string, std::string>> metadata);
  ~LoadDashboard();  // stops serving
  LoadDashboard(const LoadDashboard&) = delete;
  LoadDashboard& operator=(const LoadDashboard&) = delete;

  // The bound address (with the chosen port), and the page's URL ("http://127.0.0.1:PORT/").
  net::SocketAddress address() const { return address_; }
  std::string url() const;

  // The run's controlling thread only. BeginRun when the workers start (before their first
  // interval), with the RunMonitor key reader this dashboard takes (TakeKeyIntervals); Update
  // as often as it likes (renders at most every kPublishEvery unless `force`); EndRun once
  // every worker has stopped.
  void BeginRun(MonoNanos start, int64_t wall_start_ms, RunMonitor& monitor, size_t key_reader);
  void Update(MonoNanos now, RunMonitor& monitor, bool force = false);
  void EndRun(MonoNanos now, RunMonitor& monitor);

  // After the run: `report_html` (what --html writes) is served at / from now on, and every
  // open stream gets it in a "done" event and ends. Any thread; once.
  void Finish(std::string report_html);
  // After Finish: waits until every connection has closed (each open page has had the final
  // report), at most `timeout`, or until SIGINT/SIGTERM. True when they all closed.
  bool WaitForClients(Nanos timeout);

  struct Counts {
    uint64_t pages = 0;    // GET / answered
    uint64_t streams = 0;  // event streams opened
    uint64_t refused = 0;  // event streams refused: kMaxClients were open
    uint64_t dropped = 0;  // event streams closed: their client read too slowly
  };
  Counts counts() const;  // any thread

 private:
  class Handler;
  explicit LoadDashboard(const LoadOptions* options);
  void Publish(MonoNanos now, RunMonitor::View totals);

  const LoadOptions* options_;
  std::string title_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  net::LoopGroup loop_{1};
  std::unique_ptr<Handler> handler_;
  std::unique_ptr<http::HttpListener> listener_;
  net::SocketAddress address_;

  // The controlling thread's state.
  size_t key_reader_ = 0;
  stats::KeyTable keys_;
  stats::KeyStats total_;
  stats::Timeline timeline_;
  MonoNanos start_ = 0;
  int64_t wall_start_ms_ = 0;
  MonoNanos last_publish_ = 0;
  uint64_t seq_ = 0;
  bool running_ = false;
};

}  // namespace hammer::load
