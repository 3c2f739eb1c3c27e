// FleetAbort: the ZooKeeper side of `hammer load --abort-on-fail --fleet zk://HOSTS[/PATH]`:
// what this worker tells the fleet and what it hears from it. The znodes (formats in
// fleet_partial.h), under PATH/hammer/runs/RUN_ID:
//   workers/WORKER   ephemeral, this worker's figures so far, rewritten at each Publish; gone
//                    when the process ends (its session closes)
//   abort            persistent, created once by the first worker that sees a threshold fail;
//                    every worker watches it
// The run's nodes (runs/RUN_ID, workers/, abort) stay after the run for inspection; removing
// them is the operator's (`zkCli.sh deleteall /hammer/runs/RUN_ID`), and a new run needs a new
// RUN_ID (an abort node left by an earlier run with the same id aborts it at once).
//
// ZooKeeper is best-effort here: Start fails only on a malformed URL. When ZooKeeper cannot be
// reached, or a write fails, the run goes on: Publish counts what was not published (counts()),
// and the figures of workers last read stay what Peers returns.
//
// Threads: the work happens on the ZkSession's thread (net/zk_session.h). Publish, RequestAbort,
// Peers, abort and counts may be called from any thread (the run's controlling thread calls
// them); they only exchange values under a lock. An abort node seen (created by this worker or
// another) is reported by abort() within a watch notification's time, not at the next Publish.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/load/fleet_partial.h"
#include "hammer/net/zk_session.h"

namespace hammer::load {

class FleetAbort {
 public:
  // ZooKeeper's node size limit is 1 MB (jute.maxbuffer); a larger payload is not sent.
  static constexpr size_t kMaxPayloadBytes = 1000 * 1000;

  // Connects in the background. `run_id` and `worker` name this worker's node. Errors name
  // --fleet: a URL that is not zk://HOST:PORT[,HOST:PORT...][/PATH], an empty run id.
  static Result<std::unique_ptr<FleetAbort>> Start(std::string_view url, std::string run_id,
                                                   int worker);
  ~FleetAbort();  // closes the session: this worker's node goes
  FleetAbort(const FleetAbort&) = delete;
  FleetAbort& operator=(const FleetAbort&) = delete;

  // Replaces the payload of this worker's node (EncodeFleetPartial) and asks for it to be
  // written, with the other workers' nodes read back in the same pass.
  void Publish(std::string payload);
  // Creates the abort node with `reason` unless one exists (then that one's reason stands).
  void RequestAbort(const AbortReason& reason);
  // Waits until an abort asked for has been written (at most `timeout`; ZooKeeper may be out
  // of reach): the other workers learn of it only from the node. False on timeout.
  bool FinishAbort(Nanos timeout);
  // The other workers' payloads as last read, by node name (this worker's own left out).
  std::map<std::string, std::string> Peers() const;
  // The abort node's reason once it exists.
  std::optional<AbortReason> abort() const;

  struct Counts {
    uint64_t published = 0;      // payloads written
    uint64_t not_published = 0;  // payloads replaced before they could be written, or too big
    bool connected = false;      // the session is connected now
    std::string last_error;      // of the last failed ZooKeeper pass ("" if none)
  };
  Counts counts() const;

  const std::string& run_path() const { return run_path_; }
  std::string hosts() const { return hosts_; }

 private:
  FleetAbort(std::string hosts, std::string run_path, std::string worker);
  Status Refresh(zhandle_t* zh);  // the session thread
  Status WriteOwnNode(zhandle_t* zh, const std::string& payload);

  const std::string hosts_;
  const std::string run_path_;
  const std::string workers_path_;
  const std::string abort_path_;
  const std::string worker_;

  mutable std::mutex mu_;
  std::condition_variable abort_written_;
  std::string payload_;  // the latest from Publish
  bool payload_pending_ = false;
  std::optional<std::string> abort_request_;  // encoded reason to create
  std::map<std::string, std::string> peers_;
  std::optional<AbortReason> abort_;
  Counts counts_;

  std::unique_ptr<net::ZkSession> session_;  // last: stopped first
};

}  // namespace hammer::load
