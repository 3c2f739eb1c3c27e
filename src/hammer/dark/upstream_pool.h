// UpstreamPool: the regular upstream instances of `hammer dark`, which one a request goes to,
// and which are left out for a while because they fail (passive outlier detection, as Envoy's
// outlier_detection and nginx's max_fails/fail_timeout do).
//
// Choice (Pick): by default the less loaded of two instances drawn at random (least outstanding
// requests over two random choices, Envoy's LEAST_REQUEST default), or round robin. Ejected
// instances are not chosen; when every instance is ejected, all are chosen from (panic: a
// proxy that refuses everyone because every instance failed once would be its own outage).
//
// Ejection (Finished): each instance counts its consecutive connect failures, resets (and
// timeouts) and 5xx answers apart; any other answer resets the three. An instance whose count
// reaches its threshold is ejected for base_ejection_time times the number of times it has
// been ejected (capped at max_ejection_time), unless max_ejection_percent of the instances are
// ejected already (at least one may always be). It comes back when that time has passed, with
// its counts cleared.
//
// Threading: shared by every loop of the proxy; every member is a relaxed atomic, so Pick and
// Finished may run concurrently on any threads (the counts are heuristics: two loops may both
// count the failure that ejects an instance).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>

#include "hammer/base/clock.h"
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

class UpstreamPool {
 public:
  static constexpr size_t kNone = SIZE_MAX;

  UpstreamPool(size_t instances, OutlierOptions outliers, BalancePolicy policy);

  size_t size() const { return size_; }
  // The instance for the next try, other than `avoid` when another may be chosen. Counts the
  // try as outstanding on it until Finished.
  size_t Pick(std::mt19937_64& rng, MonoNanos now, size_t avoid = kNone);
  // The try on `instance` that Pick counted has ended as `outcome`.
  void Finished(size_t instance, TryOutcome outcome, MonoNanos now);

  bool ejected(size_t instance, MonoNanos now) const;
  size_t ejected_count(MonoNanos now) const;
  uint64_t ejections() const { return ejections_.load(std::memory_order_relaxed); }
  // Appends hammer_dark_upstream_ejections_total, hammer_dark_upstream_ejected and
  // hammer_dark_upstream_outstanding{instance} (instance: the upstream's URL, `names[i]`).
  void AppendMetrics(stats::PrometheusText& out, std::span<const std::string> names,
                     MonoNanos now) const;
  uint32_t outstanding(size_t instance) const {
    return instances_[instance].outstanding.load(std::memory_order_relaxed);
  }

 private:
  struct Instance {
    std::atomic<uint32_t> outstanding{0};
    std::atomic<uint32_t> connect_failures{0};
    std::atomic<uint32_t> resets{0};
    std::atomic<uint32_t> server_errors{0};
    std::atomic<uint32_t> times_ejected{0};
    std::atomic<MonoNanos> ejected_until{0};
  };
  bool Choosable(size_t instance, MonoNanos now, size_t avoid, bool panic) const;
  size_t PickLeastRequest(std::mt19937_64& rng, MonoNanos now, size_t avoid, bool panic);
  size_t PickRoundRobin(MonoNanos now, size_t avoid, bool panic);
  void Count(std::atomic<uint32_t>& count, uint32_t threshold, size_t instance, MonoNanos now);
  void Eject(size_t instance, MonoNanos now);

  size_t size_;
  OutlierOptions outliers_;
  BalancePolicy policy_;
  std::unique_ptr<Instance[]> instances_;
  std::atomic<size_t> next_{0};
  std::atomic<uint64_t> ejections_{0};
};

}  // namespace hammer::dark
