#include "hammer/dark/zk_membership.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "hammer/dark/zk_announcer.h"
#include "hammer/net/zk_session.h"

namespace hammer::dark {
namespace {

// Sequential znode names end in a 10-digit counter. Ordering by it is creation order, which
// keeps a dark cluster's url list (and so the proxy's round robin) stable as members come and
// go; ZooKeeper lists children in no particular order.
int64_t SequenceOf(std::string_view name) {
  if (name.size() < 10) return -1;
  int64_t value = 0;
  for (char c : name.substr(name.size() - 10)) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

void SortMembers(std::vector<std::string>& names) {
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    const int64_t sa = SequenceOf(a), sb = SequenceOf(b);
    return sa != sb ? sa < sb : a < b;
  });
}

}  // namespace

// Everything the session thread owns. Only the counters and the registered path are read by
// other threads, under mu_.
class ZkMembershipState {
 public:
  ZkMembershipState(std::string root, ZkMembershipOptions options, SnapshotHolder* holder)
      : root_(std::move(root)), options_(std::move(options)), holder_(holder) {
    if (!options_.register_url.empty()) {  // Start() validated it
      register_data_ = MemberData(*ParseMemberData(options_.register_url));
    }
  }

  // Any thread; the next refresh registers (or moves the registration) with this data.
  void SetRegisterData(std::string data) {
    std::lock_guard lock(mu_);
    register_data_ = std::move(data);
  }

  // ZkSession's refresh: one complete read, published if anything changed.
  Status Refresh(zhandle_t* zh) {
    Status s = Read(zh);
    if (!s.ok()) MarkStale();
    std::lock_guard lock(mu_);
    if (s.ok()) {
      ++reads_;
    } else {
      ++read_failures_;
      last_error_ = s.message();
    }
    return s;
  }

  void OnConnection(bool connected) {
    if (connected) return;  // the refresh that follows publishes fresh values
    MarkStale();
    std::lock_guard lock(mu_);
    registered_path_.clear();  // until a refresh confirms it in a connected session
  }

  ZkMembershipStats Counters() const {
    std::lock_guard lock(mu_);
    ZkMembershipStats stats;
    stats.reads = reads_;
    stats.read_failures = read_failures_;
    stats.config_errors = config_errors_;
    stats.registrations = registrations_;
    stats.last_error = last_error_;
    return stats;
  }

  std::string registered_path() const {
    std::lock_guard lock(mu_);
    return registered_path_;
  }

 private:
  Status Read(zhandle_t* zh);
  Status ReadConfig(zhandle_t* zh);
  Result<uint32_t> ReadRegular(zhandle_t* zh, const std::string& cluster);
  Status ReadDark(zhandle_t* zh, const std::string& cluster, std::vector<http::Url>* urls,
                  std::set<std::string>* seen);
  void Publish(MembershipSnapshot next);
  void MarkStale();
  std::string MembersPath(const std::string& cluster) const {
    return net::JoinZkPath(net::JoinZkPath(net::JoinZkPath(root_, "clusters"), cluster), "members");
  }

  const std::string root_;
  const ZkMembershipOptions options_;
  SnapshotHolder* const holder_;

  // Session thread only.
  MembershipConfig config_;  // the last valid config (empty until one is read)
  bool config_seen_ = false;
  std::string config_text_;  // the config znode's data as last read
  int64_t seeded_session_ = 0;
  std::optional<EphemeralMember> member_;
  std::map<std::string, std::optional<http::Url>> member_urls_;  // by znode path; nullopt: invalid

  mutable std::mutex mu_;
  uint64_t reads_ = 0;
  uint64_t read_failures_ = 0;
  uint64_t config_errors_ = 0;
  uint64_t registrations_ = 0;
  std::string last_error_;
  std::string registered_path_;
  std::string register_data_;  // this proxy's member data; empty: not registering
};

Status ZkMembershipState::ReadConfig(zhandle_t* zh) {
  const std::string path = net::JoinZkPath(root_, "config");
  const int64_t session = zoo_client_id(zh)->client_id;
  if (!options_.initial_config.empty() && seeded_session_ != session) {
    // Once per session: a new session may be talking to a ZooKeeper that lost its data.
    if (!root_.empty()) {
      if (Status s = net::ZkEnsurePath(zh, root_); !s.ok()) return s;
    }
    const std::string& data = options_.initial_config;
    int rc = zoo_create(zh, path.c_str(), data.data(), static_cast<int>(data.size()),
                        &ZOO_OPEN_ACL_UNSAFE, 0, nullptr, 0);
    if (rc != ZOK && rc != ZNODEEXISTS) return net::ZkStatus("create", path, rc);
    seeded_session_ = session;
  }
  std::string text;
  bool exists = false;
  if (Status s = net::ZkGetData(zh, path, /*watch=*/true, &text, &exists); !s.ok()) return s;
  if (!exists) {
    config_ = MembershipConfig{};
    config_seen_ = false;
    config_text_.clear();
    return Status::Ok();
  }
  if (config_seen_ && text == config_text_) return Status::Ok();
  config_seen_ = true;
  config_text_ = text;
  Result<MembershipConfig> parsed = ParseMembershipConfig(text);
  if (parsed.ok()) {
    config_ = std::move(parsed).value();
    return Status::Ok();
  }
  // Rejected: the last valid config stays in force. Not a read failure (nothing to retry).
  std::lock_guard lock(mu_);
  ++config_errors_;
  last_error_ = path + ": " + parsed.status().message();
  return Status::Ok();
}

Result<uint32_t> ZkMembershipState::ReadRegular(zhandle_t* zh, const std::string& cluster) {
  const std::string path = MembersPath(cluster);
  std::vector<std::string> children;
  bool exists = false;
  if (Status s = net::ZkGetChildren(zh, path, /*watch=*/true, &children, &exists); !s.ok())
    return s;
  std::string wanted;
  {
    std::lock_guard lock(mu_);
    wanted = register_data_;
  }
  if (member_ && member_->data() != wanted) {
    // Register() gave another address: leave under the old one, join under the new one.
    if (Status s = member_->Remove(zh); !s.ok()) return s;
    member_.reset();
  }
  if (!member_ && !wanted.empty()) member_.emplace("", wanted);  // members path set below
  if (member_) {
    if (member_->members_path() != path) {
      // First read, or the config renamed the regular cluster: move our member.
      if (Status s = member_->Remove(zh); !s.ok()) return s;
      member_->Retarget(path);
    }
    Result<bool> created = member_->Ensure(zh, &children);
    if (!created.ok()) return created.status();
    if (*created) {
      if (Status s = net::ZkGetChildren(zh, path, true, &children, &exists); !s.ok()) return s;
    }
    std::lock_guard lock(mu_);
    registrations_ += *created ? 1 : 0;
    registered_path_ = member_->node_path();
  }
  return static_cast<uint32_t>(children.size());
}

Status ZkMembershipState::ReadDark(zhandle_t* zh, const std::string& cluster,
                                   std::vector<http::Url>* urls, std::set<std::string>* seen) {
  const std::string path = MembersPath(cluster);
  std::vector<std::string> children;
  bool exists = false;
  if (Status s = net::ZkGetChildren(zh, path, /*watch=*/true, &children, &exists); !s.ok())
    return s;
  SortMembers(children);
  for (const std::string& child : children) {
    const std::string member = net::JoinZkPath(path, child);
    seen->insert(member);
    auto it = member_urls_.find(member);
    if (it == member_urls_.end()) {
      std::string data;
      bool member_exists = false;
      if (Status s = net::ZkGetData(zh, member, /*watch=*/false, &data, &member_exists); !s.ok()) {
        return s;
      }
      if (!member_exists) continue;  // gone since the listing; its watch event follows
      Result<http::Url> url = ParseMemberData(data);
      it = member_urls_.emplace(member, url.ok() ? std::optional(*url) : std::nullopt).first;
    }
    if (it->second) urls->push_back(*it->second);
  }
  return Status::Ok();
}

Status ZkMembershipState::Read(zhandle_t* zh) {
  if (Status s = ReadConfig(zh); !s.ok()) return s;
  MembershipConfig config = config_;
  if (config.regular.empty()) config.regular = options_.regular_cluster;

  uint32_t regular_instances = 0;
  if (!config.regular.empty()) {
    Result<uint32_t> count = ReadRegular(zh, config.regular);
    if (!count.ok()) return count.status();
    regular_instances = *count;
  }
  std::map<std::string, std::vector<http::Url>> dark_members;
  std::set<std::string> seen;
  for (const DarkClusterConfig& cluster : config.dark) {
    if (Status s = ReadDark(zh, cluster.name, &dark_members[cluster.name], &seen); !s.ok()) {
      return s;
    }
  }
  std::erase_if(member_urls_, [&](const auto& entry) { return !seen.contains(entry.first); });
  Publish(BuildSnapshot(config, regular_instances, dark_members));
  return Status::Ok();
}

void ZkMembershipState::Publish(MembershipSnapshot next) {
  std::shared_ptr<const MembershipSnapshot> current = holder_->Load();
  if (current->stale == next.stale && current->SameMembership(next)) return;
  std::shared_ptr<const MembershipSnapshot> published = holder_->Publish(std::move(next));
  if (options_.on_change) options_.on_change(published);
}

void ZkMembershipState::MarkStale() {
  MembershipSnapshot next = *holder_->Load();
  next.stale = true;
  next.last_update = 0;
  Publish(std::move(next));
}

ZkMembership::ZkMembership(std::string root, ZkMembershipOptions options)
    : Membership([&] {
        MembershipSnapshot initial;
        initial.regular_cluster = options.regular_cluster;
        return initial;  // stale, no clusters: no copies until ZooKeeper has been read
      }()) {
  state_ = std::make_unique<ZkMembershipState>(std::move(root), std::move(options), &holder_);
}

Result<std::unique_ptr<ZkMembership>> ZkMembership::Start(std::string_view zk_url,
                                                          ZkMembershipOptions options) {
  Result<net::ZkUrl> url = net::ParseZkUrl(zk_url);
  if (!url.ok()) return url.status();
  if (!options.regular_cluster.empty()) {
    if (Status s = CheckClusterName("regular cluster", options.regular_cluster); !s.ok()) return s;
  }
  if (!options.register_url.empty()) {
    if (Result<http::Url> parsed = ParseMemberData(options.register_url); !parsed.ok()) {
      return Status::Error("register url: " + parsed.status().message());
    }
  }
  if (!options.initial_config.empty()) {
    if (Result<MembershipConfig> parsed = ParseMembershipConfig(options.initial_config);
        !parsed.ok()) {
      return Status::Error("initial config: " + parsed.status().message());
    }
  }
  net::ZkSessionOptions session_options;
  session_options.session_timeout = options.session_timeout;
  session_options.retry_delay = options.retry_delay;
  session_options.log_path = options.zk_log_path;
  const Nanos start_timeout = options.start_timeout;

  std::unique_ptr<ZkMembership> membership(new ZkMembership(url->path, std::move(options)));
  ZkMembershipState* state = membership->state_.get();
  Result<std::unique_ptr<net::ZkSession>> session = net::ZkSession::Start(
      url->hosts, session_options, [state](zhandle_t* zh) { return state->Refresh(zh); },
      [state](bool connected) { state->OnConnection(connected); });
  if (!session.ok()) return session.status();
  membership->session_ = std::move(session).value();

  if (start_timeout > 0) {
    auto fresh = membership->holder_.WaitFor([](const MembershipSnapshot& s) { return !s.stale; },
                                             start_timeout);
    if (fresh->stale) {
      ZkMembershipStats stats = membership->stats();
      return Status::Error("membership " + std::string(zk_url) + ": nothing read within " +
                           std::to_string(start_timeout / kMillisecond) + " ms" +
                           (stats.last_error.empty() ? "" : " (" + stats.last_error + ")"));
    }
  }
  return membership;
}

ZkMembership::~ZkMembership() {
  if (session_) session_->Stop();  // before state_ goes: the session thread uses it
}

ZkMembershipStats ZkMembership::stats() const {
  ZkMembershipStats stats = state_->Counters();
  stats.stale = Current()->stale;
  if (session_) {
    net::ZkSessionStats session = session_->stats();
    stats.connected = session.connected;
    stats.sessions = session.sessions;
    stats.disconnects = session.disconnects;
    stats.session_expiries = session.expiries;
  }
  return stats;
}

Status ZkMembership::Register(std::string_view url) {
  Result<http::Url> parsed = ParseMemberData(url);
  if (!parsed.ok()) return Status::Error("register url: " + parsed.status().message());
  state_->SetRegisterData(MemberData(*parsed));
  session_->RequestRefresh();
  return Status::Ok();
}

std::string ZkMembership::registered_path() const {
  return state_->registered_path();
}

int64_t ZkMembership::session_id() const {
  return session_ ? session_->session_id() : 0;
}

}  // namespace hammer::dark
