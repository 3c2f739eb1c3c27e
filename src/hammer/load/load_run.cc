#include "hammer/load/load_run.h"

#include <map>

#include "hammer/base/duration.h"
#include "hammer/base/signals.h"
#include "hammer/load/load_progress.h"
#include "hammer/load/load_worker.h"
#include "hammer/load/record_sink.h"
#include "hammer/load/run_monitor.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/resolver.h"
#include "hammer/stats/partial.h"

namespace hammer::load {

namespace {

constexpr Nanos kTick = 50 * kMillisecond;

}  // namespace

Result<LoadSummary> RunLoad(const LoadOptions& options, LoadInput input, int records_fd,
                            const ProgressOptions& progress_options) {
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

  LoadProgress report(&monitor);
  ProgressReporter progress("hammer load", progress_options, LoadProgress::kSchedule, &report);
  if (options.start_at > 0) {
    Nanos wait = options.start_at - MonoNow();
    if (wait > 0) {
      progress.hadoop().Status("hammer load: waiting " + FormatDuration(wait) + " for --start-at");
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

  progress.Begin(start);
  progress.Status("started");
  bool interrupted = false;
  while (!loops.WaitUntilStopped(0)) {
    if (WaitForShutdownSignal(kTick) != 0) {
      if (interrupted) {
        shared.stop.store(true);  // a second signal: stop sending, even mid-batch
      }
      interrupted = true;
      for (auto& worker : workers)
        worker->RequestStop();
      progress.Say("hammer load: stopping, waiting for requests in flight");
    }
    progress.Poll(MonoNow());
  }
  loops.Join();
  const MonoNanos end = MonoNow();
  progress.End();

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
  progress.hadoop().FailureCounters(summary.total.failures);
  progress.Status("done, " + std::to_string(summary.requests()) + " requests");
  return summary;
}

}  // namespace hammer::load
