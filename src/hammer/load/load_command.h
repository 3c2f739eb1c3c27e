// LoadCommand: everything `hammer load` does besides reading its command line, so that the CLI
// (src/cli/cmd_load.cc) only fills LoadFlags and maps the outcome to an exit status.
//
// Create() checks every flag value and combination and opens the input: its errors are usage
// errors, one line naming the flag or file ("--rate: expected requests per second > 0, got
// 'x'"). Run() then either prints what would be sent (--dry-run, dry_run.h) or runs (RunLoad),
// prints the summary on stderr, writes --summary-json and --html, and judges the --threshold
// rules. Run's errors: a run that could not start (--metrics-listen cannot bind included), a
// malformed request file, an unwritable report. Requests that fail are results, not errors.
// With --metrics-listen, Run serves live metrics (load_metrics.h) from before the first request
// until it returns, printing the address on stderr; --metrics-linger keeps them served that
// long after the summary (a signal ends the wait), so Prometheus can take a last scrape.
// With --remote-write, Run pushes the same metrics (remote_writer.h) every --push-interval,
// labelled with the run id and worker index, and once more after the run, before the summary.
// With --dashboard, Run serves the live page (load_dashboard.h) the same way, printing its URL;
// at the end each open page gets the final report (what --html writes), and Run waits until
// every page has had it (at most kDashboardFlush), then --dashboard-linger longer while `/`
// serves that report (a signal ends the wait).
//
// Worker identity (base/worker_identity.h) decides the Hadoop mode and, with --rate-total, this
// worker's share of the rate: worker i of N sends RATE/N requests per second, its schedule
// starting i/RATE after worker 0's, so that together the workers send one request every 1/RATE.
// With --split-by and no --split, it names this worker's part of a request file (index/count;
// the count must be known: a Hadoop job's map count, --workers or HAMMER_WORKERS).
// With --abort-on-fail, Run judges the thresholds every second after --abort-grace
// (abort_watch.h) and stops the run when one fails, on this worker's figures or, with --fleet, on
// the fleet's merged figures coordinated through ZooKeeper (fleet_abort.h); an aborted run is a
// failed threshold (kThresholdsFailed; in Hadoop mode the task succeeds, its summary, counters
// and partials saying it was aborted). ZooKeeper out of reach is said once; the run goes on.
// Threads: the caller's (RunLoad starts the event loops).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hammer/base/progress.h"
#include "hammer/base/status.h"
#include "hammer/base/worker_identity.h"
#include "hammer/load/abort_watch.h"
#include "hammer/load/body_matcher.h"
#include "hammer/load/fleet_abort.h"
#include "hammer/load/load_options.h"
#include "hammer/load/load_run.h"
#include "hammer/load/remote_writer.h"
#include "hammer/load/spec_source.h"
#include "hammer/stats/threshold.h"

namespace hammer::load {

// `hammer load`'s flags as given. Values CLI11 reads as numbers and booleans live in `run`;
// the others are the text the user typed, checked by LoadCommand::Create.
struct LoadFlags {
  LoadFlags() { run.threads = 0; }

  std::vector<std::string> inputs;  // URLs, files, "-" (stdin); none: stdin
  LoadOptions run;                  // threads 0: one per CPU
  std::string rate;
  std::string duration;
  std::string stages;      // "DUR:RATE,..." (--stages)
  std::string warmup;      // --warmup DUR
  std::string think_time;  // --think-time
  std::string timeout = "30s";
  std::string connect_timeout = "5s";
  std::string dns_ttl = "60s";
  std::string max_key_memory{stats::kDefaultMaxKeyMemory};  // --max-key-memory SIZE
  std::string error_pattern{kSeedErrorPattern};
  bool no_error_pattern = false;
  std::string emit;  // empty: records unless stdout is a terminal
  bool records = false;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // text, or @FILE
  std::string summary_json;
  std::string html;
  std::string metrics_listen;    // --metrics-listen ADDR
  std::string metrics_linger;    // --metrics-linger DUR
  std::string remote_write;      // --remote-write URL
  std::string push_interval;     // --push-interval DUR
  std::string dashboard;         // --dashboard ADDR
  std::string dashboard_linger;  // --dashboard-linger DUR
  bool table = false;
  bool no_table = false;
  bool hadoop = false;
  bool hadoop_counters = false;
  bool quiet = false;
  std::string start_at;
  std::string targets_format = "lines";
  std::string har;
  double speed = 1.0;             // --speed: with --replay, the recording's pace times this
  std::string base_url;           // --base-url: empty for none
  bool preserve_host = false;     // --preserve-host
  bool replay_truncated = false;  // --replay-truncated
  std::string split;              // --split i/N: empty for none
  std::string split_by;           // --split-by connection|url: empty for the default
  std::string key = "url";
  std::vector<std::string> key_patterns;
  std::vector<std::string> thresholds;
  bool abort_on_fail = false;  // --abort-on-fail
  std::string abort_grace;     // --abort-grace DUR
  std::string fleet;           // --fleet zk://HOSTS[/PATH]
  bool dry_run = false;
  double rate_total = 0;
  int workers = 0;
  int worker_index = -1;
  uint32_t max_streams = 0;  // -m with --http2; 0: not given (1 stream, h2load's default)
};

enum class LoadVerdict : uint8_t {
  kDone,              // the run ended (its failed requests are in the records and summary)
  kThresholdsFailed,  // a --threshold did not pass (never in Hadoop mode: there it is a counter)
  kInterrupted,       // SIGINT or SIGTERM ended the run early (never in Hadoop mode); signal()
  kOutputFailed,      // records, --summary-json or --html could not be written (said on stderr;
                      // in Hadoop mode too: the task's output is lost, it must be retried)
};

// --rate-total: sets options->rate and options->schedule_offset for this worker. The count is
// `workers` when > 0, else the identity's; the index is `worker_index` when >= 0, else the
// identity's (0 when unknown). Errors name the missing or inconsistent flag.
Status SplitTotalRate(double rate_total, int workers, int worker_index,
                      const WorkerIdentity& identity, LoadOptions* options);

class LoadCommand {
 public:
  // After the run, how long Run waits at most for open dashboard pages to take the final report.
  static constexpr Nanos kDashboardFlush = 3 * kSecond;

  static Result<LoadCommand> Create(const LoadFlags& flags);

  LoadCommand(LoadCommand&&) = default;
  LoadCommand& operator=(LoadCommand&&) = default;

  Result<LoadVerdict> Run();

  const LoadOptions& options() const { return options_; }
  const ProgressOptions& progress() const { return progress_; }
  // After Run: the signal that ended the run (kInterrupted), else 0.
  int signal() const { return signal_; }

 private:
  explicit LoadCommand(const LoadFlags& flags) : flags_(flags) {}
  Status CheckRunFlags();
  Status CheckRequestFlags();
  Status CheckWorkerFlags();
  Status CheckReportFlags();
  Status CheckSplitFlags(TargetsFormat format, SpecOptions* spec_options) const;
  Status CheckRemoteWriteFlags();
  Status CheckAbortFlags();
  int worker_index() const;  // --worker-index, else the identity's, else 0
  Status OpenInput();
  void AnnounceInput() const;
  // `html`: the HTML report, rendered when --html or --dashboard asks for it.
  Status WriteReports(const LoadSummary& summary,
                      const std::vector<stats::ThresholdResult>& thresholds,
                      const std::string& html) const;
  // Prints each result; kThresholdsFailed when one failed (outside Hadoop mode).
  LoadVerdict JudgeThresholds(const std::vector<stats::ThresholdResult>& results) const;

  LoadFlags flags_;
  LoadOptions options_;
  ProgressOptions progress_;
  WorkerIdentity identity_;
  bool stderr_is_terminal_ = false;
  bool replay_notice_ = false;  // --duration on a list without --loop: it is replayed
  std::vector<stats::Threshold> thresholds_;
  std::string input_name_;
  LoadInput input_;
  Nanos metrics_linger_ = 0;
  RemoteWriteOptions remote_write_;  // url empty: no --remote-write
  Nanos dashboard_linger_ = 0;
  Nanos abort_grace_ = 10 * kSecond;
  int signal_ = 0;
};

}  // namespace hammer::load
