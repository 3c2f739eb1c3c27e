#include "hammer/dark/upstream_pool.h"

#include <algorithm>

namespace hammer::dark {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
}  // namespace

UpstreamPool::UpstreamPool(size_t instances, OutlierOptions outliers, BalancePolicy policy)
    : size_(std::max<size_t>(instances, 1)),
      outliers_(outliers),
      policy_(policy),
      instances_(std::make_unique<Instance[]>(size_)) {}

bool UpstreamPool::ejected(size_t instance, MonoNanos now) const {
  return instances_[instance].ejected_until.load(kRelaxed) > now;
}

size_t UpstreamPool::ejected_count(MonoNanos now) const {
  size_t n = 0;
  for (size_t i = 0; i < size_; ++i)
    n += ejected(i, now) ? 1 : 0;
  return n;
}

bool UpstreamPool::Choosable(size_t instance, MonoNanos now, size_t avoid, bool panic) const {
  return instance != avoid && (panic || !ejected(instance, now));
}

size_t UpstreamPool::Pick(std::mt19937_64& rng, MonoNanos now, size_t avoid) {
  if (size_ == 1) avoid = kNone;
  // Panic when nothing but `avoid` is left to choose from.
  bool panic = true;
  for (size_t i = 0; i < size_ && panic; ++i)
    panic = !Choosable(i, now, avoid, false);
  if (panic && size_ > 1 && avoid != kNone && !ejected(avoid, now)) {
    avoid = kNone;  // only `avoid` is healthy: it is the choice, not a panic
    panic = false;
  }
  size_t chosen = policy_ == BalancePolicy::kRoundRobin ? PickRoundRobin(now, avoid, panic)
                                                        : PickLeastRequest(rng, now, avoid, panic);
  instances_[chosen].outstanding.fetch_add(1, kRelaxed);
  return chosen;
}

// Two instances found from two random starting points (the first choosable one at or after
// each), the one with fewer outstanding tries chosen.
size_t UpstreamPool::PickLeastRequest(std::mt19937_64& rng, MonoNanos now, size_t avoid,
                                      bool panic) {
  auto from = [&](size_t start) {
    for (size_t k = 0; k < size_; ++k) {
      size_t i = (start + k) % size_;
      if (Choosable(i, now, avoid, panic)) return i;
    }
    return start;  // only when avoid is the one instance left and panic is off: cannot happen
  };
  size_t a = from(static_cast<size_t>(rng() % size_));
  size_t b = from(static_cast<size_t>(rng() % size_));
  return outstanding(b) < outstanding(a) ? b : a;
}

size_t UpstreamPool::PickRoundRobin(MonoNanos now, size_t avoid, bool panic) {
  size_t start = next_.fetch_add(1, kRelaxed);
  for (size_t k = 0; k < size_; ++k) {
    size_t i = (start + k) % size_;
    if (Choosable(i, now, avoid, panic)) return i;
  }
  return start % size_;
}

void UpstreamPool::Finished(size_t instance, TryOutcome outcome, MonoNanos now) {
  Instance& in = instances_[instance];
  in.outstanding.fetch_sub(1, kRelaxed);
  switch (outcome) {
    case TryOutcome::kAnswered:
      in.connect_failures.store(0, kRelaxed);
      in.resets.store(0, kRelaxed);
      in.server_errors.store(0, kRelaxed);
      return;
    case TryOutcome::kServerError:
      Count(in.server_errors, outliers_.server_errors, instance, now);
      return;
    case TryOutcome::kConnectFailure:
      Count(in.connect_failures, outliers_.connect_failures, instance, now);
      return;
    case TryOutcome::kReset:
      Count(in.resets, outliers_.resets, instance, now);
      return;
  }
}

void UpstreamPool::Count(std::atomic<uint32_t>& count, uint32_t threshold, size_t instance,
                         MonoNanos now) {
  uint32_t n = count.fetch_add(1, kRelaxed) + 1;
  if (threshold != 0 && n >= threshold && !ejected(instance, now)) Eject(instance, now);
}

void UpstreamPool::Eject(size_t instance, MonoNanos now) {
  size_t allowed = std::max<size_t>(1, size_ * outliers_.max_ejection_percent / 100);
  if (outliers_.max_ejection_percent == 0 || ejected_count(now) >= allowed) return;
  Instance& in = instances_[instance];
  uint32_t times = in.times_ejected.fetch_add(1, kRelaxed) + 1;
  Nanos for_how_long = std::min(outliers_.base_ejection_time * static_cast<Nanos>(times),
                                outliers_.max_ejection_time);
  in.ejected_until.store(now + for_how_long, kRelaxed);
  in.connect_failures.store(0, kRelaxed);
  in.resets.store(0, kRelaxed);
  in.server_errors.store(0, kRelaxed);
  ejections_.fetch_add(1, kRelaxed);
}

void UpstreamPool::AppendMetrics(stats::PrometheusText& out, std::span<const std::string> names,
                                 MonoNanos now) const {
  using Labels = std::initializer_list<stats::PrometheusLabelPair>;
  out.Family("hammer_dark_upstream_ejections_total", "counter",
             "Regular instances ejected for consecutive failures (connect failures, resets and "
             "timeouts, or 5xx).");
  out.Sample("hammer_dark_upstream_ejections_total", Labels{}, uint64_t{ejections()});
  out.Family("hammer_dark_upstream_ejected", "gauge", "Regular instances ejected now.");
  out.Sample("hammer_dark_upstream_ejected", Labels{}, uint64_t{ejected_count(now)});
  out.Family("hammer_dark_upstream_outstanding", "gauge",
             "User requests in flight on each regular instance.");
  for (size_t i = 0; i < size_ && i < names.size(); ++i) {
    out.Sample("hammer_dark_upstream_outstanding", Labels{{"instance", names[i]}},
               uint64_t{outstanding(i)});
  }
}

}  // namespace hammer::dark
