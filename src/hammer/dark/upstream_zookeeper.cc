#include "hammer/dark/upstream_zookeeper.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "hammer/dark/membership.h"

namespace hammer::dark {

namespace {

// A member's data as an instance: its URL (ParseMemberData), and the weight its JSON may give.
std::optional<UpstreamAddress> InstanceOf(std::string_view data) {
  Result<http::Url> url = ParseMemberData(data);
  if (!url.ok()) return std::nullopt;
  UpstreamAddress address{*url, std::nullopt, 1};
  if (!data.empty() && data.front() == '{') {
    nlohmann::json root = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
    if (root.is_object() && root.contains("weight") && root["weight"].is_number_integer()) {
      address.weight =
          static_cast<uint32_t>(std::clamp<int64_t>(root["weight"].get<int64_t>(), 1, 100));
    }
  }
  return address;
}

}  // namespace

UpstreamZooKeeper::UpstreamZooKeeper(std::string members_path, size_t source, UpstreamPool* pool)
    : members_path_(std::move(members_path)), source_(source), pool_(pool) {}

UpstreamZooKeeper::~UpstreamZooKeeper() {
  if (session_) session_->Stop();  // before the members go: the session thread reads them
}

Result<std::unique_ptr<UpstreamZooKeeper>> UpstreamZooKeeper::Start(std::string_view zk_url,
                                                                    size_t source,
                                                                    UpstreamPool* pool,
                                                                    Nanos start_timeout) {
  Result<net::ZkUrl> url = net::ParseZkUrl(zk_url);
  if (!url.ok()) return url.status();
  std::unique_ptr<UpstreamZooKeeper> upstreams(
      new UpstreamZooKeeper(net::JoinZkPath(url->path, "members"), source, pool));
  UpstreamZooKeeper* self = upstreams.get();
  Result<std::unique_ptr<net::ZkSession>> session = net::ZkSession::Start(
      url->hosts, net::ZkSessionOptions{}, [self](zhandle_t* zh) { return self->Refresh(zh); },
      [](bool) {});
  if (!session.ok()) return session.status();
  upstreams->session_ = std::move(session).value();
  std::unique_lock lock(upstreams->mu_);
  if (!upstreams->read_.wait_for(lock, std::chrono::nanoseconds(start_timeout),
                                 [self] { return self->read_once_; })) {
    return Status::Error(std::string(zk_url) + ": no members read within " +
                         std::to_string(start_timeout / kMillisecond) + " ms" +
                         (self->last_error_.empty() ? "" : " (" + self->last_error_ + ")"));
  }
  return upstreams;
}

Status UpstreamZooKeeper::Refresh(zhandle_t* zh) {
  std::vector<std::string> children;
  bool exists = false;
  Status s = net::ZkGetChildren(zh, members_path_, /*watch=*/true, &children, &exists);
  std::map<std::string, std::optional<UpstreamAddress>> members;
  for (const std::string& child : children) {
    if (!s.ok()) break;
    const std::string path = net::JoinZkPath(members_path_, child);
    if (auto it = members_.find(path); it != members_.end()) {
      members.insert(*it);
      continue;
    }
    std::string data;
    bool member_exists = false;
    s = net::ZkGetData(zh, path, /*watch=*/false, &data, &member_exists);
    if (s.ok() && member_exists) members.emplace(path, InstanceOf(data));
  }
  if (!s.ok()) {
    CountShared(pool_->counters().zookeeper_failures);
    std::lock_guard lock(mu_);
    last_error_ = s.message();
    return s;  // the session retries; the instances read last stay in force
  }
  members_ = std::move(members);
  std::vector<UpstreamAddress> addresses;
  for (const auto& [path, address] : members_) {
    if (address) addresses.push_back(*address);
  }
  pool_->SetInstances(source_, std::move(addresses));
  {
    std::lock_guard lock(mu_);
    read_once_ = true;
  }
  read_.notify_all();
  return Status::Ok();
}

}  // namespace hammer::dark
