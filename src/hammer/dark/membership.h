// Membership: how big the regular cluster and each dark cluster are, where the dark instances
// are, and how much traffic each dark cluster gets (dark-canary.md §1.2-1.3, §7).
//
// The proxy never asks for membership on the request path. A membership source (static flags
// or ZooKeeper) builds an immutable MembershipSnapshot whenever something changes and
// publishes it; event-loop threads read the latest one with one atomic load per request
// (SnapshotReader) and never block. A source that cannot confirm its values any more (ZooKeeper
// unreachable) keeps publishing the last known values with `stale` set.
//
// Config JSON, the same for a static file (--membership static) and for the ZooKeeper config
// znode (docs/dark-znodes.md):
//
//   {"regular": "web",
//    "dark": {"web-dark": {"multiplier": 1.0,             // >= 0; 0 turns the cluster off
//                          "strategy": "relative",        // relative | identical | constant-qps
//                          "target_rate": 0,              // constant-qps: qps per dark instance
//                          "sampling": "accumulator",     // accumulator | bernoulli
//                          "buffer_capacity": 1000,       // constant-qps ring buffer
//                          "buffer_ttl_s": 10}}}          // constant-qps entry lifetime
//
// Every field but the cluster names is optional (defaults above). Unknown keys are errors, so a
// typo ("multipler") is reported instead of silently turning a cluster off. The static form
// also takes the counts that ZooKeeper would otherwise give: "regular_instances": N at the top
// and, per dark cluster, "urls": ["http://host:port", ...] and "instances": N (default: the
// number of urls). In ZooKeeper mode those keys are errors: the counts come from the members.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/http/url.h"

namespace hammer::dark {

// How one dark cluster is to be fed; read from the config, never from the members.
struct DarkClusterConfig {
  std::string name;
  double multiplier = 1.0;
  std::string strategy = "relative";     // relative | identical | constant-qps
  double target_rate = 0;                // constant-qps: requests per second per dark instance
  std::string sampling = "accumulator";  // accumulator | bernoulli
  uint32_t buffer_capacity = 1000;
  Nanos buffer_ttl = 10 * kSecond;

  bool operator==(const DarkClusterConfig&) const = default;
};

// The config as a whole: which cluster is the regular one and the dark clusters by name.
struct MembershipConfig {
  std::string regular;                  // may be empty in ZooKeeper mode (see ZkMembership)
  std::vector<DarkClusterConfig> dark;  // sorted by name, names unique

  bool operator==(const MembershipConfig&) const = default;
};

struct DarkClusterMembership {
  DarkClusterConfig config;
  uint32_t instances = 0;       // Nd: the dark instances copies are spread over
  std::vector<http::Url> urls;  // where they are; in ZooKeeper mode Nd == urls.size()

  bool operator==(const DarkClusterMembership&) const = default;
};

struct MembershipSnapshot {
  std::string regular_cluster;
  uint32_t regular_instances = 0;           // Ns; 0 means "send no copies"
  std::vector<DarkClusterMembership> dark;  // sorted by name
  // The source could not confirm these values lately: not read yet, ZooKeeper unreachable, or
  // the last read failed. The values are the last known ones and stay in force.
  bool stale = true;
  MonoNanos last_update = 0;  // when the values or `stale` last changed (MonoNow)
  uint64_t version = 0;       // set by SnapshotHolder::Publish; strictly increasing from 1

  const DarkClusterMembership* FindDark(std::string_view name) const;
  // Same clusters, counts, urls and settings; `stale`, `last_update` and `version` are ignored.
  bool SameMembership(const MembershipSnapshot& other) const;
};

// --membership static: counts and settings from flags or a config file.
struct StaticDarkCluster {
  DarkClusterConfig config;
  std::vector<http::Url> urls;
  uint32_t instances = 0;  // Nd; 0 means urls.size()
};

struct StaticMembershipOptions {
  std::string regular_cluster = "regular";
  uint32_t regular_instances = 1;  // Ns
  std::vector<StaticDarkCluster> dark;
};

// Cluster names become znode names: printable ASCII without '/' or spaces, not "." or "..",
// 1-128 bytes. The error names `where`.
Status CheckClusterName(std::string_view where, std::string_view name);

// Parses the static form of the config JSON (counts allowed).
Result<StaticMembershipOptions> ParseStaticMembershipConfig(std::string_view json);

// Parses the config JSON above (ZooKeeper form: counts are errors). Errors name the offending
// key ("dark.web-dark.multiplier: must be a number >= 0").
Result<MembershipConfig> ParseMembershipConfig(std::string_view json);
// The config as JSON that ParseMembershipConfig reads back unchanged (e.g. to seed ZooKeeper).
std::string MembershipConfigToJson(const MembershipConfig& config);

// A member znode's data: {"url": "http://127.0.0.1:8081"} as written by MemberData; for znodes
// made by hand also a bare "http://host:port" or "host:port" (http assumed).
Result<http::Url> ParseMemberData(std::string_view data);
std::string MemberData(const http::Url& url);

// Counts and urls of the clusters named by `config`, with the settings of `config`. Dark
// clusters without an entry in `dark_members` have no instances. Not stale, version 0.
MembershipSnapshot BuildSnapshot(const MembershipConfig& config, uint32_t regular_instances,
                                 const std::map<std::string, std::vector<http::Url>>& dark_members);

// Publishes snapshots to any number of reader threads. Load() and version() never wait for the
// publisher: version() is one atomic integer load, Load() one std::atomic<shared_ptr> load
// (libstdc++ holds a spin bit only for the reference-count increment). Publish() is for the
// source's own thread(s) and is serialised internally.
class SnapshotHolder {
 public:
  explicit SnapshotHolder(MembershipSnapshot initial);

  std::shared_ptr<const MembershipSnapshot> Load() const {
    return current_.load(std::memory_order_acquire);
  }
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

  // Stamps `next` with the next version (and last_update = MonoNow() when 0) and makes it
  // current. Returns what was published.
  std::shared_ptr<const MembershipSnapshot> Publish(MembershipSnapshot next);

  // Blocks until `accept(current)` is true or `timeout` passes; returns the current snapshot
  // either way. For start-up and tests, never for an event loop.
  std::shared_ptr<const MembershipSnapshot> WaitFor(
      const std::function<bool(const MembershipSnapshot&)>& accept, Nanos timeout) const;

 private:
  std::atomic<std::shared_ptr<const MembershipSnapshot>> current_;
  std::atomic<uint64_t> version_{0};
  mutable std::mutex mu_;  // Publish and WaitFor only
  mutable std::condition_variable published_;
};

// A membership source. Current() may be called from any thread and never blocks.
class Membership {
 public:
  virtual ~Membership() = default;
  Membership(const Membership&) = delete;
  Membership& operator=(const Membership&) = delete;

  std::shared_ptr<const MembershipSnapshot> Current() const { return holder_.Load(); }
  uint64_t version() const { return holder_.version(); }
  const SnapshotHolder& holder() const { return holder_; }

 protected:
  explicit Membership(MembershipSnapshot initial) : holder_(std::move(initial)) {}
  SnapshotHolder holder_;
};

// The per-thread view an event loop keeps: Get() costs one atomic load while nothing changed
// and copies the shared_ptr only when a new version was published. One reader per thread; the
// reference Get() returns stays valid until the next Get() on the same reader.
class SnapshotReader {
 public:
  explicit SnapshotReader(const Membership& membership) : holder_(&membership.holder()) {}
  explicit SnapshotReader(const SnapshotHolder& holder) : holder_(&holder) {}

  const MembershipSnapshot& Get() {
    if (holder_->version() != seen_version_) Reload();
    return *snapshot_;
  }
  // The version of the snapshot the last Get() returned; compare to notice a change.
  uint64_t version() const { return seen_version_; }

 private:
  void Reload();

  const SnapshotHolder* holder_;
  std::shared_ptr<const MembershipSnapshot> snapshot_;
  uint64_t seen_version_ = ~uint64_t{0};
};

// Publishes MakeSnapshot(options) once; never changes, never stale.
class StaticMembership final : public Membership {
 public:
  explicit StaticMembership(const StaticMembershipOptions& options);
  static MembershipSnapshot MakeSnapshot(const StaticMembershipOptions& options);
};

}  // namespace hammer::dark
