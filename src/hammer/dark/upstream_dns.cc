#include "hammer/dark/upstream_dns.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "hammer/net/resolver.h"

namespace hammer::dark {

UpstreamDns::UpstreamDns(UpstreamPool* pool, std::vector<Name> names, Nanos interval)
    : pool_(pool), names_(std::move(names)), interval_(interval) {}

UpstreamDns::~UpstreamDns() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> UpstreamDns::Start() {
  std::vector<std::string> errors;
  for (const Name& name : names_) {
    if (Status s = Resolve(name); !s.ok()) errors.push_back(name.url.Origin() + ": " + s.message());
  }
  thread_ = std::thread([this] { Run(); });
  return errors;
}

Status UpstreamDns::Resolve(const Name& name) {
  Result<net::AddressList> found = net::Resolver::LookupNow(name.url.host);
  if (!found.ok()) {
    CountShared(pool_->counters().dns_failures);
    return found.status();
  }
  // One instance per address, in a stable order whatever order the resolver gave.
  std::vector<std::string> seen;
  std::vector<UpstreamAddress> addresses;
  for (const net::SocketAddress& address : *found) {
    std::string ip = address.Ip();
    if (std::find(seen.begin(), seen.end(), ip) != seen.end()) continue;
    seen.push_back(ip);
    addresses.push_back(UpstreamAddress{name.url, address, name.weight});
  }
  std::sort(addresses.begin(), addresses.end(),
            [](const UpstreamAddress& a, const UpstreamAddress& b) { return a.Key() < b.Key(); });
  pool_->SetInstances(name.source, std::move(addresses));
  return Status::Ok();
}

void UpstreamDns::Run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::nanoseconds(interval_), [this] { return stop_; });
    if (stop_) return;
    lock.unlock();
    for (const Name& name : names_)
      (void)Resolve(name);  // a failure keeps the last addresses; it is counted
    lock.lock();
  }
}

}  // namespace hammer::dark
