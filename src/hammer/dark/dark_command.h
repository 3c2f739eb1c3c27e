// DarkCommand: everything `hammer dark` does besides reading its command line, so that the CLI
// (src/cli/cmd_dark.cc) only fills DarkFlags and maps the outcome to an exit status.
//
// Create() checks every flag value and combination (URLs, NAME=VALUE cluster flags, durations,
// --config, --judge rules) without touching the network: its errors are usage errors, one line
// naming the flag ("--dark-rate: bad value 'x'"). Run() reserves the listening address (port 0
// is resolved first, so a ZooKeeper registration carries the real port), starts the membership
// (static, or a ZooKeeper session) and the DarkProxyGroup, prints the bound address (and the
// admin address) on stdout, then waits for SIGTERM/SIGINT, --duration or --verdict-after
// (SIGHUP reloads the listener's certificate under --tls-cert). It then judges the canary when
// asked (before draining: the drain abandons the dark copies in flight), writes --verdict-json,
// and drains for at most --drain-timeout (a second signal stops at once), printing the verdict
// and the counters on stderr.
//
// Run's errors: the proxy could not start (address in use, a certificate that cannot be loaded,
// ZooKeeper unreachable). Threads: the caller's; it must be the main thread, which owns the
// process's signal mask.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/dark/dark_options.h"
#include "hammer/dark/membership.h"
#include "hammer/dark/verdict_rules.h"

namespace hammer::dark {

// `hammer dark`'s flags as given. Values CLI11 reads as numbers, booleans and plain strings
// live in `run`; the others are the text the user typed, checked by DarkCommand::Create.
struct DarkFlags {
  DarkOptions run;
  std::vector<std::string> upstreams;         // URLs and zk:// paths, comma-separated or repeated
  std::vector<std::string> upstream_weights;  // URL=N
  std::string upstream_dns_interval = "5s";   // "0": no re-resolution
  std::string health_check_interval = "5s";
  std::string health_check_timeout = "1s";
  std::string health_check_status = "200";     // N or N-M
  std::vector<std::string> compare_secondary;  // URLs
  std::vector<std::string> dark;               // NAME=URL[,URL...]
  std::vector<std::string> dark_instances;     // NAME=N
  std::vector<std::string> dark_multipliers;   // NAME=M
  std::vector<std::string> dark_strategies;    // NAME=relative|identical|constant-qps
  std::vector<std::string> dark_rates;         // NAME=R
  std::string membership = "static";           // static | zk://HOST:PORT/PATH
  std::string config_file;                     // static membership from JSON
  std::string sampling = "accumulator";        // accumulator | bernoulli
  std::string regular_cluster = "regular";
  std::string upstream_timeout = "30s";
  std::string dark_timeout = "5s";
  std::string connect_timeout = "5s";
  std::string drain_timeout = "10s";
  std::string per_try_timeout;  // empty: a try may take the whole --upstream-timeout
  std::string tunnel_idle_timeout = "1h";
  std::string ejection_time = "30s";
  std::string lb = "least-request";  // least-request | round-robin
  std::string duration;              // empty: until a signal
  bool no_forwarded_for = false;
  std::vector<std::string> judges;
  bool no_default_judges = false;
  double verdict_alpha = kDefaultVerdictAlpha;
  std::string verdict_after;  // empty: no verdict-driven stop
  std::string verdict_json;   // FILE, "-" for stdout, empty for none
  std::string verdict_interval = "1s";
  std::string capture_body_limit = "64KiB";  // --capture-body-limit SIZE
  std::vector<std::string> capture_rotate;   // --capture-rotate SIZE|DURATION
  std::string capture_compress;              // --capture-compress none|zstd (empty: by name)
};

enum class DarkOutcome : uint8_t {
  kStopped,              // stopped by a signal or --duration (a verdict, if any, only reported)
  kVerdictPass,          // --verdict-after: the canary passed
  kVerdictFail,          // --verdict-after: a rule failed
  kVerdictInsufficient,  // --verdict-after: not enough samples to judge
  kVerdictNotWritten,    // --verdict-json could not be written (said on stderr)
};

class DarkCommand {
 public:
  static Result<DarkCommand> Create(const DarkFlags& flags);

  Result<DarkOutcome> Run();

  const DarkOptions& options() const { return options_; }

 private:
  DarkCommand() = default;

  DarkOptions options_;
  StaticMembershipOptions static_membership_;  // with membership_ == "static"
  std::string membership_;
  std::string regular_cluster_;
  Nanos run_for_ = -1;      // -1: until a signal
  Nanos judge_after_ = -1;  // --verdict-after, or -1
  std::string verdict_after_text_;
  std::string verdict_json_;
  bool judging_ = false;
};

}  // namespace hammer::dark
