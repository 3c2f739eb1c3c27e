#include "hammer/load/load_worker.h"

#include <algorithm>
#include <utility>

#include "hammer/http/tls.h"
#include "hammer/http/url.h"
#include "hammer/load/target_line.h"
#include "hammer/stats/record.h"

namespace hammer::load {

namespace {

constexpr size_t kRecordFlushBytes = 64 * 1024;
constexpr int kInvalidLinesPerTurn = 256;  // then yield to the loop
constexpr Nanos kLateThreshold = kMillisecond;
// How often a worker hands its figures to the monitor. Shorter than anything that reads them:
// the live line printed each second would otherwise miss up to a whole interval (at 200 req/s,
// "1.0s 9 requests" when the run began just before a wall-clock second), and Prometheus, which
// computes rates from the counters it scrapes, would see counters that move in 1 s steps alias
// (a 5 s window holding 3 or 5 steps, +-25 %). Intervals end on wall-clock multiples, so each
// still falls in one bucket of the run's 1 s Timeline.
constexpr Nanos kReportInterval = 100 * kMillisecond;
// How often a worker waiting for input asks again (a pipe or terminal that is idle): how late
// a line may be sent after it arrived. That lateness is part of the wait, not of a latency.
constexpr Nanos kInputPollInterval = 2 * kMillisecond;

std::unique_ptr<http::HttpClient> MakeClient(net::EventLoop* loop, net::Resolver* resolver,
                                             const LoadOptions& options) {
  http::ClientOptions client_options;
  client_options.connect_timeout = options.connect_timeout;
  client_options.dns_ttl = options.dns_ttl;
  client_options.tls = options.tls;
  client_options.http2 = options.http2;
  return std::make_unique<http::HttpClient>(loop, resolver, client_options);
}

// This worker's requests in flight at most: its share of the connections (HTTP/2) or of the
// concurrency (HTTP/1.1), times the streams per connection.
uint64_t SlotsOf(const LoadOptions& options, int workers, int index) {
  uint64_t share = ShareOf(static_cast<uint64_t>(options.concurrency), workers, index);
  return share * (options.in_flight_cap() / static_cast<uint64_t>(options.concurrency));
}

}  // namespace

LoadWorker::LoadWorker(int index, int workers, net::EventLoop* loop, net::Resolver* resolver,
                       const LoadOptions* options, TargetSource* lines, SpecSource* specs,
                       RecordSink* sink, RunMonitor* monitor, SharedRunState* shared)
    : index_(index),
      workers_(workers),
      loop_(loop),
      options_(options),
      sink_(sink),
      monitor_(monitor),
      shared_(shared),
      client_(MakeClient(loop, resolver, *options)),
      feed_(options, lines, specs, shared, client_.get(), SlotsOf(*options, workers, index)),
      pace_timer_(loop, [this] { OnPaceTimer(); }),
      interval_timer_(loop, [this] { ReportInterval(); }),
      stop_timer_(loop, [this] { OnStopTimer(); }) {
  // The run's key memory, split evenly: the merged table then gets it whole (load_run.cc).
  const uint64_t share = options->max_key_bytes / static_cast<uint64_t>(std::max(workers, 1));
  result_.keys = stats::KeyTable(options->max_keys,
                                 options->max_key_bytes > 0 ? std::max<uint64_t>(share, 1) : 0);
  interval_.keys = stats::KeyTable(options->max_keys);
  slot_options_.timeout = options->timeout;
  slot_options_.max_redirects = options->max_redirects;
  slot_options_.cookies = options->cookies;
  slot_options_.error_pattern = options->error_pattern.get();
  slot_options_.empty_body_is_error = options->empty_body_is_error;
  slot_options_.http2 = options->http2.enabled;
  slot_options_.headers = &options->headers;
  slot_options_.verbose_left = &shared->verbose_left;
  uint64_t slots = SlotsOf(*options, workers, index);
  for (uint64_t i = 0; i < slots; ++i) {
    slots_.push_back(std::make_unique<RequestSlot>(this, client_.get(), &slot_options_));
  }
  if (options->think_time.enabled()) {
    think_rng_.seed(options->source.seed + static_cast<uint64_t>(index));
    for (auto& slot : slots_) {
      RequestSlot* s = slot.get();
      think_timers_[s] = std::make_unique<net::Timer>(loop, [this, s] { StartAfterThinking(s); });
    }
  }
}

LoadWorker::~LoadWorker() = default;

void LoadWorker::Start(MonoNanos start) {
  loop_->Post([this, start] {
    start_ = start;
    warmup_end_ = start + options_->warmup;
    if (options_->duration > 0) stop_at_ = start + options_->duration;
    Begin();
  });
}

void LoadWorker::RequestStop() {
  loop_->Post([this] {
    stop_requested_ = true;
    MaybeFinish();
  });
}

void LoadWorker::AbortInFlight() {
  loop_->Post([this] {
    stop_requested_ = true;
    if (finished_) return;
    client_->CancelAll();  // no slot is called back after this
    result_.counters.aborted += in_flight_;
    in_flight_ = 0;
    free_slots_.clear();
    for (auto& slot : slots_)
      free_slots_.push_back(slot.get());
    MaybeFinish();
  });
}

bool LoadWorker::interrupted() const {
  return stop_requested_ || shared_->stop.load(std::memory_order_relaxed);
}

bool LoadWorker::stopping() const {
  return interrupted() || (stop_at_ != 0 && loop_->now() >= stop_at_);
}

// The end of -d. An open loop still sends the requests that fell due before it and have not gone
// out yet (the loop was busy, or every slot was): the schedule ends at the duration, not the clock.
void LoadWorker::OnStopTimer() {
  if (pacer_) Pump();
  MaybeFinish();
}

void LoadWorker::Begin() {
  interval_.wall_start_ms = WallNowMicros() / 1000;
  interval_timer_.ArmAfter(UntilNextReport());
  if (stop_at_ != 0) stop_timer_.ArmAt(stop_at_);
  for (auto& slot : slots_)
    free_slots_.push_back(slot.get());
  if (options_->rate > 0 || options_->recorded_timing) {
    if (options_->stages) {
      pacer_.emplace(start_, options_->stages.get(), index_, workers_);
    } else if (options_->rate > 0) {
      pacer_.emplace(start_, options_->rate, index_, workers_);
    }
    Pump();
  } else {
    Fill();
  }
  MaybeFinish();
}

// Closed loop: every free slot starts a request.
void LoadWorker::Fill() {
  while (!free_slots_.empty()) {
    RequestSlot* slot = free_slots_.back();
    free_slots_.pop_back();
    if (!StartNext(slot, 0)) {
      free_slots_.push_back(slot);
      return;
    }
  }
}

const PreparedRequest* LoadWorker::NextRequest(PreparedRequest* scratch) {
  const PreparedRequest* target = feed_.Next(scratch);
  if (target == nullptr) {
    if (feed_.waiting_for_input() && !input_wait_since_) input_wait_since_ = loop_->UpdateNow();
    return nullptr;
  }
  if (input_wait_since_) EndInputWait(loop_->UpdateNow());
  return target;
}

void LoadWorker::EndInputWait(MonoNanos now) {
  if (pacer_) pacer_->Delay(std::max<Nanos>(0, now - *input_wait_since_));
  input_wait_since_.reset();
}

bool LoadWorker::StartNext(RequestSlot* slot, MonoNanos intended) {
  int invalid = 0;
  while (!stopping()) {
    const PreparedRequest* target = NextRequest(slot->scratch());
    if (target == nullptr) {
      if (input_wait_since_) pace_timer_.ArmAfter(kInputPollInterval);  // then Fill again
      return false;
    }
    if (target->invalid) {
      RecordFailure(*target, Failure::kInvalidUrl, *target->invalid);
      if (++invalid == kInvalidLinesPerTurn) {
        // A long run of bad lines: let the loop breathe, then carry on.
        free_slots_.push_back(slot);
        // MaybeFinish too: this Fill may be the one that reaches the end of the input.
        loop_->Post([this] {
          Fill();
          MaybeFinish();
        });
        return true;
      }
      continue;
    }
    ++in_flight_;
    ++target->in_flight;
    slot->Start(target, intended);
    return true;
  }
  return false;
}

std::optional<int64_t> LoadWorker::RecordTimestamp() const {
  if (!options_->timestamps) return std::nullopt;
  return WallNowMicros() / 1000;
}

stats::KeyStats* LoadWorker::StatsOf(const PreparedRequest& request) {
  result_.keys.Recorded();  // may fold or shed rows: a new generation
  // A cached request keeps its row until the table folds; records always carry the real key.
  if (request.stats_generation != result_.keys.generation()) {
    request.stats = result_.keys.StatsFor(request.key);
    request.stats_generation = result_.keys.generation();
  }
  return request.stats;
}

void LoadWorker::OnRequestDone(RequestSlot* slot, const RequestOutcome& outcome) {
  --in_flight_;
  const PreparedRequest& request = *slot->request();
  if (outcome.intended < warmup_end_) {
    ++result_.counters.warmup;  // --warmup: sent, answered, and counted nowhere else
  } else {
    if (outcome.failure) {
      RecordFailure(request, *outcome.failure, outcome.detail);
    } else {
      RecordSuccess(request, (outcome.end - outcome.intended) / kMicrosecond,
                    (outcome.end - outcome.sent) / kMicrosecond);
    }
    if (outcome.grpc_status) result_.grpc_statuses.Record(*outcome.grpc_status);
    result_.status_codes.Record(outcome.status);
  }
  --request.in_flight;  // the feed may reuse it from here on
  if (outcome.connect_time > 0) result_.connect_time.Record(outcome.connect_time / kMicrosecond);
  if (outcome.handshake_time > 0) {
    result_.handshake_time.Record(outcome.handshake_time / kMicrosecond);
  }
  result_.counters.redirects += static_cast<uint64_t>(outcome.redirects);
  if (scheduled()) {
    free_slots_.push_back(slot);
    Pump();
  } else if (!think_timers_.empty() && !stopping()) {
    // The simulated user pauses before its next request (not in flight meanwhile).
    think_timers_[slot]->ArmAfter(options_->think_time.Sample(think_rng_));
  } else if (!StartNext(slot, 0)) {
    free_slots_.push_back(slot);
  }
  // Nothing more to send: the connection this response freed is closed now, while the other
  // requests are still answered, instead of with all the others after the last response
  // (the work after the last response of a 50-connection run: about 0.25 ms less here).
  if (feed_.exhausted() || stopping()) client_->StopReuse();
  MaybeFinish();
}

void LoadWorker::StartAfterThinking(RequestSlot* slot) {
  if (finished_) return;
  if (!StartNext(slot, 0)) free_slots_.push_back(slot);
  MaybeFinish();
}

void LoadWorker::RecordSuccess(const PreparedRequest& target, int64_t micros,
                               int64_t uncorrected_micros) {
  StatsOf(target)->RecordSuccess(micros);
  if (scheduled()) result_.uncorrected.Record(uncorrected_micros);
  ++interval_.succeeded;
  interval_.latency.Record(micros);
  if (options_->live_key_metrics) interval_.keys.StatsFor(target.key)->RecordSuccess(micros);
  if (options_->emit == EmitMode::kRecords) {
    stats::AppendSuccessRecord(records_, target.key, micros, RecordTimestamp());
    FlushRecords(false);
  }
}

void LoadWorker::RecordFailure(const PreparedRequest& target, Failure failure,
                               std::string_view detail) {
  if (failure == Failure::kInvalidUrl && loop_->now() < warmup_end_) {
    ++result_.counters.warmup;  // a bad line read during --warmup
    return;
  }
  StatsOf(target)->RecordFailure(failure);
  result_.failures.Add(failure);
  ++interval_.failed;
  interval_.failures.Add(failure);
  if (options_->live_key_metrics) interval_.keys.StatsFor(target.key)->RecordFailure(failure);
  auto& examples = result_.failure_examples[static_cast<size_t>(failure)];
  if (examples.size() < kFailureExamples) {
    std::string example = target.key + ": " + std::string(detail);
    bool seen = false;
    for (const std::string& e : examples)
      seen = seen || e == example;
    if (!seen) examples.push_back(std::move(example));
  }
  if (options_->emit == EmitMode::kRecords) {
    stats::AppendFailureRecord(
        records_, target.key, RecordTimestamp(),
        options_->failure_types ? std::optional<Failure>(failure) : std::nullopt);
    FlushRecords(false);
  }
}

void LoadWorker::FlushRecords(bool force) {
  if (records_.empty() || (!force && records_.size() < kRecordFlushBytes)) return;
  sink_->Write(records_);
  records_.clear();
}

// Request files with --har-timing: each entry is due at its recorded offset from the start.
void LoadWorker::PumpRecorded() {
  while (!free_slots_.empty() && !stopping()) {
    // The clock read for each entry: entries that fall due while this one is sent go out in
    // this turn, and each send time in the replay's report is its own.
    MonoNanos now = loop_->UpdateNow();
    std::optional<Nanos> offset = feed_.PeekOffset();
    if (!offset) break;
    MonoNanos due = start_ + std::max<Nanos>(0, *offset);
    if (stop_at_ != 0 && due >= stop_at_) {
      recording_done_ = true;
      break;
    }
    if (due > now) {
      pace_timer_.ArmAt(due);
      return;
    }
    RequestSlot* slot = free_slots_.back();
    const PreparedRequest* target = feed_.Next(slot->scratch());
    if (target == nullptr) break;
    if (target->invalid) {
      RecordFailure(*target, Failure::kInvalidUrl, *target->invalid);
      continue;
    }
    free_slots_.pop_back();
    if (now - due > kLateThreshold) {
      ++(free_slots_.empty() ? result_.counters.late_no_slot : result_.counters.late_behind);
    }
    result_.replay.Sent(due - start_, now - start_);
    ++in_flight_;
    slot->Start(target, due);
  }
  pace_timer_.Cancel();
}

// Open loop: send every request that is due, as long as slots are free.
void LoadWorker::Pump() {
  if (finished_) return;
  if (!pacer_) {
    PumpRecorded();
    return;
  }
  MonoNanos now = loop_->UpdateNow();
  uint64_t due = pacer_->DueCount(now);
  while (next_due_ < due && !free_slots_.empty() && !interrupted()) {
    MonoNanos intended = pacer_->DueTime(next_due_);
    if (stop_at_ != 0 && intended >= stop_at_) break;
    RequestSlot* slot = free_slots_.back();
    const bool waited = input_wait_since_.has_value();
    const PreparedRequest* target = NextRequest(slot->scratch());
    if (target == nullptr) break;
    if (waited) {  // the schedule paused while waiting for this line: it is due later
      now = loop_->now();
      intended = pacer_->DueTime(next_due_);
      due = pacer_->DueCount(now);
      if (stop_at_ != 0 && intended >= stop_at_) break;  // it came after the end
    }
    ++next_due_;
    if (target->invalid) {
      RecordFailure(*target, Failure::kInvalidUrl, *target->invalid);
      continue;
    }
    free_slots_.pop_back();
    if (now - intended > kLateThreshold) {
      ++(slot_starved_ ? result_.counters.late_no_slot : result_.counters.late_behind);
    }
    ++in_flight_;
    slot->Start(target, intended);
  }
  // Requests still due with every slot busy: they will go out late, when a slot frees.
  slot_starved_ = next_due_ < due && free_slots_.empty();
  ArmPaceTimer();
}

void LoadWorker::ArmPaceTimer() {
  if (free_slots_.empty() || feed_.exhausted() || interrupted()) {
    pace_timer_.Cancel();
    return;
  }
  if (input_wait_since_) {
    pace_timer_.ArmAfter(kInputPollInterval);
    return;
  }
  MonoNanos next = pacer_->DueTime(next_due_);
  if (stop_at_ != 0 && next >= stop_at_) {
    pace_timer_.Cancel();
    return;
  }
  pace_timer_.ArmAt(next);
}

void LoadWorker::OnPaceTimer() {
  if (scheduled()) {
    Pump();
  } else {
    Fill();  // closed loop: the input had no line; ask again
  }
  MaybeFinish();
}

Nanos LoadWorker::UntilNextReport() const {
  // Intervals end on multiples of their length in wall-clock time, so that each one falls in
  // one bucket of the run's Timeline (whole seconds): only the first and last are partial.
  const int64_t period_us = kReportInterval / kMicrosecond;
  const int64_t now_us = WallNowMicros();
  return std::max<Nanos>((period_us - now_us % period_us) * kMicrosecond, kMillisecond);
}

void LoadWorker::TakeClientCounters() {
  const http::ClientCounters& client = client_->counters();
  const http::TlsCounters tls = client_->tls_counters();
  LoadCounters& c = result_.counters;
  c.connections_opened = client.connections_opened;
  c.connections_reused = client.connections_reused;
  c.stale_retries = client.stale_retries;
  c.tls_handshakes = tls.handshakes;
  c.tls_resumed = tls.resumed;
}

void LoadWorker::ReportInterval() {
  // Records leave at least once an interval, whatever the rate: a reader (`| head -1`, a tail)
  // sees them live, and a sink that failed is found within a second.
  FlushRecords(true);
  TakeClientCounters();
  interval_.in_flight = in_flight_;
  interval_.counters = result_.counters;
  interval_.wall_end_ms = WallNowMicros() / 1000;
  monitor_->Report(index_, interval_);
  interval_ = IntervalSnapshot{};
  interval_.keys = stats::KeyTable(options_->max_keys);
  interval_.wall_start_ms = WallNowMicros() / 1000;
  if (!finished_) interval_timer_.ArmAfter(UntilNextReport());
}

void LoadWorker::MaybeFinish() {
  if (finished_ || in_flight_ > 0) return;
  // An open loop with -d ends when its schedule does (requests due before the end still go out
  // late); everything else when the clock passes the end.
  bool no_more = feed_.exhausted() || (pacer_ ? interrupted() : stopping());
  if (pacer_ && stop_at_ != 0 && pacer_->DueTime(next_due_) >= stop_at_) no_more = true;
  // Waiting for input at the end of -d: the schedule is paused, so nothing more falls due.
  if (input_wait_since_ && stopping()) no_more = true;
  if (recording_done_) no_more = true;
  if (!no_more) return;
  finished_ = true;
  finished_at_ = MonoNow();
  // Due before the end but never sent (interrupted first): reported, not hidden. Not when the
  // run ends waiting for input: the schedule is paused, nothing more has fallen due.
  if (pacer_ && !feed_.exhausted() && !input_wait_since_) {
    MonoNanos end = stop_at_ != 0 ? std::min(loop_->now(), stop_at_ - 1) : loop_->now();
    uint64_t due = pacer_->DueCount(end);
    if (due > next_due_) result_.counters.dropped = due - next_due_;
  }
  pace_timer_.Cancel();
  stop_timer_.Cancel();
  interval_timer_.Cancel();
  for (auto& [slot, timer] : think_timers_)
    timer->Cancel();
  FlushRecords(true);
  ReportInterval();
  client_->CloseIdle();
  loop_->Stop();
}

}  // namespace hammer::load
