// UpstreamZooKeeper: the regular instances of `--upstream zk://HOSTS/PATH/clusters/NAME`: the
// members of that cluster in ZooKeeper, announced as dark instances are (docs/dark-znodes.md;
// `hammer serve --announce zk://HOSTS/PATH/clusters/NAME` writes one):
//
//   PATH/clusters/NAME/members/m-<token>-<sequence>   ephemeral-sequential
//                                                     {"url": "http://host:port", "weight": N}
//
// Each member whose data is a URL (ParseMemberData) is an instance, its optional "weight"
// (1-100, default 1) its weight. A watch on the members list keeps the pool current: a member
// that appears is added at once, one that goes (its process stopped, or its session expired)
// is drained (UpstreamPool::SetInstances). A member's host is resolved when a connection opens
// (one member, one instance). While ZooKeeper is unreachable the members read last stay in
// force (each failed read counted as the pool's zookeeper_failures); the session reconnects by
// itself.
//
// Threading: Start() and the destructor on one thread; the reads run on the session's thread.
// The pool must outlive the object.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/dark/upstream_pool.h"
#include "hammer/net/zk_session.h"

namespace hammer::dark {

class UpstreamZooKeeper {
 public:
  // Starts a session and waits up to `start_timeout` for the first complete read of the
  // members (its error names the URL and the last failure when there is none by then).
  // `source`: the pool's source number of this upstream.
  static Result<std::unique_ptr<UpstreamZooKeeper>> Start(std::string_view zk_url, size_t source,
                                                          UpstreamPool* pool,
                                                          Nanos start_timeout = 10 * kSecond);
  // Closes the session; the instances it gave stay in the pool.
  ~UpstreamZooKeeper();

 private:
  UpstreamZooKeeper(std::string members_path, size_t source, UpstreamPool* pool);
  Status Refresh(zhandle_t* zh);  // session thread

  const std::string members_path_;
  const size_t source_;
  UpstreamPool* const pool_;
  // Session thread only: each member znode's instance, read once (names are never reused);
  // nullopt for data that is no URL.
  std::map<std::string, std::optional<UpstreamAddress>> members_;
  std::mutex mu_;
  std::condition_variable read_;
  bool read_once_ = false;                   // guarded by mu_
  std::string last_error_;                   // guarded by mu_
  std::unique_ptr<net::ZkSession> session_;  // last: stopped first
};

}  // namespace hammer::dark
