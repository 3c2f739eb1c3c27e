#include "hammer/load/load_run.h"

#include <cinttypes>
#include <cstdio>
#include <map>

#include "hammer/base/duration.h"
#include "hammer/base/signals.h"
#include "hammer/load/load_worker.h"
#include "hammer/load/record_sink.h"
#include "hammer/load/run_monitor.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/resolver.h"
#include "hammer/stats/partial.h"

namespace hammer::load {

namespace {

constexpr Nanos kTick = 50 * kMillisecond;
constexpr Nanos kLiveInterval = kSecond;

std::string Millis(int64_t micros) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fms", static_cast<double>(micros) / 1000.0);
  return buf;
}

// Emits Hadoop counters for what failed since the last call.
class CounterReporter {
 public:
  void Emit(const FailureCounts& now) {
    for (size_t i = 0; i < kFailureCount; ++i) {
      uint64_t delta = now.by_type[i] - emitted_.by_type[i];
      if (delta == 0) continue;
      std::fprintf(stderr, "reporter:counter:error,%s,%" PRIu64 "\n", kFailureNames[i].data(),
                   delta);
    }
    emitted_ = now;
  }

 private:
  FailureCounts emitted_;
};

}  // namespace

Result<LoadSummary> RunLoad(const LoadOptions& options, LoadInput input, int records_fd,
                            const ProgressOptions& progress) {
  const int threads = options.threads;
  net::LoopGroup loops(threads);
  if (Status s = loops.Init(); !s.ok()) return s;
  net::Resolver resolver(1);
  RecordSink sink(records_fd);
  RunMonitor monitor(threads);
  SharedRunState shared;
  if (options.max_requests > 0) {
    shared.requests_left.store(static_cast<int64_t>(options.max_requests));
  }
  shared.verbose_left.store(options.verbose);
  std::vector<std::unique_ptr<LoadWorker>> workers;
  for (int i = 0; i < threads; ++i) {
    workers.push_back(std::make_unique<LoadWorker>(i, threads, loops.loop(i), &resolver, &options,
                                                   input.lines.get(), input.specs.get(), &sink,
                                                   &monitor, &shared));
  }

  if (progress.start_at > 0) {
    Nanos wait = progress.start_at - MonoNow();
    if (wait > 0 && progress.hadoop_reporter) {
      std::fprintf(stderr, "reporter:status:hammer load: waiting %s for --start-at\n",
                   FormatDuration(wait).c_str());
    }
    if (wait > 0 && WaitForShutdownSignal(wait) != 0) {
      LoadSummary summary;
      summary.interrupted = true;
      return summary;
    }
  }

  loops.Start();
  const MonoNanos start = MonoNow();
  for (auto& worker : workers)
    worker->Start(start);

  CounterReporter counters;
  MonoNanos next_live = start + kLiveInterval;
  MonoNanos next_counters = start + progress.counter_interval;
  MonoNanos next_status = start + progress.status_interval;
  bool interrupted = false;
  const std::string who = progress.label.empty() ? "" : " (" + progress.label + ")";
  if (progress.hadoop_reporter) {
    std::fprintf(stderr, "reporter:status:hammer load%s: started\n", who.c_str());
  }
  while (!loops.WaitUntilStopped(0)) {
    if (WaitForShutdownSignal(kTick) != 0) {
      if (interrupted) {
        shared.stop.store(true);  // a second signal: stop sending, even mid-batch
      }
      interrupted = true;
      for (auto& worker : workers)
        worker->RequestStop();
      std::fprintf(stderr, "%shammer load: stopping, waiting for requests in flight\n",
                   progress.live_line ? "\r\x1b[K" : "");
    }
    MonoNanos now = MonoNow();
    if (progress.live_line && now >= next_live) {
      RunMonitor::View view = monitor.TakeView();
      double elapsed = static_cast<double>(now - start) / kSecond;
      uint64_t done = view.succeeded + view.failed;
      std::fprintf(stderr,
                   "\r\x1b[K%6.1fs  %" PRIu64
                   " requests  %.0f req/s  p50 %s  p99 %s  "
                   "errors %" PRIu64 "  in flight %" PRIu64,
                   elapsed, done, elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0,
                   Millis(view.recent.ValueAtPercentile(50)).c_str(),
                   Millis(view.recent.ValueAtPercentile(99)).c_str(), view.failed, view.in_flight);
      std::fflush(stderr);
      next_live = now + kLiveInterval;
    }
    if (progress.hadoop_reporter && now >= next_counters) {
      counters.Emit(monitor.Totals().failures);
      next_counters = now + progress.counter_interval;
    }
    if (progress.hadoop_reporter && now >= next_status) {
      RunMonitor::View view = monitor.Totals();
      std::fprintf(stderr,
                   "reporter:status:hammer load%s: %" PRIu64 " requests, %" PRIu64
                   " failed, %.0f s\n",
                   who.c_str(), view.succeeded + view.failed, view.failed,
                   static_cast<double>(now - start) / kSecond);
      next_status = now + progress.status_interval;
    }
  }
  loops.Join();
  const MonoNanos end = MonoNow();
  if (progress.live_line) std::fprintf(stderr, "\r\x1b[K");

  LoadSummary summary;
  summary.seconds = static_cast<double>(end - start) / kSecond;
  summary.open_loop = options.rate > 0;
  summary.target_rate = options.rate;
  summary.concurrency = options.concurrency;
  summary.interrupted = interrupted;
  if (input.lines) summary.source_warning = input.lines->warning();
  if (input.specs) {
    summary.input_error = input.specs->error();
    if (summary.input_error) return *summary.input_error;
    summary.skipped = input.specs->skipped();
  }
  std::map<std::string, stats::KeyStats> keys;
  for (auto& worker : workers) {
    WorkerResult& r = worker->result();
    for (auto& [key, stats] : r.keys) {
      summary.total.Merge(stats);
      keys[key].Merge(stats);
    }
    summary.uncorrected.Merge(r.uncorrected);
    summary.late_no_slot += r.late_no_slot;
    summary.late_behind += r.late_behind;
    summary.dropped += r.dropped;
    summary.client.Merge(r.client);
    summary.connect_time.Merge(r.connect_time);
    summary.handshake_time.Merge(r.handshake_time);
    summary.tls_handshakes += r.tls.handshakes;
    summary.tls_resumed += r.tls.resumed;
    summary.redirects += r.redirects;
    for (size_t i = 0; i < kFailureCount; ++i) {
      for (std::string& e : r.failure_examples[i]) {
        if (summary.failure_examples[i].size() < kFailureExamples) {
          summary.failure_examples[i].push_back(std::move(e));
        }
      }
    }
  }
  summary.timeline = monitor.TakeTimeline();
  summary.succeeded = summary.total.count;
  summary.failed = summary.total.errors;
  for (auto& [key, stats] : keys) {
    if (stats.total() > 0) summary.keys.emplace_back(key, std::move(stats));
  }
  if (options.emit == EmitMode::kPartials) {
    // One mergeable partial per key: a Hadoop shuffle of O(keys) lines instead of O(requests).
    std::string partials;
    for (const auto& [key, stats] : summary.keys) {
      stats::AppendPartialRecord(partials, key, stats);
      if (partials.size() > (1u << 16)) {
        sink.Write(partials);
        partials.clear();
      }
    }
    sink.Write(partials);
  }
  if (progress.hadoop_reporter) {
    counters.Emit(summary.total.failures);
    std::fprintf(stderr, "reporter:status:hammer load%s: done, %" PRIu64 " requests\n", who.c_str(),
                 summary.requests());
  }
  return summary;
}

}  // namespace hammer::load
