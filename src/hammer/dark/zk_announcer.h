// Announcing an instance as an ephemeral member of a cluster in ZooKeeper
// (docs/dark-znodes.md):
//
//   <cluster path>/members/m-<token>-<sequence>     ephemeral-sequential, data {"url": "..."}
//
// `token` is 16 random hex digits chosen once per announcer. It lets the owner find its own
// znode again after a create whose answer was lost with the connection (the create may or may
// not have happened: ZooKeeper's "protected" create), and after a session expiry (the old znode
// is gone, or about to be: its owner is checked).
//
// EphemeralMember is the bookkeeping, driven from a ZkSession's refresh (session thread only).
// ZkAnnouncer is `hammer serve --announce zk://HOST:PORT/PATH/clusters/<name>`: a session of
// its own that keeps one member registered until it is destroyed.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/net/zk_session.h"

namespace hammer::dark {

class EphemeralMember {
 public:
  EphemeralMember(std::string members_path, std::string data);

  // Makes sure the current session owns exactly one member znode of ours under
  // members_path(), creating members_path() if needed. `children` is the current child list of
  // members_path() when the caller has it (nullptr: read here, arming a child watch so that a
  // deleted member is noticed). Returns whether a znode was created.
  Result<bool> Ensure(zhandle_t* zh, const std::vector<std::string>* children);
  // Deletes our member znode if any (e.g. before moving to another cluster).
  Status Remove(zhandle_t* zh);
  // Points the member at another cluster; the next Ensure() registers there.
  void Retarget(std::string members_path) { members_path_ = std::move(members_path); }

  const std::string& members_path() const { return members_path_; }
  // Our znode's full path, "" when none is known.
  std::string node_path() const;
  // "m-<token>-": the prefix of our znode's name.
  const std::string& prefix() const { return prefix_; }
  const std::string& data() const { return data_; }

 private:
  std::string members_path_;
  const std::string data_;
  const std::string prefix_;
  std::string node_name_;         // without the path; "" when none is known
  int64_t verified_session_ = 0;  // the session that node_name_ was seen to belong to
};

struct ZkAnnouncerOptions {
  net::ZkSessionOptions session;
  Nanos start_timeout = 0;  // > 0: Start waits this long for the registration and fails if not
};

class ZkAnnouncer {
 public:
  // `zk_url`: zk://HOSTS/PATH/clusters/<name>; `url`: this instance's http://host:port, which
  // the member's data carries. Returns once the session is started (see start_timeout); the
  // registration happens, and is kept across reconnects and session expiry, on the session
  // thread.
  static Result<std::unique_ptr<ZkAnnouncer>> Start(std::string_view zk_url, std::string_view url,
                                                    const ZkAnnouncerOptions& options = {});
  // Closes the session: ZooKeeper deletes the member at once (when unreachable, after the
  // session timeout).
  ~ZkAnnouncer();

  // Our member znode's path, "" while not registered. Any thread.
  std::string node_path() const;
  // Waits until registered in the current session; false on timeout. Not for event loops.
  bool WaitRegistered(Nanos timeout) const;
  net::ZkSessionStats stats() const { return session_->stats(); }

 private:
  explicit ZkAnnouncer(std::string members_path, std::string data);
  Status Refresh(zhandle_t* zh);
  void OnConnection(bool connected);

  EphemeralMember member_;  // session thread only
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::string registered_path_;              // guarded by mu_
  std::unique_ptr<net::ZkSession> session_;  // last: stopped first
};

}  // namespace hammer::dark
