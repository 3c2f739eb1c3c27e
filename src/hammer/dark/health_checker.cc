#include "hammer/dark/health_checker.h"

#include <utility>
#include <vector>

namespace hammer::dark {

// One instance's checks: the request, the one in flight, and the passes and failures in a row.
class HealthChecker::Check final : public http::ResponseHandler, public net::Deletable {
 public:
  Check(HealthChecker* checker, std::shared_ptr<UpstreamInstance> instance, std::string path)
      : checker_(checker), instance_(std::move(instance)) {
    head_ = "GET " + path + " HTTP/1.1\r\nHost: " + instance_->url().HostHeader() +
            "\r\nUser-Agent: hammer-dark-health-check\r\nAccept: */*\r\n\r\n";
  }

  UpstreamInstance& instance() { return *instance_; }
  const std::string& head() const { return head_; }
  bool in_flight = false;
  bool forgotten = false;  // the instance left the set: destroyed once its check ends
  uint32_t passes = 0;
  uint32_t failures = 0;

  void OnResponseHead(const http::ResponseHead& head) override { status_ = head.status; }
  void OnResponseComplete(const http::ExchangeResult& result) override {
    in_flight = false;
    const HealthCheckOptions& options = checker_->options_;
    const bool passed =
        !result.failure && status_ >= options.status_min && status_ <= options.status_max;
    status_ = 0;
    checker_->Judge(*this, passed);  // may hand this Check to DeleteLater: last
  }

 private:
  HealthChecker* checker_;
  std::shared_ptr<UpstreamInstance> instance_;
  std::string head_;
  int status_ = 0;
};

HealthChecker::HealthChecker(net::EventLoop* loop, net::Resolver* resolver, UpstreamPool* pool,
                             HealthCheckOptions options, http::ClientOptions client)
    : loop_(loop),
      pool_(pool),
      options_(std::move(options)),
      client_(std::make_unique<http::HttpClient>(loop, resolver, std::move(client))),
      timer_(loop, [this] { Round(); }) {}

HealthChecker::~HealthChecker() {
  *alive_ = false;
  client_->CancelAll();  // no check calls back into a destroyed checker
}

void HealthChecker::Start() {
  Round();
}

void HealthChecker::Notify() {
  loop_->Post([this, alive = std::weak_ptr<bool>(alive_)] {
    if (!alive.expired()) Sync();
  });
}

void HealthChecker::Round() {
  Sync();
  for (auto& [instance, check] : checks_) {
    if (!check->in_flight && !check->forgotten) Send(*check);
  }
  timer_.ArmAfter(options_.interval);
}

void HealthChecker::Sync() {
  std::shared_ptr<const UpstreamSet> set = pool_->Current();
  for (const auto& instance : set->instances) {
    auto [it, added] = checks_.try_emplace(instance.get());
    if (!added) continue;
    it->second = std::make_unique<Check>(this, instance, options_.path);
    Send(*it->second);
  }
  std::vector<const UpstreamInstance*> gone;
  for (auto& [instance, check] : checks_) {
    if (!instance->removed()) continue;
    check->forgotten = true;
    if (!check->in_flight) gone.push_back(instance);
  }
  for (const UpstreamInstance* instance : gone)
    Forget(instance);
}

void HealthChecker::Forget(const UpstreamInstance* instance) {
  auto it = checks_.find(instance);
  loop_->DeleteLater(std::move(it->second));  // it may be in its own callback
  checks_.erase(it);
}

void HealthChecker::Send(Check& check) {
  UpstreamInstance& instance = check.instance();
  http::ClientRequest request;
  request.origin = client_->GetOrigin(instance.url(), instance.address());
  request.head = check.head();
  request.deadline = loop_->now() + options_.timeout;
  check.in_flight = true;
  client_->Send(request, &check);
}

void HealthChecker::Judge(Check& check, bool passed) {
  UpstreamCounters& counters = pool_->counters();
  CountShared(passed ? counters.checks_passed : counters.checks_failed);
  UpstreamInstance& instance = check.instance();
  if (check.forgotten) {
    Forget(&instance);
    return;
  }
  const Health health = instance.health();
  if (passed) {
    check.failures = 0;
    ++check.passes;
    if (health == Health::kUnchecked ||
        (health == Health::kUnhealthy && check.passes >= options_.healthy_threshold)) {
      instance.set_health(Health::kHealthy);
      CountShared(counters.became_healthy);
    }
  } else {
    check.passes = 0;
    ++check.failures;
    if (health == Health::kUnchecked ||
        (health == Health::kHealthy && check.failures >= options_.unhealthy_threshold)) {
      instance.set_health(Health::kUnhealthy);
      CountShared(counters.became_unhealthy);
    }
  }
}

}  // namespace hammer::dark
