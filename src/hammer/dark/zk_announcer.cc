#include "hammer/dark/zk_announcer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "hammer/dark/membership.h"
#include "hammer/http/url.h"

namespace hammer::dark {
namespace {

std::string RandomToken() {
  std::random_device device;
  uint64_t value = (uint64_t{device()} << 32) ^ device();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

EphemeralMember::EphemeralMember(std::string members_path, std::string data)
    : members_path_(std::move(members_path)),
      data_(std::move(data)),
      prefix_("m-" + RandomToken() + "-") {}

std::string EphemeralMember::node_path() const {
  return node_name_.empty() ? std::string() : net::JoinZkPath(members_path_, node_name_);
}

Result<bool> EphemeralMember::Ensure(zhandle_t* zh, const std::vector<std::string>* children) {
  const int64_t session = zoo_client_id(zh)->client_id;
  std::vector<std::string> read;
  if (children == nullptr) {
    bool exists = false;
    if (Status s = net::ZkGetChildren(zh, members_path_, /*watch=*/true, &read, &exists); !s.ok()) {
      return s;
    }
    children = &read;
  }
  std::vector<std::string> mine;
  for (const std::string& child : *children) {
    if (child.starts_with(prefix_)) mine.push_back(child);
  }
  std::sort(mine.begin(), mine.end());
  // Keep the first znode of ours that this session owns; delete the rest (duplicates from a
  // create retried after a lost answer, or leftovers of an expired session).
  std::string keep;
  for (const std::string& name : mine) {
    const std::string path = net::JoinZkPath(members_path_, name);
    if (keep.empty()) {
      if (name == node_name_ && verified_session_ == session) {
        keep = name;
        continue;
      }
      Stat stat{};
      int rc = zoo_exists(zh, path.c_str(), 0, &stat);
      if (rc == ZNONODE) continue;
      if (rc != ZOK) return net::ZkStatus("exists", path, rc);
      if (stat.ephemeralOwner == session) {
        keep = name;
        continue;
      }
    }
    int rc = zoo_delete(zh, path.c_str(), -1);
    if (rc != ZOK && rc != ZNONODE) return net::ZkStatus("delete", path, rc);
  }
  if (!keep.empty()) {
    node_name_ = keep;
    verified_session_ = session;
    return false;
  }
  const std::string pattern = net::JoinZkPath(members_path_, prefix_);
  char created[1024];
  for (int attempt = 0;; ++attempt) {
    int rc = zoo_create(zh, pattern.c_str(), data_.data(), static_cast<int>(data_.size()),
                        &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL, created, sizeof created);
    if (rc == ZNONODE && attempt == 0) {
      if (Status s = net::ZkEnsurePath(zh, members_path_); !s.ok()) return s;
      continue;
    }
    if (rc != ZOK) {
      node_name_.clear();
      return net::ZkStatus("create", pattern, rc);
    }
    break;
  }
  std::string_view name(created);
  node_name_ = std::string(name.substr(name.rfind('/') + 1));
  verified_session_ = session;
  return true;
}

Status EphemeralMember::Remove(zhandle_t* zh) {
  if (node_name_.empty()) return Status::Ok();
  const std::string path = node_path();
  node_name_.clear();
  int rc = zoo_delete(zh, path.c_str(), -1);
  return rc == ZNONODE ? Status::Ok() : net::ZkStatus("delete", path, rc);
}

ZkAnnouncer::ZkAnnouncer(std::string members_path, std::string data)
    : member_(std::move(members_path), std::move(data)) {}

Result<std::unique_ptr<ZkAnnouncer>> ZkAnnouncer::Start(std::string_view zk_url,
                                                        std::string_view url,
                                                        const ZkAnnouncerOptions& options) {
  Result<net::ZkUrl> parsed = net::ParseZkUrl(zk_url);
  if (!parsed.ok()) return parsed.status();
  const std::string& path = parsed->path;
  const size_t last = path.rfind('/');
  if (last == std::string::npos || last + 1 == path.size() ||
      std::string_view(path).substr(0, last).ends_with("/clusters") == false) {
    return Status::Error("'" + std::string(zk_url) +
                         "': expected zk://HOST:PORT/PATH/clusters/<cluster name>");
  }
  if (Status s = CheckClusterName(zk_url, path.substr(last + 1)); !s.ok()) return s;
  Result<http::Url> instance = ParseMemberData(url);
  if (!instance.ok()) return instance.status();

  std::unique_ptr<ZkAnnouncer> announcer(
      new ZkAnnouncer(net::JoinZkPath(path, "members"), MemberData(*instance)));
  ZkAnnouncer* raw = announcer.get();
  Result<std::unique_ptr<net::ZkSession>> session = net::ZkSession::Start(
      parsed->hosts, options.session, [raw](zhandle_t* zh) { return raw->Refresh(zh); },
      [raw](bool connected) { raw->OnConnection(connected); });
  if (!session.ok()) return session.status();
  announcer->session_ = std::move(session).value();
  if (options.start_timeout > 0 && !announcer->WaitRegistered(options.start_timeout)) {
    net::ZkSessionStats stats = announcer->stats();
    return Status::Error("announce at " + std::string(zk_url) + ": not registered within " +
                         std::to_string(options.start_timeout / kMillisecond) + " ms" +
                         (stats.last_error.empty() ? "" : " (" + stats.last_error + ")"));
  }
  return announcer;
}

ZkAnnouncer::~ZkAnnouncer() {
  if (session_) session_->Stop();
}

std::string ZkAnnouncer::node_path() const {
  std::lock_guard lock(mu_);
  return registered_path_;
}

bool ZkAnnouncer::WaitRegistered(Nanos timeout) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, std::chrono::nanoseconds(timeout),
                           [&] { return !registered_path_.empty(); });
}

Status ZkAnnouncer::Refresh(zhandle_t* zh) {
  Result<bool> ensured = member_.Ensure(zh, nullptr);
  {
    std::lock_guard lock(mu_);
    registered_path_ = member_.node_path();
  }
  changed_.notify_all();
  return ensured.status();
}

void ZkAnnouncer::OnConnection(bool connected) {
  if (connected) return;  // the refresh that follows a connect re-registers if needed
  std::lock_guard lock(mu_);
  registered_path_.clear();
}

}  // namespace hammer::dark
