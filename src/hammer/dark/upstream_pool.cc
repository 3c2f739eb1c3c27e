#include "hammer/dark/upstream_pool.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "hammer/stats/counter_exposition.h"

namespace hammer::dark {

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

// Round robin's cycle: instance i takes the turns at (k + 1/2) / weight_i of the cycle for k
// below its weight, so an instance of weight 3 beside two of weight 1 gets every other turn
// rather than three in a row.
std::vector<uint32_t> SpreadTurns(const std::vector<std::shared_ptr<UpstreamInstance>>& set) {
  std::vector<std::tuple<double, uint32_t>> at;
  for (uint32_t i = 0; i < set.size(); ++i) {
    const uint32_t weight = set[i]->weight();
    for (uint32_t k = 0; k < weight; ++k)
      at.emplace_back((k + 0.5) / weight, i);
  }
  std::sort(at.begin(), at.end());
  std::vector<uint32_t> turns;
  turns.reserve(at.size());
  for (const auto& [position, instance] : at)
    turns.push_back(instance);
  return turns;
}

}  // namespace

bool UpstreamSet::AnyAvailable(MonoNanos now, const UpstreamInstance* avoid) const {
  for (const auto& instance : instances) {
    if (instance.get() != avoid && instance->available(now)) return true;
  }
  return false;
}

UpstreamPool::UpstreamPool(size_t sources, OutlierOptions outliers, BalancePolicy policy,
                           bool health_checked)
    : outliers_(outliers),
      policy_(policy),
      health_checked_(health_checked),
      current_(std::make_shared<const UpstreamSet>()),
      sources_(sources) {}

std::shared_ptr<const UpstreamSet> UpstreamPool::SetInstances(
    size_t source, std::vector<UpstreamAddress> addresses) {
  std::lock_guard lock(mu_);
  if (source >= sources_.size()) sources_.resize(source + 1);
  sources_[source] = std::move(addresses);
  return Rebuild();
}

std::shared_ptr<const UpstreamSet> UpstreamPool::Rebuild() {
  std::shared_ptr<const UpstreamSet> old = Current();
  std::unordered_map<std::string, std::shared_ptr<UpstreamInstance>> kept;
  for (const auto& instance : old->instances)
    kept.emplace(instance->where().Key(), instance);
  auto next = std::make_shared<UpstreamSet>();
  std::unordered_set<std::string> listed;
  bool changed = false;
  for (const std::vector<UpstreamAddress>& source : sources_) {
    for (const UpstreamAddress& address : source) {
      std::string key = address.Key();
      if (!listed.insert(key).second) continue;
      auto it = kept.find(key);
      if (it != kept.end() && it->second->weight() == std::max<uint32_t>(address.weight, 1)) {
        next->instances.push_back(it->second);
        kept.erase(it);
        continue;
      }
      // New, or its weight changed (a new instance; the old one is drained).
      UpstreamAddress where = address;
      where.weight = std::max<uint32_t>(where.weight, 1);
      next->instances.push_back(std::make_shared<UpstreamInstance>(
          std::move(where), health_checked_ ? Health::kUnchecked : Health::kHealthy));
      CountShared(counters_.added);
      changed = true;
    }
  }
  for (auto& [key, gone] : kept) {
    gone->removed_.store(true, kRelaxed);
    draining_.push_back(gone);
    CountShared(counters_.removed);
    changed = true;
  }
  std::erase_if(draining_, [](const auto& weak) { return weak.expired(); });
  if (!changed) return old;
  uint64_t total = 0;
  for (const auto& instance : next->instances) {
    total += instance->weight();
    next->weight_end.push_back(total);
  }
  next->turns = SpreadTurns(next->instances);
  std::shared_ptr<const UpstreamSet> published = std::move(next);
  current_.store(published, std::memory_order_release);
  version_.fetch_add(1, std::memory_order_acq_rel);
  if (on_change_) on_change_();
  return published;
}

bool UpstreamPool::Choosable(const UpstreamInstance& instance, MonoNanos now,
                             const UpstreamInstance* avoid, bool panic) const {
  return &instance != avoid && (panic || instance.available(now));
}

std::shared_ptr<UpstreamInstance> UpstreamPool::Pick(const UpstreamSet& set, std::mt19937_64& rng,
                                                     MonoNanos now, const UpstreamInstance* avoid) {
  if (set.empty()) return nullptr;
  if (set.size() == 1) avoid = nullptr;
  // Panic when nothing but `avoid` is left to choose from.
  bool panic = !set.AnyAvailable(now, avoid);
  if (panic && avoid != nullptr && avoid->available(now)) {
    avoid = nullptr;  // only `avoid` is available: it is the choice, not a panic
    panic = false;
  }
  size_t chosen = policy_ == BalancePolicy::kRoundRobin
                      ? PickRoundRobin(set, now, avoid, panic)
                      : PickLeastRequest(set, rng, now, avoid, panic);
  const std::shared_ptr<UpstreamInstance>& instance = set.instances[chosen];
  instance->outstanding_.fetch_add(1, kRelaxed);
  return instance;
}

// Two instances drawn in proportion to their weights, the one with fewer outstanding tries per
// unit of weight chosen. A draw that lands on an instance that may not be chosen is drawn
// again (a few times: then the first choosable one after it is taken), so the ones left out
// do not hand their share to their neighbours.
size_t UpstreamPool::PickLeastRequest(const UpstreamSet& set, std::mt19937_64& rng, MonoNanos now,
                                      const UpstreamInstance* avoid, bool panic) const {
  const size_t n = set.size();
  auto draw = [&] {
    size_t at = 0;
    for (int attempt = 0; attempt < 4; ++attempt) {
      const uint64_t point = rng() % set.weight_end.back();
      at = static_cast<size_t>(
          std::upper_bound(set.weight_end.begin(), set.weight_end.end(), point) -
          set.weight_end.begin());
      if (Choosable(*set.instances[at], now, avoid, panic)) return at;
    }
    for (size_t k = 1; k < n; ++k) {
      size_t i = (at + k) % n;
      if (Choosable(*set.instances[i], now, avoid, panic)) return i;
    }
    return at;  // only when avoid is the one instance left and panic is off: cannot happen
  };
  const size_t a = draw();
  const size_t b = draw();
  const UpstreamInstance& x = *set.instances[a];
  const UpstreamInstance& y = *set.instances[b];
  return uint64_t{y.outstanding()} * x.weight() < uint64_t{x.outstanding()} * y.weight() ? b : a;
}

// The next turn of the cycle whose instance may be chosen; the turns of the others are taken
// and skipped, so the instances left in share the cycle as their weights say.
size_t UpstreamPool::PickRoundRobin(const UpstreamSet& set, MonoNanos now,
                                    const UpstreamInstance* avoid, bool panic) {
  const size_t cycle = set.turns.size();
  size_t turn = 0;
  for (size_t k = 0; k < cycle; ++k) {
    turn = set.turns[next_turn_.fetch_add(1, kRelaxed) % cycle];
    if (Choosable(*set.instances[turn], now, avoid, panic)) return turn;
  }
  return turn;  // only when avoid is the one instance left and panic is off: cannot happen
}

void UpstreamPool::Finished(UpstreamInstance& instance, TryOutcome outcome, MonoNanos now) {
  instance.outstanding_.fetch_sub(1, kRelaxed);
  switch (outcome) {
    case TryOutcome::kAnswered:
      instance.connect_failures_.store(0, kRelaxed);
      instance.resets_.store(0, kRelaxed);
      instance.server_errors_.store(0, kRelaxed);
      return;
    case TryOutcome::kServerError:
      Count(instance, instance.server_errors_, outliers_.server_errors, now);
      return;
    case TryOutcome::kConnectFailure:
      Count(instance, instance.connect_failures_, outliers_.connect_failures, now);
      return;
    case TryOutcome::kReset:
      Count(instance, instance.resets_, outliers_.resets, now);
      return;
  }
}

void UpstreamPool::Count(UpstreamInstance& instance, std::atomic<uint32_t>& count,
                         uint32_t threshold, MonoNanos now) {
  uint32_t n = count.fetch_add(1, kRelaxed) + 1;
  if (threshold != 0 && n >= threshold && !instance.ejected(now) && !instance.removed()) {
    Eject(instance, now);
  }
}

void UpstreamPool::Eject(UpstreamInstance& instance, MonoNanos now) {
  std::shared_ptr<const UpstreamSet> set = Current();
  size_t ejected = 0;
  for (const auto& other : set->instances)
    ejected += other->ejected(now) ? 1 : 0;
  size_t allowed = std::max<size_t>(1, set->size() * outliers_.max_ejection_percent / 100);
  if (outliers_.max_ejection_percent == 0 || ejected >= allowed) return;
  uint32_t times = instance.times_ejected_.fetch_add(1, kRelaxed) + 1;
  Nanos for_how_long = std::min(outliers_.base_ejection_time * static_cast<Nanos>(times),
                                outliers_.max_ejection_time);
  instance.ejected_until_.store(now + for_how_long, kRelaxed);
  instance.connect_failures_.store(0, kRelaxed);
  instance.resets_.store(0, kRelaxed);
  instance.server_errors_.store(0, kRelaxed);
  CountShared(counters_.ejections);
}

size_t UpstreamPool::ejected_count(MonoNanos now) const {
  std::shared_ptr<const UpstreamSet> set = Current();
  size_t n = 0;
  for (const auto& instance : set->instances)
    n += instance->ejected(now) ? 1 : 0;
  return n;
}

void UpstreamPool::AppendMetrics(stats::PrometheusText& out, MonoNanos now) const {
  using Labels = std::initializer_list<stats::PrometheusLabelPair>;
  stats::AppendCounterFamilies(out, UpstreamCounters::kCounterSpecs, counters_.CounterValues());
  std::shared_ptr<const UpstreamSet> set = Current();
  size_t draining = 0;
  {
    std::lock_guard lock(mu_);
    std::erase_if(draining_, [](const auto& weak) { return weak.expired(); });
    for (const auto& weak : draining_) {
      std::shared_ptr<UpstreamInstance> instance = weak.lock();
      draining += instance != nullptr && instance->outstanding() > 0 ? 1 : 0;
    }
  }
  out.Family("hammer_dark_upstream_instances", "gauge",
             "Regular instances in the set now (each address of a DNS name, each ZooKeeper "
             "member, each fixed URL).");
  out.Sample("hammer_dark_upstream_instances", Labels{}, uint64_t{set->size()});
  out.Family("hammer_dark_upstream_ejected", "gauge", "Regular instances ejected now.");
  out.Sample("hammer_dark_upstream_ejected", Labels{}, uint64_t{ejected_count(now)});
  out.Family("hammer_dark_upstream_draining", "gauge",
             "Regular instances removed from the set whose tries in flight have not all ended.");
  out.Sample("hammer_dark_upstream_draining", Labels{}, uint64_t{draining});
  out.Family("hammer_dark_upstream_outstanding", "gauge",
             "User requests in flight on each regular instance.");
  for (const auto& instance : set->instances) {
    out.Sample("hammer_dark_upstream_outstanding", Labels{{"instance", instance->name()}},
               uint64_t{instance->outstanding()});
  }
  out.Family("hammer_dark_upstream_healthy", "gauge",
             "1 while a regular instance passes its health checks (always, without "
             "--health-check); 0 while it fails them or has not been checked yet.");
  for (const auto& instance : set->instances) {
    out.Sample("hammer_dark_upstream_healthy", Labels{{"instance", instance->name()}},
               uint64_t{instance->health() == Health::kHealthy ? 1u : 0u});
  }
  out.Family("hammer_dark_upstream_weight", "gauge",
             "Each regular instance's weight (--upstream-weight).");
  for (const auto& instance : set->instances) {
    out.Sample("hammer_dark_upstream_weight", Labels{{"instance", instance->name()}},
               uint64_t{instance->weight()});
  }
}

}  // namespace hammer::dark
