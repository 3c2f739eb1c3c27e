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
constexpr Nanos kLiveInterval = 1 * kSecond;

void PrintLiveLine(const BulkProgress& progress, double elapsed) {
  const uint64_t indexed = progress.indexed.load(std::memory_order_relaxed);
  std::fprintf(stderr,
               "\r\x1b[K%6.1fs  %" PRIu64 " read  %" PRIu64 " indexed  %" PRIu64
               " dead-lettered  %.0f docs/s  %" PRIu64 " requests  %" PRIu64
               " retries  in flight %" PRIu64,
               elapsed, progress.read.load(std::memory_order_relaxed), indexed,
               progress.dead_lettered.load(std::memory_order_relaxed),
               elapsed > 0 ? static_cast<double>(indexed) / elapsed : 0.0,
               progress.requests.load(std::memory_order_relaxed),
               progress.retries.load(std::memory_order_relaxed),
               progress.in_flight.load(std::memory_order_relaxed));
  std::fflush(stderr);
}

}  // namespace

Result<BulkResult> RunBulk(const BulkOptions& options,
                           const BulkProgressOptions& progress_options) {
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

  loops.Start();
  const MonoNanos start = MonoNow();
  MonoNanos next_live = start + kLiveInterval;
  MonoNanos next_status = start + progress_options.status_interval;
  bool interrupted = false;
  while (!loops.WaitUntilStopped(0)) {
    if (WaitForShutdownSignal(kTick) != 0 && !interrupted) {
      interrupted = true;
      loops.loop(0)->Post([&session] { session.Stop(); });
      std::fprintf(stderr, "%shammer bulk: stopping; waiting for requests in flight\n",
                   progress_options.live_line ? "\r\x1b[K" : "");
    }
    const MonoNanos now = MonoNow();
    const double elapsed = static_cast<double>(now - start) / kSecond;
    if (progress_options.live_line && now >= next_live) {
      PrintLiveLine(progress, elapsed);
      next_live = now + kLiveInterval;
    }
    if (progress_options.hadoop_reporter && now >= next_status) {
      std::fprintf(stderr,
                   "reporter:status:hammer bulk: %" PRIu64 " read, %" PRIu64 " indexed, %" PRIu64
                   " dead-lettered, %.0f s\n",
                   progress.read.load(), progress.indexed.load(), progress.dead_lettered.load(),
                   elapsed);
      next_status = now + progress_options.status_interval;
    }
  }
  loops.Join();
  const MonoNanos end = MonoNow();
  if (progress_options.live_line) std::fprintf(stderr, "\r\x1b[K");
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
  if (progress_options.hadoop_reporter) {
    const BulkStats& s = result.stats;
    for (auto [name, value] :
         {std::pair{"documents_read", s.documents_read}, std::pair{"indexed", s.indexed},
          std::pair{"dead_lettered", s.dead_lettered()}, std::pair{"unroutable", s.unroutable},
          std::pair{"requests", s.requests},
          std::pair{"requests_off_primary", s.requests_off_primary}}) {
      std::fprintf(stderr, "reporter:counter:hammer_bulk,%s,%" PRIu64 "\n", name, value);
    }
  }
  return result;
}

}  // namespace hammer::search
