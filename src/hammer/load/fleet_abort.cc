#include "hammer/load/fleet_abort.h"

#include <chrono>
#include <utility>
#include <vector>

namespace hammer::load {

Result<std::unique_ptr<FleetAbort>> FleetAbort::Start(std::string_view url, std::string run_id,
                                                      int worker) {
  Result<net::ZkUrl> parsed = net::ParseZkUrl(url);
  if (!parsed.ok()) return Status::Error("--fleet: " + parsed.status().message());
  if (run_id.empty() || run_id.find('/') != std::string::npos) {
    return Status::Error(
        "--fleet needs a run id without '/' shared by the fleet's workers: HAMMER_RUN_ID, or "
        "the Hadoop job's id");
  }
  const std::string run_path =
      net::JoinZkPath(net::JoinZkPath(net::JoinZkPath(parsed->path, "hammer"), "runs"), run_id);
  std::unique_ptr<FleetAbort> fleet(
      new FleetAbort(parsed->hosts, run_path, std::to_string(std::max(0, worker))));
  FleetAbort* self = fleet.get();
  // The C client logs every failed connection attempt (several a second while ZooKeeper is
  // down); a load run says what matters once, at its end (counts()).
  net::ZkSessionOptions session_options;
  session_options.log_path = "/dev/null";
  Result<std::unique_ptr<net::ZkSession>> session = net::ZkSession::Start(
      parsed->hosts, session_options, [self](zhandle_t* zh) { return self->Refresh(zh); },
      [self](bool connected) {
        std::lock_guard lock(self->mu_);
        self->counts_.connected = connected;
      });
  if (!session.ok()) return Status::Error("--fleet: " + session.status().message());
  fleet->session_ = std::move(*session);
  return fleet;
}

FleetAbort::FleetAbort(std::string hosts, std::string run_path, std::string worker)
    : hosts_(std::move(hosts)),
      run_path_(std::move(run_path)),
      workers_path_(net::JoinZkPath(run_path_, "workers")),
      abort_path_(net::JoinZkPath(run_path_, "abort")),
      worker_(std::move(worker)) {}

FleetAbort::~FleetAbort() {
  if (session_) session_->Stop();
}

void FleetAbort::Publish(std::string payload) {
  {
    std::lock_guard lock(mu_);
    if (payload_pending_) ++counts_.not_published;
    if (payload.size() > kMaxPayloadBytes) {
      ++counts_.not_published;
      return;
    }
    payload_ = std::move(payload);
    payload_pending_ = true;
  }
  session_->RequestRefresh();
}

void FleetAbort::RequestAbort(const AbortReason& reason) {
  {
    std::lock_guard lock(mu_);
    if (abort_ || abort_request_) return;
    abort_request_ = EncodeAbortReason(reason);
  }
  session_->RequestRefresh();
}

bool FleetAbort::FinishAbort(Nanos timeout) {
  std::unique_lock lock(mu_);
  return abort_written_.wait_for(lock, std::chrono::nanoseconds(timeout),
                                 [this] { return !abort_request_; });
}

std::map<std::string, std::string> FleetAbort::Peers() const {
  std::lock_guard lock(mu_);
  return peers_;
}

std::optional<AbortReason> FleetAbort::abort() const {
  std::lock_guard lock(mu_);
  return abort_;
}

FleetAbort::Counts FleetAbort::counts() const {
  std::lock_guard lock(mu_);
  Counts counts = counts_;
  if (payload_pending_) ++counts.not_published;  // the latest, not written (yet)
  if (counts.last_error.empty()) counts.last_error = session_->stats().last_error;
  return counts;
}

Status FleetAbort::WriteOwnNode(zhandle_t* zh, const std::string& payload) {
  const std::string path = net::JoinZkPath(workers_path_, worker_);
  const int size = static_cast<int>(payload.size());
  for (int attempt = 0;; ++attempt) {
    // Ephemeral: the node lives as long as this worker's session.
    int rc = zoo_create(zh, path.c_str(), payload.data(), size, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL,
                        nullptr, 0);
    if (rc == ZNODEEXISTS) rc = zoo_set(zh, path.c_str(), payload.data(), size, -1);
    if (rc == ZNONODE && attempt == 0) {
      if (Status s = net::ZkEnsurePath(zh, workers_path_); !s.ok()) return s;
      continue;
    }
    return rc == ZOK ? Status::Ok() : net::ZkStatus("write", path, rc);
  }
}

// One pass: the abort node first (so that a worker that sees it stops without waiting for
// the rest), then this worker's node, then the others'.
Status FleetAbort::Refresh(zhandle_t* zh) {
  std::optional<std::string> abort_request;
  std::string payload;
  bool write_payload = false;
  {
    std::lock_guard lock(mu_);
    abort_request = abort_request_;
    if (payload_pending_) {
      payload = payload_;
      write_payload = true;
    }
  }
  if (abort_request) {
    int rc =
        zoo_create(zh, abort_path_.c_str(), abort_request->data(),
                   static_cast<int>(abort_request->size()), &ZOO_OPEN_ACL_UNSAFE, 0, nullptr, 0);
    if (rc == ZNONODE) {
      if (Status s = net::ZkEnsurePath(zh, run_path_); !s.ok()) return s;
      rc = zoo_create(zh, abort_path_.c_str(), abort_request->data(),
                      static_cast<int>(abort_request->size()), &ZOO_OPEN_ACL_UNSAFE, 0, nullptr, 0);
    }
    if (rc != ZOK && rc != ZNODEEXISTS) return net::ZkStatus("create", abort_path_, rc);
    std::lock_guard lock(mu_);
    abort_request_.reset();
    abort_written_.notify_all();
  }
  // Armed again at every pass: the watch fires when the node is created.
  std::string abort_data;
  bool abort_exists = false;
  if (Status s = net::ZkGetData(zh, abort_path_, /*watch=*/true, &abort_data, &abort_exists);
      !s.ok()) {
    return s;
  }
  if (abort_exists) {
    std::lock_guard lock(mu_);
    if (!abort_) abort_ = ParseAbortReason(abort_data);
  }
  if (write_payload) {
    Status written = WriteOwnNode(zh, payload);
    std::lock_guard lock(mu_);
    if (!written.ok()) {
      counts_.last_error = written.message();
      return written;
    }
    ++counts_.published;
    if (payload_ == payload) payload_pending_ = false;
  }
  std::vector<std::string> children;
  bool exists = false;
  if (Status s = net::ZkGetChildren(zh, workers_path_, /*watch=*/false, &children, &exists);
      !s.ok()) {
    return s;
  }
  std::map<std::string, std::string> peers;
  for (const std::string& child : children) {
    if (child == worker_) continue;
    std::string data;
    bool child_exists = false;
    const std::string path = net::JoinZkPath(workers_path_, child);
    if (Status s = net::ZkGetData(zh, path, /*watch=*/false, &data, &child_exists); !s.ok()) {
      return s;
    }
    if (child_exists) peers.emplace(child, std::move(data));
  }
  std::lock_guard lock(mu_);
  peers_ = std::move(peers);
  return Status::Ok();
}

}  // namespace hammer::load
