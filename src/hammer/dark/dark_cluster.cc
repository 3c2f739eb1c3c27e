#include "hammer/dark/dark_cluster.h"

#include <algorithm>
#include <utility>

namespace hammer::dark {

namespace {
constexpr uint32_t kRefusalsToBackOff = 3;
constexpr Nanos kFirstBackOff = 100 * kMillisecond;
constexpr Nanos kMaxBackOff = 5 * kSecond;
}  // namespace

DarkCluster::DarkCluster(std::string name, size_t index, net::EventLoop* loop,
                         net::Resolver* resolver, const http::ClientOptions& client_options)
    : name_(std::move(name)), index_(index), loop_(loop), dark_header_("X-Hammer-Dark: " + name_) {
  client_ = std::make_unique<http::HttpClient>(loop, resolver, client_options);
}

void DarkCluster::Apply(const DarkClusterMembership& membership, uint32_t regular_instances,
                        bool bernoulli, std::mt19937_64& seeds, const SendStoredFn& send) {
  const DarkClusterConfig& config = membership.config;
  shape_ =
      ClusterShape{config.multiplier, regular_instances, membership.instances, config.target_rate};
  urls_ = membership.urls;
  strategy_ = config.strategy == "identical"      ? ForkStrategyKind::kIdentical
              : config.strategy == "constant-qps" ? ForkStrategyKind::kConstantQps
                                                  : ForkStrategyKind::kRelative;
  bernoulli = bernoulli || config.sampling == "bernoulli";
  if (!relative_ || bernoulli_ != bernoulli) {
    relative_.emplace(seeds(), bernoulli ? RelativeStrategy::Mode::kBernoulli
                                         : RelativeStrategy::Mode::kAccumulator);
    bernoulli_ = bernoulli;
  }
  if (strategy_ != ForkStrategyKind::kConstantQps) {
    constant_qps_.reset();  // stops its schedule (rest.li #1132: no orphan limiter)
    return;
  }
  if (!constant_qps_) {
    ConstantQpsOptions qps;
    qps.buffer_capacity = config.buffer_capacity;
    qps.buffer_ttl = config.buffer_ttl;
    auto dispatcher = ConstantQpsFeeder::Dispatcher::Create(qps, seeds());
    if (dispatcher.ok()) {
      constant_qps_ = std::make_unique<ConstantQpsFeeder>(
          loop_, std::move(*dispatcher),
          [this, send](const StoredRequest& request) { send(*this, request); });
    }
  }
  if (constant_qps_) constant_qps_->SetShape(shape_);
}

uint32_t DarkCluster::CopiesFor(const IdenticalSelector& identical) {
  switch (strategy_) {
    case ForkStrategyKind::kRelative:
      return relative_->CopiesFor(shape_);
    case ForkStrategyKind::kIdentical:
      return identical.CopiesFor(shape_);
    case ForkStrategyKind::kConstantQps:
      return 0;  // never sent from the request path
  }
  return 0;
}

void DarkCluster::OfferForSchedule(const http::IncomingRequest& request) {
  if (constant_qps_) constant_qps_->Offer(request);
}

CopyAdmission DarkCluster::Admit(uint32_t max_in_flight, MonoNanos now) const {
  if (urls_.empty()) return CopyAdmission::kNoInstances;
  if (in_flight_ >= max_in_flight) return CopyAdmission::kBudgetFull;
  if (back_off_until_ != 0 && now < back_off_until_) return CopyAdmission::kBackingOff;
  return CopyAdmission::kSend;
}

void DarkCluster::CopyEnded(std::optional<Failure> transport_failure) {
  --in_flight_;
  if (transport_failure == Failure::kConnect) {
    if (++refusals_in_row_ >= kRefusalsToBackOff) {
      back_off_ = std::min(kMaxBackOff, std::max(kFirstBackOff, 2 * back_off_));
      back_off_until_ = MonoNow() + back_off_;
    }
  } else if (!transport_failure) {
    refusals_in_row_ = 0;
    back_off_ = 0;
  }
}

}  // namespace hammer::dark
