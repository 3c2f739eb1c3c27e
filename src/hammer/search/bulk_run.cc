#include "hammer/search/bulk_run.h"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <thread>

#include "hammer/base/signals.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/resolver.h"
#include "hammer/search/bulk_feeder.h"
#include "hammer/search/bulk_session.h"

namespace hammer::search {
namespace {

constexpr Nanos kTick = 100 * kMillisecond;

// What the run shows while it works (base/progress.h).
class BulkReport final : public ProgressReporter::Source {
 public:
  static constexpr ProgressReporter::Schedule kSchedule{.live = kSecond, .status = 60 * kSecond};

  explicit BulkReport(const BulkProgress* progress) : progress_(progress) {}

  std::string LiveLine(double elapsed) override {
    const uint64_t indexed = progress_->indexed.load(std::memory_order_relaxed);
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%6.1fs  %" PRIu64 " read  %" PRIu64 " indexed  %" PRIu64
                  " dead-lettered  %.0f docs/s  %" PRIu64 " requests  %" PRIu64
                  " retries  in flight %" PRIu64,
                  elapsed, progress_->read.load(std::memory_order_relaxed), indexed,
                  progress_->dead_lettered.load(std::memory_order_relaxed),
                  elapsed > 0 ? static_cast<double>(indexed) / elapsed : 0.0,
                  progress_->requests.load(std::memory_order_relaxed),
                  progress_->retries.load(std::memory_order_relaxed),
                  progress_->in_flight.load(std::memory_order_relaxed));
    return line;
  }

  std::string StatusLine(double elapsed) override {
    char line[160];
    std::snprintf(line, sizeof(line),
                  "%" PRIu64 " read, %" PRIu64 " indexed, %" PRIu64 " dead-lettered, %.0f s",
                  progress_->read.load(), progress_->indexed.load(),
                  progress_->dead_lettered.load(), elapsed);
    return line;
  }

 private:
  const BulkProgress* progress_;
};

}  // namespace

Result<BulkResult> RunBulk(const BulkOptions& options, const ProgressOptions& progress_options) {
  Result<std::unique_ptr<DeadLetterWriter>> dead_letters =
      DeadLetterWriter::Open(options.dead_letter_path, "hammer bulk");
  if (!dead_letters.ok()) return dead_letters.status();
  net::LoopGroup loops(1);
  if (Status status = loops.Init(); !status.ok()) return status;
  net::Resolver resolver(1);
  BulkProgress progress;
  BulkSession session(options, loops.loop(0), &resolver, dead_letters->get(), &progress);
  session.set_live_line(progress_options.live_line);

  // Written on the loop thread before the reader starts; read here after Join().
  Status fatal;
  std::unique_ptr<BulkFeeder> feeder;
  std::thread reader;
  Status input_status;
  loops.loop(0)->Post([&] {
    session.Begin([&](Result<DocumentRouter> router) {
      if (!router.ok()) {
        fatal = router.status();
        return;
      }
      FeederOptions feeder_options = options.feeder;
      feeder_options.shard_lanes = options.routing == BulkRouting::kShardAware;
      feeder_options.gzip = options.writer.gzip;
      feeder = std::make_unique<BulkFeeder>(std::move(feeder_options), std::move(*router),
                                            session.queue(), dead_letters->get(), &progress);
      reader = std::thread([&] { input_status = feeder->Run(); });
    });
  });

  BulkReport report(&progress);
  ProgressReporter reporter("hammer bulk", progress_options, BulkReport::kSchedule, &report);
  loops.Start();
  const MonoNanos start = MonoNow();
  reporter.Begin(start);
  bool interrupted = false;
  // Waiting on the loops, not on signals: the end is seen (and timed) as the last loop stops; a
  // signal waits at most a tick to be taken.
  while (!loops.WaitUntilStopped(kTick)) {
    if (WaitForShutdownSignal(0) != 0 && !interrupted) {
      interrupted = true;
      loops.loop(0)->Post([&session] { session.Stop(); });
      reporter.Say("hammer bulk: stopping; waiting for requests in flight");
    }
    reporter.Poll(MonoNow());
  }
  loops.Join();
  const MonoNanos end = MonoNow();
  reporter.End();
  if (reader.joinable()) {
    session.queue()->Abort();  // a reader waiting for queue space must not wait for a dead loop
    reader.join();
  }
  if (!fatal.ok()) return fatal;
  if (feeder == nullptr) return Status::Error("interrupted before the cluster answered");

  BulkResult result;
  result.stats = session.TakeStats();
  result.stats.Merge(feeder->stats());
  result.stats.seconds = static_cast<double>(end - start) / kSecond;
  result.stats.stopped_by_signal = interrupted;
  result.input_error = input_status;
  result.dead_letter_error = (*dead_letters)->Close();
  const BulkStats& s = result.stats;
  reporter.hadoop().Counters("hammer_bulk", BulkStats::kCounterSpecs, s.CounterValues());
  reporter.hadoop().Counter("hammer_bulk", "dead_lettered", s.dead_lettered());
  return result;
}

}  // namespace hammer::search
