// UpstreamPool: the regular upstream instances of `hammer dark` — a set that changes while the
// proxy runs — which one a try goes to, and which are left out for a while because they fail
// (passive outlier detection, as Envoy's outlier_detection and nginx's max_fails/fail_timeout
// do) or fail their active health checks (HealthChecker).
//
// The set: each source (one --upstream: a fixed URL, the addresses of a DNS name, the members
// of a ZooKeeper cluster) gives its instances with SetInstances; the pool merges the sources
// into a new UpstreamSet, immutable once published, and swaps it in atomically. Instances are
// kept by identity (UpstreamAddress::Key): one still listed keeps its UpstreamInstance, and so
// its tries in flight, failure counts, ejection and health; a new one starts healthy, or
// unchecked (not chosen) until its first health check when checks are on; one no longer
// listed is drained: marked removed, never chosen again, while the tries in flight on it
// finish (each holds its instance). Connections to the instances that stay are untouched.
//
// Choice (Pick): by default the less loaded of two instances drawn at random in proportion to
// their weights, "less loaded" being fewer outstanding tries per unit of weight (least
// outstanding requests over two random choices, Envoy's LEAST_REQUEST default), or weighted
// round robin (each instance's turns spread evenly over a cycle of the weights' sum). Only
// available instances are chosen (healthy and not ejected); when none is, all are chosen from
// (panic: a proxy that refuses everyone because every instance failed would be its own outage).
//
// Ejection (Finished): each instance counts its consecutive connect failures, resets (and
// timeouts) and 5xx answers apart; any other answer resets the three. An instance whose count
// reaches its threshold is ejected for base_ejection_time times the number of times it has
// been ejected (capped at max_ejection_time), unless max_ejection_percent of the set is
// ejected already (at least one may always be). It comes back when that time has passed, with
// its counts cleared.
//
// Threading: shared by every loop of the proxy. Pick, Finished and AppendMetrics may run
// concurrently on any threads (instance state is relaxed atomics; the counts are heuristics:
// two loops may both count the failure that ejects an instance). Each loop reads the set
// through its own Reader. SetInstances may be called from any thread (the discovery sources'
// own), serialised by a mutex that the request path never takes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/dark/dark_metrics.h"
#include "hammer/dark/upstream_instance.h"
#include "hammer/stats/prometheus_text.h"

namespace hammer::dark {

struct OutlierOptions {
  // Consecutive failures of each kind that eject an instance (0: that kind never ejects).
  uint32_t connect_failures = 3;            // --eject-connect-failures
  uint32_t resets = 5;                      // --eject-resets (resets and timeouts)
  uint32_t server_errors = 5;               // --eject-5xx
  Nanos base_ejection_time = 30 * kSecond;  // --ejection-time
  Nanos max_ejection_time = 300 * kSecond;
  uint32_t max_ejection_percent = 50;  // --max-ejection-percent
};

enum class BalancePolicy : uint8_t {
  kLeastRequest,  // --lb least-request (default)
  kRoundRobin,    // --lb round-robin
};

// How one try on an instance ended.
enum class TryOutcome : uint8_t { kAnswered, kServerError, kConnectFailure, kReset };

// The instances in force at one moment. Immutable once published.
struct UpstreamSet {
  std::vector<std::shared_ptr<UpstreamInstance>> instances;
  // weight_end[i]: the weights of instances 0..i summed (a weighted draw is a binary search).
  std::vector<uint64_t> weight_end;
  // Round robin's cycle: instance indexes, each as many times as its weight, spread evenly.
  std::vector<uint32_t> turns;

  size_t size() const { return instances.size(); }
  bool empty() const { return instances.empty(); }
  // Some instance other than `avoid` is available (healthy and not ejected).
  bool AnyAvailable(MonoNanos now, const UpstreamInstance* avoid = nullptr) const;
};

class UpstreamPool {
 public:
  // `sources`: how many sources will call SetInstances (numbered from 0). `health_checked`:
  // new instances start unchecked rather than healthy (a HealthChecker will judge them).
  UpstreamPool(size_t sources, OutlierOptions outliers, BalancePolicy policy,
               bool health_checked = false);

  // Replaces the instances `source` contributes (see the set, above). An instance listed by
  // two sources is one instance (the first listing's weight). Returns the set now in force.
  std::shared_ptr<const UpstreamSet> SetInstances(size_t source,
                                                  std::vector<UpstreamAddress> addresses);
  // Called after every change of the set, on the thread that made it (SetInstances's), under
  // the pool's mutex: it must only hand the news on (e.g. EventLoop::Post). Set before any
  // source starts.
  void OnChange(std::function<void()> callback) { on_change_ = std::move(callback); }

  std::shared_ptr<const UpstreamSet> Current() const {
    return current_.load(std::memory_order_acquire);
  }
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

  // A loop's view of the set: Get() costs one atomic load while nothing changed; the reference
  // stays valid until the next Get() on the same reader. One reader per thread.
  class Reader {
   public:
    explicit Reader(const UpstreamPool& pool) : pool_(&pool) {}
    const UpstreamSet& Get() {
      if (pool_->version() != seen_) {
        seen_ = pool_->version();
        set_ = pool_->Current();
      }
      return *set_;
    }
    uint64_t version() const { return seen_; }
    // The set the last Get() returned, shared.
    const std::shared_ptr<const UpstreamSet>& shared() const { return set_; }

   private:
    const UpstreamPool* pool_;
    std::shared_ptr<const UpstreamSet> set_;
    uint64_t seen_ = ~uint64_t{0};
  };

  // The instance of `set` for the next try, other than `avoid` when another may be chosen;
  // null when the set is empty. Counts the try as outstanding on it until Finished.
  std::shared_ptr<UpstreamInstance> Pick(const UpstreamSet& set, std::mt19937_64& rng,
                                         MonoNanos now, const UpstreamInstance* avoid = nullptr);
  // The try on `instance` that Pick counted has ended as `outcome`.
  void Finished(UpstreamInstance& instance, TryOutcome outcome, MonoNanos now);

  size_t ejected_count(MonoNanos now) const;
  UpstreamCounters& counters() { return counters_; }
  const UpstreamCounters& counters() const { return counters_; }
  bool health_checked() const { return health_checked_; }

  // Appends the UpstreamCounters table and the set's gauges: hammer_dark_upstream_instances,
  // _ejected, _draining (removed, tries still in flight), and per instance (label instance:
  // UpstreamInstance::name) _outstanding, _healthy and _weight.
  void AppendMetrics(stats::PrometheusText& out, MonoNanos now) const;

 private:
  bool Choosable(const UpstreamInstance& instance, MonoNanos now, const UpstreamInstance* avoid,
                 bool panic) const;
  size_t PickLeastRequest(const UpstreamSet& set, std::mt19937_64& rng, MonoNanos now,
                          const UpstreamInstance* avoid, bool panic) const;
  size_t PickRoundRobin(const UpstreamSet& set, MonoNanos now, const UpstreamInstance* avoid,
                        bool panic);
  void Count(UpstreamInstance& instance, std::atomic<uint32_t>& count, uint32_t threshold,
             MonoNanos now);
  void Eject(UpstreamInstance& instance, MonoNanos now);
  std::shared_ptr<const UpstreamSet> Rebuild();  // under mu_

  const OutlierOptions outliers_;
  const BalancePolicy policy_;
  const bool health_checked_;
  std::atomic<std::shared_ptr<const UpstreamSet>> current_;
  std::atomic<uint64_t> version_{0};
  std::atomic<size_t> next_turn_{0};
  UpstreamCounters counters_;

  mutable std::mutex mu_;  // SetInstances, and the draining list for AppendMetrics
  std::vector<std::vector<UpstreamAddress>> sources_;
  // Removed instances, kept (weakly) until their last try ends, for the draining gauge.
  mutable std::vector<std::weak_ptr<UpstreamInstance>> draining_;
  std::function<void()> on_change_;
};

}  // namespace hammer::dark
