// ZkSession: one ZooKeeper session (official C client, threaded API) kept alive for as long as
// the object lives, and the one thread that does all of its work.
//
// The library's watcher and completion callbacks run on the library's completion thread, where
// synchronous calls deadlock; here they only queue the event and return. The session thread
// takes the events in order and:
//   - connected (first time, after a reconnect, or on a new session): calls `refresh`;
//   - any watch fired: calls `refresh` (watches are one-shot: `refresh` re-reads and re-arms);
//   - connection lost: calls `on_connection(false)` and waits; the client library reconnects
//     by itself and the session (with its watches and ephemeral znodes) survives if that happens
//     within the session timeout;
//   - session expired: closes the dead handle and calls zookeeper_init again (a new session:
//     no watches, no ephemeral znodes; `refresh` must re-create them, and is told so by the new
//     session id);
//   - `refresh` failed: calls it again after `retry_delay` while connected.
// `refresh` and `on_connection` run on the session thread only, so they may use the
// synchronous API (the helpers below) and need no locks between themselves. They must not call
// Stop() or destroy the session.
//
// Watches are armed with the session's global watcher (the `watch` flag of the synchronous
// API); the C client keeps one watch per (path, watcher), so re-arming a path is free.
//
// Logging of the C client is process-wide: WARN and above, to stderr unless `log_path` names a
// file (appended to; the last session started decides).
#pragma once

#include <zookeeper/zookeeper.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"

namespace hammer::net {

// "zk://127.0.0.1:2181,127.0.0.1:2182/hammer" -> hosts "127.0.0.1:2181,127.0.0.1:2182" and
// path "/hammer" (no trailing slash; "" for the root).
struct ZkUrl {
  std::string hosts;
  std::string path;
};
Result<ZkUrl> ParseZkUrl(std::string_view url);
// "/a" + "b" -> "/a/b"; "" + "b" -> "/b".
std::string JoinZkPath(std::string_view parent, std::string_view child);

struct ZkSessionOptions {
  Nanos session_timeout = 10 * kSecond;    // asked of the server, which clamps it (2-20 ticks)
  Nanos retry_delay = 250 * kMillisecond;  // after a failed refresh or zookeeper_init
  std::string log_path;                    // C client log; empty: stderr
};

struct ZkSessionStats {
  bool connected = false;
  uint64_t sessions = 0;     // sessions established (the first, then one per expiry)
  uint64_t connects = 0;     // connected events: the first connect and every reconnect
  uint64_t disconnects = 0;  // connections lost
  uint64_t expiries = 0;     // sessions expired (each followed by zookeeper_init)
  uint64_t refreshes = 0;    // refresh calls that succeeded
  uint64_t refresh_failures = 0;
  std::string last_error;  // of the last failed refresh or zookeeper_init
};

class ZkSession {
 public:
  using RefreshFn = std::function<Status(zhandle_t* zh)>;
  using ConnectionFn = std::function<void(bool connected)>;

  // Calls zookeeper_init and returns at once; connecting happens on the session thread.
  // Fails only when zookeeper_init does (malformed host list).
  static Result<std::unique_ptr<ZkSession>> Start(std::string hosts,
                                                  const ZkSessionOptions& options,
                                                  RefreshFn refresh, ConnectionFn on_connection);
  ~ZkSession();  // Stop()
  ZkSession(const ZkSession&) = delete;
  ZkSession& operator=(const ZkSession&) = delete;

  // Joins the session thread and closes the handle (ZooKeeper then deletes the session's
  // ephemeral znodes at once). Waits for a refresh in progress, which a lost connection ends
  // within the session timeout. Idempotent; any thread but the session's own.
  void Stop();
  // Asks for a refresh on the session thread (e.g. after a local change). Any thread.
  void RequestRefresh();

  ZkSessionStats stats() const;  // any thread
  // The current session's id (0 before the first connect). Any thread.
  int64_t session_id() const;

 private:
  struct HandleContext;
  struct Event {
    uint64_t generation;
    int type;
    int state;
  };

  ZkSession(std::string hosts, const ZkSessionOptions& options, RefreshFn refresh,
            ConnectionFn on_connection);
  static void Watcher(zhandle_t* zh, int type, int state, const char* path, void* context);
  Status Init();  // session thread (or Start, before the thread exists)
  void Run();
  void Fail(std::string message);

  const std::string hosts_;
  const ZkSessionOptions options_;
  const RefreshFn refresh_;
  const ConnectionFn on_connection_;

  // Session-thread state.
  zhandle_t* zh_ = nullptr;
  std::unique_ptr<HandleContext> context_;  // outlives zh_: the watcher's context
  uint64_t generation_ = 0;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Event> events_;
  bool refresh_requested_ = false;
  bool stop_ = false;
  ZkSessionStats stats_;
  int64_t session_id_ = 0;

  std::thread thread_;
};

// Synchronous helpers for a RefreshFn (session thread only). Errors read
// "zookeeper get /hammer/config: connection loss".
Status ZkStatus(std::string_view operation, std::string_view path, int rc);
// Creates `path` and its missing parents as empty persistent znodes.
Status ZkEnsurePath(zhandle_t* zh, const std::string& path);
// A missing znode is not an error: `*exists` is false and, with `watch`, a watch is armed
// for its creation.
Status ZkGetChildren(zhandle_t* zh, const std::string& path, bool watch,
                     std::vector<std::string>* children, bool* exists);
Status ZkGetData(zhandle_t* zh, const std::string& path, bool watch, std::string* data,
                 bool* exists);

}  // namespace hammer::net
