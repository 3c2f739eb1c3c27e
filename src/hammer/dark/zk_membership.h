// ZkMembership: `--membership zk://HOST:PORT/PATH`. Cluster sizes, dark instances and their
// settings come from ZooKeeper and are kept current by watches; readers get snapshots through
// Membership::Current() / SnapshotReader and never wait for ZooKeeper.
//
// Znodes under PATH (docs/dark-znodes.md):
//   PATH/config                          persistent; the config JSON of membership.h
//   PATH/clusters/<name>/members/<m>     ephemeral-sequential members; data {"url": "..."}
// Ns is the number of members of the regular cluster (the proxies, each registered by its own
// ZkMembership); Nd is the number of members of a dark cluster whose data is a valid URL (the
// instances copies are spread over), for every dark cluster the config names.
//
// The regular cluster is the config's "regular", or `regular_cluster` when the config names
// none. With `register_url`, this proxy registers itself there (once that name is known) as an
// ephemeral-sequential member and stays registered: across reconnects, session expiry, a
// deleted member znode, and a change of the regular cluster's name.
//
// What readers see:
//   - before the first complete read: an empty snapshot (no dark clusters, Ns 0), stale;
//   - after each change: a new snapshot (new version), not stale;
//   - a config znode that is not valid JSON for membership.h: the last valid config stays in
//     force; stats().config_errors and last_error say why. A missing config znode means no
//     dark clusters (unless `initial_config` re-creates it);
//   - ZooKeeper unreachable or a read failing: the last values, stale (one new snapshot when
//     that starts, another when it ends); the session re-establishes itself.
// Member data is read once per member znode (names are never reused) and cached.
//
// Threading: Start(), stats() and the destructor from any thread but the session's;
// Current()/SnapshotReader from any thread. `on_change` runs on the session thread after every
// publish (values changed or stale flipped), one call at a time, and must not destroy the
// ZkMembership.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/dark/membership.h"

namespace hammer::net {
class ZkSession;
}  // namespace hammer::net

namespace hammer::dark {

class ZkMembershipState;

struct ZkMembershipOptions {
  std::string regular_cluster;  // used when the config has no "regular"
  std::string register_url;     // non-empty: register this proxy (its http://host:port)
                                // at once; or call Register() later
  std::string initial_config;   // non-empty: config JSON created at PATH/config when missing
  Nanos session_timeout = 10 * kSecond;
  Nanos retry_delay = 250 * kMillisecond;  // after a failed read
  // > 0: Start waits this long for the first complete read and fails without one.
  Nanos start_timeout = 0;
  std::string zk_log_path;  // the C client's log (process-wide); empty: stderr, WARN and above
  std::function<void(std::shared_ptr<const MembershipSnapshot>)> on_change;
};

struct ZkMembershipStats {
  bool connected = false;
  bool stale = true;
  uint64_t sessions = 0;
  uint64_t disconnects = 0;
  uint64_t session_expiries = 0;
  uint64_t reads = 0;          // complete reads of config and members
  uint64_t read_failures = 0;  // reads cut short (connection loss, ...), retried
  uint64_t config_errors = 0;  // config znode contents rejected
  uint64_t registrations = 0;  // member znodes created for this proxy
  std::string last_error;
};

class ZkMembership final : public Membership {
 public:
  static Result<std::unique_ptr<ZkMembership>> Start(std::string_view zk_url,
                                                     ZkMembershipOptions options);
  // Closes the session (this proxy's member znode goes away at once).
  ~ZkMembership() override;

  // Registers this proxy with `url` (http://host:port), or moves its registration there: for
  // a proxy that learns its port after Start (listening on port 0). Returns at once (an
  // invalid url is an error); the registration happens on the session thread.
  Status Register(std::string_view url);

  ZkMembershipStats stats() const;
  // This proxy's member znode, "" when not registered. Any thread.
  std::string registered_path() const;
  // The ZooKeeper session id, 0 before the first connect (for diagnostics and tests).
  int64_t session_id() const;

 private:
  ZkMembership(std::string root, ZkMembershipOptions options);

  std::unique_ptr<ZkMembershipState> state_;  // session-thread state
  std::unique_ptr<net::ZkSession> session_;   // last: stopped first
};

}  // namespace hammer::dark
