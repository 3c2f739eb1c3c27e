// LoadMetrics: live Prometheus metrics of a `hammer load` run (--metrics-listen ADDR).
//
// Served at GET /metrics on ADDR as the Prometheus text format ("text/plain; version=0.0.4",
// stats/prometheus_text.h); every other path is 404. The families (all cumulative over the
// measured run; --warmup requests are in none of them, as in every other statistic):
//   hammer_load_requests_total{key,outcome}   counter: requests ended, by key row and outcome
//                                             ("success", or a failure type of base/failure.h)
//   hammer_load_latency_seconds{key}          histogram of successful requests' latency (from
//                                             the due time in open loop), kLatencyBoundsMicros
//   the counters of HAMMER_LOAD_COUNTERS (load_counters.h): late, dropped, aborted, warmup,
//   redirects, connections and TLS handshakes, as each worker last reported them
//   hammer_load_in_flight                     gauge: requests sent and not yet ended
//   hammer_load_rate                          gauge: requests ended per second, last kRateWindow
//   hammer_load_target_rate                   gauge: open loop only, the rate --rate/--stages
//                                             asks for now
//   hammer_load_elapsed_seconds               gauge: time since the run started
//   hammer_load_running                       gauge: 1 while requests are sent, 0 after the run
// `key` takes the values of the summary's rows: bounded by --max-keys (stats/key_table.h),
// so label cardinality stays bounded however many URLs the input holds (a key series may be
// replaced by its template's when the rows fold).
//
// The same figures are published as a Snapshot (the text and, when asked, each sample as a
// value with the wall-clock time it was rendered at) for `--remote-write` (remote_writer.h),
// which pushes what a scrape would see; without --metrics-listen nothing is served and the
// snapshots are only rendered.
//
// Threads: the metrics listener runs on its own event-loop thread, which only copies the text
// last published. The run's controlling thread (RunLoad) calls Update; it merges the per-key
// intervals the workers queued in the RunMonitor and renders the text. Workers never wait for
// a scrape. After the run the last figures stay served until this object is destroyed.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
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
#include "hammer/stats/key_table.h"
#include "hammer/stats/prometheus_text.h"

namespace hammer::http {
class HttpListener;
}

namespace hammer::load {

// Upper bounds of the latency histogram's buckets, µs: 100 µs to 10 s, 1-2.5-5 per decade (the
// shape of Prometheus's default buckets, extended down to loopback latencies).
inline constexpr int64_t kLatencyBoundsMicros[] = {
    100,    250,     500,     1'000,   2'500,     5'000,     10'000,    25'000,
    50'000, 100'000, 250'000, 500'000, 1'000'000, 2'500'000, 5'000'000, 10'000'000,
};

class LoadMetrics {
 public:
  static constexpr Nanos kRateWindow = 5 * kSecond;
  static constexpr Nanos kPublishEvery = 250 * kMillisecond;

  // What was last rendered. Immutable once published.
  struct Snapshot {
    std::string text;
    std::vector<stats::PrometheusSample> samples;  // empty unless Start's keep_samples
    int64_t wall_millis = 0;                       // when it was rendered, ms since the epoch
  };

  // Parses `address` ("IP:PORT", "[IPv6]:PORT" or "localhost:PORT"; port 0 picks a free one),
  // binds it and starts serving (before the run: the figures are zero); an empty `address`
  // serves nothing. `keep_samples`: snapshots also hold the samples as values. `options` must
  // outlive this object. Errors name --metrics-listen: a malformed address, a failed bind.
  static Result<std::unique_ptr<LoadMetrics>> Start(std::string_view address,
                                                    const LoadOptions* options,
                                                    bool keep_samples = false);
  ~LoadMetrics();  // stops serving
  LoadMetrics(const LoadMetrics&) = delete;
  LoadMetrics& operator=(const LoadMetrics&) = delete;

  // The bound address (with the chosen port).
  net::SocketAddress address() const { return address_; }

  // The run's controlling thread only. BeginRun when the workers start; Update as often as it
  // likes (it merges what the workers queued; it renders at most every kPublishEvery unless
  // `force`); EndRun once every worker has stopped.
  void BeginRun(MonoNanos start);
  void Update(MonoNanos now, RunMonitor& monitor, bool force = false);
  void EndRun(MonoNanos now, RunMonitor& monitor);

  // The text a scrape gets now. Any thread.
  std::string Text() const;
  // The snapshot last published (never null). Any thread.
  std::shared_ptr<const Snapshot> Latest() const;

 private:
  class Handler;
  LoadMetrics(const LoadOptions* options, bool keep_samples);
  std::shared_ptr<const Snapshot> Render(MonoNanos now, const RunMonitor::View& totals) const;
  double AchievedRate(MonoNanos now, uint64_t requests);

  const LoadOptions* options_;
  const bool keep_samples_;
  net::LoopGroup loop_{1};
  std::unique_ptr<Handler> handler_;
  std::unique_ptr<http::HttpListener> listener_;
  net::SocketAddress address_;

  // The controlling thread's state.
  stats::KeyTable keys_;
  MonoNanos start_ = 0;
  MonoNanos end_ = 0;
  MonoNanos last_publish_ = 0;
  bool running_ = false;
  std::deque<std::pair<MonoNanos, uint64_t>> ended_;  // (when, requests ended so far)
  double rate_ = 0;

  mutable std::mutex mutex_;  // guards snapshot_
  std::shared_ptr<const Snapshot> snapshot_;
};

}  // namespace hammer::load
