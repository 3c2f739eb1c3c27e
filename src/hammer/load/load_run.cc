#include "hammer/load/load_run.h"

#include <memory>
#include <utility>
#include <vector>

#include "hammer/base/duration.h"
#include "hammer/base/open_file_limit.h"
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
constexpr size_t kPartialsFlushBytes = 64 * 1024;

using Workers = std::vector<std::unique_ptr<LoadWorker>>;

// --start-at: waits until then. Returns the signal that came first, 0 when none did.
int WaitForStart(MonoNanos start_at, ProgressReporter& progress) {
  Nanos wait = start_at - MonoNow();
  if (wait <= 0) return 0;
  const std::string waiting = "hammer load: waiting " + FormatDuration(wait) + " for --start-at";
  progress.Say(waiting);
  progress.hadoop().Status(waiting);
  return WaitForShutdownSignal(wait);
}

// Run control, on the calling thread: reports progress until every loop has stopped. The first
// signal, or records that can no longer be written (a closed pipe, a full disk), asks the
// workers to finish what is in flight and ends the input (a worker skipping an endless line
// returns); a second signal abandons the requests in flight. Returns the first signal, 0 when
// none came. An abort (--abort-on-fail) stops the run as a first signal does.
int DriveWorkers(net::LoopGroup& loops, Workers& workers, SharedRunState& shared, LoadInput& input,
                 const RecordSink& sink, ProgressReporter& progress, RunMonitor& monitor,
                 LoadMetrics* metrics, LoadDashboard* dashboard, AbortWatch* abort) {
  int first_signal = 0;
  bool stopping = false;
  auto stop = [&](const std::string& why) {
    stopping = true;
    if (input.lines) input.lines->Interrupt();
    if (input.specs) input.specs->Interrupt();
    for (auto& worker : workers)
      worker->RequestStop();
    progress.Say("hammer load: " + why);
  };
  // Waiting on the loops, not on signals: the run's end is seen the moment the last loop stops
  // (the summary's seconds end there), while a signal waits at most a tick to be taken.
  while (!loops.WaitUntilStopped(kTick)) {
    if (int signal = WaitForShutdownSignal(0); signal != 0) {
      if (first_signal != 0) {
        shared.stop.store(true);
        for (auto& worker : workers)
          worker->AbortInFlight();
        progress.Say("hammer load: second signal, abandoning the requests in flight");
      } else {
        first_signal = signal;
        if (!stopping) {
          stop("stopping, waiting for requests in flight (signal again to abandon them)");
        }
      }
    }
    if (!stopping && sink.failed()) {
      stop(sink.status().message() + "; stopping, waiting for requests in flight");
    }
    if (abort != nullptr) {
      const AbortReason* reason = abort->Update(MonoNow(), monitor);
      if (!stopping && reason != nullptr) {
        stop("aborting (--abort-on-fail): " + reason->Describe() +
             "; waiting for requests in flight");
      }
    }
    progress.Poll(MonoNow());
    if (metrics != nullptr) metrics->Update(MonoNow(), monitor);
    if (dashboard != nullptr) dashboard->Update(MonoNow(), monitor);
  }
  // A signal that came as the last worker stopped still marks the run as interrupted.
  if (first_signal == 0) first_signal = WaitForShutdownSignal(0);
  return first_signal;
}

// The run's figures from the workers' merged result: keys sorted, those without requests left
// out, every key merged into the total.
void Summarize(WorkerResult run, LoadSummary* summary) {
  summary->key_folding = run.keys.Folding();
  summary->keys = run.keys.TakeRows();
  std::erase_if(summary->keys, [](const auto& row) { return row.second.total() == 0; });
  for (const auto& [key, stats] : summary->keys)
    summary->total.Merge(stats);
  summary->succeeded = summary->total.count;
  summary->failed = summary->total.errors;
  summary->uncorrected = std::move(run.uncorrected);
  summary->counters = run.counters;
  summary->connect_time = std::move(run.connect_time);
  summary->handshake_time = std::move(run.handshake_time);
  summary->grpc_statuses = run.grpc_statuses;
  summary->status_codes = run.status_codes;
  summary->replay = std::move(run.replay);
  for (size_t i = 0; i < kFailureCount; ++i)
    summary->failure_examples[i] = std::move(run.failure_examples[i]);
}

// --emit partials: one mergeable partial per key, a Hadoop shuffle of O(keys) lines instead of
// O(requests). With a task, each carries its origin: a reader then keeps one attempt of it.
void WritePartials(const LoadOptions& options, const LoadSummary& summary, int64_t wall_start_us,
                   RecordSink& sink) {
  stats::PartialOrigin origin;
  origin.task = options.partial_task;
  origin.attempt = options.partial_attempt;
  origin.started_ms = wall_start_us / 1000;
  origin.lines = summary.keys.size();
  std::string partials;
  for (const auto& [key, stats] : summary.keys) {
    if (origin.task.empty()) {
      stats::AppendPartialRecord(partials, key, stats);
    } else {
      stats::AppendPartialRecord(partials, key, stats, origin);
    }
    if (partials.size() > kPartialsFlushBytes) {
      sink.Write(partials);
      partials.clear();
    }
  }
  // A reader of the partials learns that the run was cut short, and why (stats/record.h).
  if (summary.abort) stats::AppendAbortNote(partials, summary.abort->Describe());
  sink.Write(partials);
}

}  // namespace

Result<LoadSummary> RunLoad(const LoadOptions& options, LoadInput input, int records_fd,
                            const ProgressOptions& progress_options, LoadMetrics* metrics,
                            LoadDashboard* dashboard, AbortWatch* abort) {
  const int threads = options.threads;
  // Every connection in flight is a descriptor: -c 5000 needs more than a soft limit of 1024.
  RaiseOpenFileLimit();
  net::LoopGroup loops(threads);
  if (Status s = loops.Init(); !s.ok()) return s;
  net::Resolver resolver(1);
  RecordSink sink(records_fd);
  // Each live reader takes its own queue of the per-key intervals: the metrics the first, the
  // dashboard the next, the abort watch the last.
  const size_t key_readers =
      (metrics != nullptr ? 1 : 0) + (dashboard != nullptr ? 1 : 0) + (abort != nullptr ? 1 : 0);
  RunMonitor monitor(threads, key_readers);
  SharedRunState shared;
  if (options.max_requests > 0) {
    shared.requests_left.store(static_cast<int64_t>(options.max_requests));
  }
  shared.verbose_left.store(options.verbose);
  Workers workers;
  for (int i = 0; i < threads; ++i) {
    workers.push_back(std::make_unique<LoadWorker>(i, threads, loops.loop(i), &resolver, &options,
                                                   input.lines.get(), input.specs.get(), &sink,
                                                   &monitor, &shared));
  }
  LoadProgress report(&monitor);
  ProgressReporter progress("hammer load", progress_options, LoadProgress::kSchedule, &report);
  if (int signal = options.start_at > 0 ? WaitForStart(options.start_at, progress) : 0) {
    LoadSummary summary;
    summary.interrupted = true;
    summary.signal = signal;
    return summary;
  }

  loops.Start();
  const MonoNanos start = MonoNow();
  const int64_t wall_start_us = WallNowMicros();
  // Before the workers start: the dashboard takes the timeline from their first interval on.
  if (dashboard != nullptr) {
    dashboard->BeginRun(start, wall_start_us / 1000, monitor, (metrics != nullptr ? 1 : 0));
  }
  for (auto& worker : workers)
    worker->Start(start);
  progress.Begin(start);
  progress.Status("started");
  if (metrics != nullptr) metrics->BeginRun(start);
  if (abort != nullptr) abort->BeginRun(start, key_readers - 1);
  const int signal = DriveWorkers(loops, workers, shared, input, sink, progress, monitor, metrics,
                                  dashboard, abort);
  loops.Join();
  // The run ends at its last response (the last worker's end), not after the workers' own
  // ending work or the join: "seconds" and ended_at are the traffic's.
  MonoNanos end = start;
  for (const auto& worker : workers)
    end = std::max(end, worker->finished_at() != 0 ? worker->finished_at() : MonoNow());
  const int64_t wall_end_us = wall_start_us + (end - start) / kMicrosecond;
  if (metrics != nullptr) metrics->EndRun(end, monitor);
  if (dashboard != nullptr) dashboard->EndRun(end, monitor);
  progress.End();

  LoadSummary summary;
  // --warmup is not part of the measured run.
  const Nanos measured = std::max<Nanos>(0, end - start - options.warmup);
  summary.seconds = static_cast<double>(measured) / kSecond;
  summary.open_loop = options.rate > 0;
  summary.replayed = options.recorded_timing;
  summary.speed = options.speed;
  summary.target_rate = options.rate;
  if (options.stages && measured > 0) {
    // What the schedule asked for over the measured part, per second: comparable to rps().
    const long double due =
        options.stages->RequestsBy(end - start) - options.stages->RequestsBy(options.warmup);
    summary.target_rate = static_cast<double>(due / (static_cast<long double>(measured) / kSecond));
  }
  summary.concurrency = static_cast<int>(options.in_flight_cap());
  summary.wall_start_us = wall_start_us + std::min(options.warmup, end - start) / kMicrosecond;
  summary.wall_end_us = wall_end_us;
  summary.interrupted = signal != 0;
  summary.signal = signal;
  if (abort != nullptr) summary.abort = abort->reason();
  if (input.lines) {
    summary.source_warning = input.lines->warning();
    summary.input_wait_seconds = static_cast<double>(input.lines->waited(end)) / kSecond;
  }
  if (input.specs) {
    summary.input_error = input.specs->error();
    if (summary.input_error) return *summary.input_error;
    summary.skipped = input.specs->skipped();
    summary.source_warning = input.specs->warning();
  }
  // The run's key table has the whole --max-key-memory (each worker's had its share).
  WorkerResult run;
  run.keys = stats::KeyTable(options.max_keys, options.max_key_bytes);
  for (auto& worker : workers)
    run.Merge(std::move(worker->result()));
  Summarize(std::move(run), &summary);
  summary.timeline = monitor.TakeTimeline();
  if (options.emit == EmitMode::kPartials) WritePartials(options, summary, wall_start_us, sink);
  summary.records_error = sink.status();
  summary.records_written = sink.records_written();
  progress.hadoop().FailureCounters(summary.total.failures.counts());
  progress.Status("done, " + std::to_string(summary.requests()) + " requests");
  return summary;
}

}  // namespace hammer::load
