// LoadWorker: one thread's share of a load run (the wrk model: one event loop, its own
// HttpClient and connections, its own statistics; nothing shared on the hot path).
//
// Closed loop: `concurrency` slots each send a request, wait for its end, send the next.
// Open loop: requests are due on the OpenLoopPacer's schedule; a due request takes a free slot
// (or waits for one, its latency still counted from its due time). Every request ends as a
// success or as a failure of one Failure type, and is written as a record and counted in its
// key's KeyStats. Lines that are not valid URLs are failures too (invalid_url), never dropped.
//
// Input that has not arrived yet (an idle pipe or terminal: RequestFeed::waiting_for_input) is
// waited for without blocking the loop: the worker asks again every kInputPollInterval, sends
// each line as it arrives, and ends on time (--duration) whatever the input does. In open loop
// the wait pauses this thread's schedule (OpenLoopPacer::Delay), from when a due request found
// no line to when one came: the wait is the input's, not the target's latency.
//
// Threading: constructed on the main thread; Start() posts to the worker's loop; everything
// else runs on that loop. After the loop has returned, the main thread reads results.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "hammer/http/client.h"
#include "hammer/load/load_options.h"
#include "hammer/load/pacer.h"
#include "hammer/load/prepared_request.h"
#include "hammer/load/record_sink.h"
#include "hammer/load/request_feed.h"
#include "hammer/load/request_slot.h"
#include "hammer/load/run_monitor.h"
#include "hammer/load/target_source.h"
#include "hammer/load/worker_result.h"
#include "hammer/stats/key_stats.h"

namespace hammer::load {

// State every worker of a run shares: a stop flag, the --requests budget, and how many more
// request/response pairs --verbose may print.
struct SharedRunState {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> requests_left{INT64_MAX};
  std::atomic<int64_t> verbose_left{0};
};

class LoadWorker final : public RequestSlot::Owner {
 public:
  LoadWorker(int index, int workers, net::EventLoop* loop, net::Resolver* resolver,
             const LoadOptions* options, TargetSource* lines, SpecSource* specs, RecordSink* sink,
             RunMonitor* monitor, SharedRunState* shared);
  ~LoadWorker();

  // Begins sending at `start` (all workers get the same start). Thread-safe.
  void Start(MonoNanos start);
  // Asks the worker to stop sending and finish what is in flight. Thread-safe.
  void RequestStop();
  // Stops at once: the requests in flight are abandoned (their connections closed, no record
  // written) and counted in result().aborted. Thread-safe.
  void AbortInFlight();

  // Valid after the loop has returned.
  WorkerResult& result() { return result_; }
  // When the worker found it had nothing left to send or wait for: its last response (or the
  // stop, or the abort). What it does after (records flushed, connections closed) is not part
  // of the run's measured time. Valid after the loop has returned.
  MonoNanos finished_at() const { return finished_at_; }

 private:
  void Begin();
  void Fill();
  bool StartNext(RequestSlot* slot, MonoNanos intended);
  // feed_.Next, keeping the account of a wait for input (input_wait_since_, the pacer's pause).
  const PreparedRequest* NextRequest(PreparedRequest* scratch);
  // Ends a wait for input at `now`: the schedule pauses for as long as it lasted.
  void EndInputWait(MonoNanos now);
  void OnRequestDone(RequestSlot* slot, const RequestOutcome& outcome) override;
  void StartAfterThinking(RequestSlot* slot);
  void OnPaceTimer();
  void Pump();
  void PumpRecorded();
  // Open loop or recorded timing: latency counts from each request's due time.
  bool scheduled() const { return pacer_.has_value() || options_->recorded_timing; }
  void ArmPaceTimer();
  void RecordSuccess(const PreparedRequest& target, int64_t micros, int64_t uncorrected_micros);
  void RecordFailure(const PreparedRequest& target, Failure failure, std::string_view detail);
  void FlushRecords(bool force);
  void ReportInterval();
  // The client's connection and TLS counters into result_.counters.
  void TakeClientCounters();
  // Time until the end of the current report interval (aligned to the wall clock).
  Nanos UntilNextReport() const;
  void MaybeFinish();
  void OnStopTimer();
  // A signal, another worker's failure or a lost sink asked the run to stop.
  bool interrupted() const;
  // interrupted(), or the clock is past -d.
  bool stopping() const;
  // The row of `request`'s key in result_.keys (see PreparedRequest::stats), after checking the
  // table's memory budget (KeyTable::Recorded): the caller records one request into it.
  stats::KeyStats* StatsOf(const PreparedRequest& request);
  // --timestamps: the record's third field, when the request ended (Unix ms).
  std::optional<int64_t> RecordTimestamp() const;

  int index_;
  int workers_;
  net::EventLoop* loop_;
  const LoadOptions* options_;
  RecordSink* sink_;
  RunMonitor* monitor_;
  SharedRunState* shared_;
  std::unique_ptr<http::HttpClient> client_;

  SlotOptions slot_options_;
  std::vector<std::unique_ptr<RequestSlot>> slots_;
  std::vector<RequestSlot*> free_slots_;
  uint64_t in_flight_ = 0;

  RequestFeed feed_;

  std::optional<OpenLoopPacer> pacer_;
  uint64_t next_due_ = 0;  // this thread's next request index on the pacer's schedule
  net::Timer pace_timer_;
  net::Timer interval_timer_;
  net::Timer stop_timer_;
  // --think-time: one timer per slot, armed while the slot's simulated user pauses.
  std::unordered_map<RequestSlot*, std::unique_ptr<net::Timer>> think_timers_;
  std::mt19937_64 think_rng_;
  MonoNanos warmup_end_ = 0;  // requests due/sent before this are not counted (--warmup)
  MonoNanos start_ = 0;
  MonoNanos stop_at_ = 0;  // 0: no duration limit
  bool slot_starved_ = false;
  std::optional<MonoNanos> input_wait_since_;  // a request found no input line from then on
  bool recording_done_ = false;                // --har-timing: the next entry is due after the end
  bool stop_requested_ = false;
  bool finished_ = false;
  MonoNanos finished_at_ = 0;

  std::string records_;
  IntervalSnapshot interval_;
  WorkerResult result_;
};

}  // namespace hammer::load
