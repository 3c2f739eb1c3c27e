// ConstantQpsDispatcher<T>: the constant-qps strategy for one dark cluster. This instance
// sends Nd · target / Ns requests per second to the cluster (ConstantQpsSendRate), whatever
// the inbound rate, taken from a ring buffer of recent inbound requests: when inbound is
// slower than the target, recent requests are sent again; when it is faster, they are sampled;
// when inbound stops, sending continues until every buffered request is older than the TTL,
// then pauses until the next Offer. (rest.li CONSTANT_QPS: ConstantQpsDarkClusterStrategy in
// github.com/linkedin/rest.li; timing in constant_qps_schedule.h, storage in
// evicting_ring_buffer.h.)
//
// T is whatever the caller needs to send a request again later: an id, or a
// std::shared_ptr<const StoredRequest>. The dispatcher owns the T values it holds and drops
// them when overwritten, expired or cleared.
//
// Driving it (no sockets, no timers inside; time is passed in):
//   on each eligible inbound request:  d.SetShape(shape, now); d.Offer(request, now);
//   whenever the loop wakes up:        d.Due(now, send);  then arm a timer for d.NextWakeup()
//   on membership refresh / shutdown:  d.Clear();   (rest.li #1132: no orphaned schedule)
//
// Per dark cluster and event loop; never share one between clusters (rest.li #725: a shared
// limiter splits the budget). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/dark/cluster_shape.h"
#include "hammer/dark/constant_qps_schedule.h"
#include "hammer/dark/evicting_ring_buffer.h"

namespace hammer::dark {

struct ConstantQpsOptions {
  size_t buffer_capacity = 1000;    // recent requests kept (rest.li dispatcherMaxRequestsToBuffer)
  Nanos buffer_ttl = 10 * kSecond;  // how long one stays eligible for (re-)sending
  Nanos max_lag = kSecond;  // dispatches planned longer ago than this when Due runs are skipped
};

template <typename T>
class ConstantQpsDispatcher {
 public:
  static constexpr MonoNanos kNever = ConstantQpsSchedule::kNever;

  // Fails when the capacity or the TTL is below 1.
  static Result<ConstantQpsDispatcher> Create(const ConstantQpsOptions& options, uint64_t seed) {
    Result<EvictingRingBuffer<T>> buffer =
        EvictingRingBuffer<T>::Create(options.buffer_capacity, options.buffer_ttl);
    if (!buffer.ok()) return buffer.status();
    return ConstantQpsDispatcher(std::move(*buffer), ConstantQpsSchedule(seed, options.max_lag));
  }

  // Sets the rate from the cluster's shape (cheap and a no-op when the rate is unchanged, so it
  // may be called on every request).
  void SetShape(const ClusterShape& shape, MonoNanos now) {
    schedule_.SetRate(ConstantQpsSendRate(shape), now);
  }
  void SetRate(double per_second, MonoNanos now) { schedule_.SetRate(per_second, now); }

  // Buffers a request for sending; restarts a paused schedule.
  void Offer(T request, MonoNanos now) {
    buffer_.Put(std::move(request), now);
    ++offered_;
    schedule_.Resume(now);
  }

  // Calls send(const T&) once for every dispatch due at or before `now` and returns how many
  // were sent. Finding every buffered request expired pauses the schedule until the next Offer.
  // `send` must not call back into this dispatcher.
  template <typename F>
  size_t Due(MonoNanos now, F&& send) {
    size_t sent = 0;
    while (schedule_.TakeDue(now)) {
      const T* request = buffer_.Get(now);
      if (request == nullptr) {
        schedule_.Pause();
        ++idle_pauses_;
        break;
      }
      ++sent;
      send(*request);
    }
    dispatched_ += sent;
    return sent;
  }

  // When Due should next be called; kNever while paused (nothing to send) or at rate 0.
  MonoNanos NextWakeup() const { return schedule_.next_dispatch(); }

  // Drops every buffered request and the schedule (refresh, shutdown).
  void Clear() {
    buffer_.Clear();
    schedule_.Reset();
  }

  double rate() const { return schedule_.rate(); }
  uint64_t offered() const { return offered_; }
  uint64_t dispatched() const { return dispatched_; }
  uint64_t skipped() const { return schedule_.skipped(); }  // dispatches dropped for lateness
  uint64_t idle_pauses() const { return idle_pauses_; }     // times every request had expired
  const EvictingRingBuffer<T>& buffer() const { return buffer_; }
  const ConstantQpsSchedule& schedule() const { return schedule_; }

 private:
  ConstantQpsDispatcher(EvictingRingBuffer<T> buffer, ConstantQpsSchedule schedule)
      : buffer_(std::move(buffer)), schedule_(std::move(schedule)) {}

  EvictingRingBuffer<T> buffer_;
  ConstantQpsSchedule schedule_;
  uint64_t offered_ = 0;
  uint64_t dispatched_ = 0;
  uint64_t idle_pauses_ = 0;
};

}  // namespace hammer::dark
