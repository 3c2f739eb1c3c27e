#include "hammer/load/load_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <thread>
#include <utility>

#include "hammer/base/byte_size.h"
#include "hammer/base/duration.h"
#include "hammer/base/hadoop_reporter.h"
#include "hammer/base/open_file_limit.h"
#include "hammer/base/output_file.h"
#include "hammer/base/signals.h"
#include "hammer/http/request_writer.h"
#include "hammer/http/tls.h"
#include "hammer/load/dry_run.h"
#include "hammer/load/har.h"
#include "hammer/load/key_mapper.h"
#include "hammer/load/load_dashboard.h"
#include "hammer/load/load_report.h"
#include "hammer/load/spec_source.h"
#include "hammer/load/target_source.h"

namespace hammer::load {
namespace {

constexpr size_t kSummaryTableRows = 50;
// Descriptors a run needs besides one per connection: per event-loop thread (epoll, eventfd,
// timers) and for the process (stdio, the resolver, the input, reports).
constexpr uint64_t kDescriptorsPerThread = 4;
constexpr uint64_t kSpareDescriptors = 32;
// How long the end of a run waits for the receiver to take the final --remote-write push.
constexpr Nanos kFinalPushTimeout = 5 * kSecond;
// How long the end of an aborted run waits for ZooKeeper to take the abort node (--fleet).
constexpr Nanos kAbortWriteTimeout = 5 * kSecond;

// RFC 3339 ("2026-11-30T02:00:00Z", "...+01:00") or Unix seconds ("1764468000.5"), as
// microseconds since the epoch.
Result<int64_t> ParseStartAt(const std::string& text) {
  int64_t nanos = 0;
  if (ParseIsoTimestamp(text, &nanos)) return nanos / 1000;
  char* end = nullptr;
  double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0' && seconds > 0) {
    return static_cast<int64_t>(seconds * 1e6);
  }
  return Status::Error("expected an RFC 3339 time (2026-11-30T02:00:00Z) or Unix seconds, got '" +
                       text + "'");
}

// A positive duration flag ("30s", "250ms", "1m30s"); errors start with `flag`.
Status ParsePositiveDuration(const std::string& text, Nanos* out, const std::string& flag) {
  Result<Nanos> d = ParseDuration(text);
  if (!d.ok()) return Status::Error(flag + ": " + d.status().message());
  if (*d == 0) return Status::Error(flag + ": must be more than 0, got '" + text + "'");
  *out = *d;
  return Status::Ok();
}

}  // namespace

Status SplitTotalRate(double rate_total, int workers, int worker_index,
                      const WorkerIdentity& identity, LoadOptions* options) {
  if (options->rate > 0) return Status::Error("--rate and --rate-total are exclusive");
  int n = workers > 0 ? workers : identity.count;
  if (n <= 0) {
    return Status::Error(
        "--rate-total needs --workers N (or HAMMER_WORKERS, or a Hadoop task, where "
        "the map count is known)");
  }
  int index = worker_index >= 0 ? worker_index : std::max(0, identity.index);
  if (index >= n) return Status::Error("--worker-index must be below --workers");
  options->rate = rate_total / n;
  // Worker i starts i/R after worker 0: together they send one request every 1/R seconds.
  options->schedule_offset = static_cast<Nanos>(static_cast<double>(index) / rate_total * 1e9);
  return Status::Ok();
}

Result<LoadCommand> LoadCommand::Create(const LoadFlags& flags) {
  LoadCommand command(flags);
  command.options_ = flags.run;
  command.identity_ = DetectWorkerIdentity();
  command.stderr_is_terminal_ = isatty(STDERR_FILENO) != 0;
  if (Status ok = command.CheckRunFlags(); !ok.ok()) return ok;
  if (Status ok = command.CheckRequestFlags(); !ok.ok()) return ok;
  if (Status ok = command.CheckWorkerFlags(); !ok.ok()) return ok;
  if (Status ok = command.CheckReportFlags(); !ok.ok()) return ok;
  if (Status ok = command.OpenInput(); !ok.ok()) return ok;
  return command;
}

// How much to send and for how long.
Status LoadCommand::CheckRunFlags() {
  if (!flags_.rate.empty()) {
    char* end = nullptr;
    options_.rate = std::strtod(flags_.rate.c_str(), &end);
    if (end == flags_.rate.c_str() || *end != '\0' || !(options_.rate > 0) || options_.rate > 1e8) {
      return Status::Error("--rate: expected requests per second > 0, got '" + flags_.rate + "'");
    }
  }
  if (!flags_.stages.empty()) {
    if (flags_.rate_total > 0) return Status::Error("--stages and --rate-total are exclusive");
    Result<RateSchedule> schedule = RateSchedule::Parse(flags_.stages, options_.rate);
    if (!schedule.ok()) return Status::Error("--stages: " + schedule.status().message());
    // The peak makes the run open loop and bounds the rate; the schedule sets the pace.
    options_.rate = schedule->peak_rate();
    options_.stages = std::make_shared<const RateSchedule>(std::move(*schedule));
  }
  if (!flags_.duration.empty()) {
    Status ok = ParsePositiveDuration(flags_.duration, &options_.duration, "--duration");
    if (!ok.ok()) return ok;
  }
  Result<uint64_t> max_key_memory = ParseByteSize(flags_.max_key_memory);
  if (!max_key_memory.ok())
    return Status::Error("--max-key-memory: " + max_key_memory.status().message());
  options_.max_key_bytes = *max_key_memory;
  if (Status ok = ParsePositiveDuration(flags_.timeout, &options_.timeout, "--timeout"); !ok.ok()) {
    return ok;
  }
  if (Status ok = ParsePositiveDuration(flags_.connect_timeout, &options_.connect_timeout,
                                        "--connect-timeout");
      !ok.ok()) {
    return ok;
  }
  if (Status ok = ParsePositiveDuration(flags_.dns_ttl, &options_.dns_ttl, "--dns-ttl"); !ok.ok()) {
    return ok;
  }
  if (options_.stages && options_.duration == 0)
    options_.duration = options_.stages->total_duration();
  if (!flags_.warmup.empty()) {
    if (Status ok = ParsePositiveDuration(flags_.warmup, &options_.warmup, "--warmup"); !ok.ok()) {
      return ok;
    }
    if (options_.duration > 0 && options_.warmup >= options_.duration) {
      return Status::Error("--warmup must be shorter than the run (--duration or --stages)");
    }
  }
  if (!flags_.think_time.empty()) {
    Result<ThinkTime> think = ThinkTime::Parse(flags_.think_time);
    if (!think.ok()) return Status::Error("--think-time: " + think.status().message());
    if (think->enabled() && options_.rate > 0) {
      return Status::Error(
          "--think-time paces a closed loop; with --rate or --stages the schedule sets the pace");
    }
    options_.think_time = *think;
  }
  if (options_.source.loop && options_.duration == 0 && options_.max_requests == 0) {
    return Status::Error("--loop needs --duration or --requests to end the run");
  }
  if ((options_.duration > 0 || options_.max_requests > 0) && !options_.source.loop &&
      !options_.recorded_timing) {
    // As wrk and vegeta do: a duration means "for that long", whatever the list's length; as
    // hey does, a request count means that many requests.
    options_.source.loop = true;
    replay_notice_ = true;
  }
  if (!options_.http2.enabled && (flags_.max_streams > 0 || options_.http2.fallback)) {
    return Status::Error(
        std::string(flags_.max_streams > 0 ? "--max-streams" : "--http2-fallback") +
        " needs --http2");
  }
  options_.http2.max_streams = std::max<uint32_t>(1, flags_.max_streams);
  return Status::Ok();
}

// What each request is and how its answer is judged.
Status LoadCommand::CheckRequestFlags() {
  if (!flags_.no_error_pattern) {
    auto pattern = CompileErrorPattern(flags_.error_pattern);
    if (!pattern.ok()) return pattern.status();
    options_.error_pattern = *pattern;
  }
  // A report written to standard output ("-") has it to itself: records mixed in would break
  // `--summary-json - | jq`.
  const char* report_to_stdout = flags_.summary_json == kStdoutPath ? "--summary-json -"
                                 : flags_.html == kStdoutPath       ? "--html -"
                                                                    : nullptr;
  const bool records_asked =
      flags_.records || flags_.emit == "records" || flags_.emit == "partials";
  if (report_to_stdout != nullptr && records_asked) {
    return Status::Error(std::string(report_to_stdout) + " and " +
                         (flags_.records ? std::string("--records") : "--emit " + flags_.emit) +
                         " both write to standard output; send one of them to a file");
  }
  if (flags_.emit.empty()) {
    // One record per request would flood a terminal; a file or a pipe is where they belong.
    const bool to_terminal = isatty(STDOUT_FILENO) != 0 && !flags_.records;
    options_.emit =
        to_terminal || report_to_stdout != nullptr ? EmitMode::kNone : EmitMode::kRecords;
  } else if (flags_.emit == "records") {
    options_.emit = EmitMode::kRecords;
  } else if (flags_.emit == "partials") {
    options_.emit = EmitMode::kPartials;
  } else if (flags_.emit == "none") {
    options_.emit = EmitMode::kNone;
  } else {
    return Status::Error("--emit: expected records, partials or none, got '" + flags_.emit + "'");
  }
  Result<http::HeaderList> headers = http::ParseHeaderFlags(flags_.headers);
  if (!headers.ok()) return Status::Error("--header: " + headers.status().message());
  options_.headers = std::move(*headers);
  if (!options_.method.empty() && !http::IsMethodName(options_.method)) {
    // A space, CR or LF would put a second request line or header on the wire.
    return Status::Error("--method: '" + http::EscapeControls(options_.method) +
                         "' is not a method name (letters, digits and !#$%&'*+-.^_`|~)");
  }
  if (flags_.body.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    return Status::Error(
        "--body: CR, LF or NUL in an inline body; for a body with line "
        "breaks or binary bytes use --body @FILE");
  }
  if (!flags_.body.empty() && flags_.body[0] == '@') {
    std::ifstream file(flags_.body.substr(1), std::ios::binary);
    if (!file) return Status::Error("--body: cannot read '" + flags_.body.substr(1) + "'");
    std::ostringstream content;
    content << file.rdbuf();
    options_.body = content.str();
  } else {
    options_.body = flags_.body;
  }
  return Status::Ok();
}

// Threads, and this worker among many (--rate-total, --start-at, Hadoop).
Status LoadCommand::CheckWorkerFlags() {
  if (options_.threads == 0) {
    options_.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  options_.threads = std::min(options_.threads, options_.concurrency);
  if (options_.source.seed == 0) options_.source.seed = std::random_device{}();
  // Every request in flight holds a connection, a descriptor: check they fit before sending.
  const OpenFileLimit limit = RaiseOpenFileLimit();
  const uint64_t needed = static_cast<uint64_t>(options_.concurrency) +
                          kDescriptorsPerThread * static_cast<uint64_t>(options_.threads) +
                          kSpareDescriptors;
  if (limit.soft > 0 && limit.soft < needed) {
    return Status::Error(
        "-c " + std::to_string(options_.concurrency) + " needs about " + std::to_string(needed) +
        " open files, but the open-file limit is " + std::to_string(limit.soft) + " (hard limit " +
        std::to_string(limit.hard) + ", already raised to it): lower -c, or " +
        "raise the hard limit ('ulimit -Hn " + std::to_string(needed) + "' as root, " +
        "LimitNOFILE= in a systemd unit, nofile in /etc/security/limits.conf)");
  }
  if (flags_.rate_total > 0) {
    Status ok = SplitTotalRate(flags_.rate_total, flags_.workers, flags_.worker_index, identity_,
                               &options_);
    if (!ok.ok()) return ok;
  }
  progress_.label = identity_.label;
  options_.partial_task = identity_.task;
  options_.partial_attempt = identity_.attempt;
  progress_.live_line = stderr_is_terminal_ && !flags_.quiet;
  // reporter: lines only where Hadoop reads them: CI logs and `2>file` stay clean.
  progress_.hadoop_reporter = flags_.hadoop || flags_.hadoop_counters || identity_.in_hadoop();
  if (!flags_.start_at.empty()) {
    Result<int64_t> at_micros = ParseStartAt(flags_.start_at);
    if (!at_micros.ok()) return Status::Error("--start-at: " + at_micros.status().message());
    int64_t wait_micros = *at_micros - WallNowMicros();
    options_.start_at = MonoNow() + std::max<int64_t>(0, wait_micros) * kMicrosecond;
  }
  return Status::Ok();
}

// Keys, thresholds and TLS trust: checked now, so that a typo is not found after the run.
Status LoadCommand::CheckReportFlags() {
  Result<KeyMode> mode = ParseKeyMode(flags_.key);
  if (!mode.ok()) return Status::Error("--key: " + mode.status().message());
  Result<KeyMapper> keys = KeyMapper::Create(*mode, flags_.key_patterns);
  if (!keys.ok()) return Status::Error("--key-pattern: " + keys.status().message());
  options_.keys = *keys;
  for (const std::string& text : flags_.thresholds) {
    Result<stats::Threshold> t = stats::ParseThreshold(text);
    if (!t.ok()) return Status::Error("--threshold: " + t.status().message());
    thresholds_.push_back(*t);
  }
  if (!flags_.metrics_linger.empty()) {
    if (flags_.metrics_listen.empty())
      return Status::Error("--metrics-linger needs --metrics-listen");
    Result<Nanos> linger = ParseDuration(flags_.metrics_linger);
    if (!linger.ok()) return Status::Error("--metrics-linger: " + linger.status().message());
    metrics_linger_ = *linger;
  }
  if (Status ok = CheckRemoteWriteFlags(); !ok.ok()) return ok;
  if (Status ok = CheckAbortFlags(); !ok.ok()) return ok;
  if (!flags_.dashboard.empty()) {
    // A malformed address is a usage error now, not after the input was opened.
    if (Result<net::SocketAddress> a = ParseDashboardAddress(flags_.dashboard); !a.ok())
      return a.status();
  }
  if (!flags_.dashboard_linger.empty()) {
    if (flags_.dashboard.empty()) return Status::Error("--dashboard-linger needs --dashboard");
    Result<Nanos> linger = ParseDuration(flags_.dashboard_linger);
    if (!linger.ok()) return Status::Error("--dashboard-linger: " + linger.status().message());
    dashboard_linger_ = *linger;
  }
  options_.live_key_metrics = !flags_.metrics_listen.empty() || !flags_.remote_write.empty() ||
                              !flags_.dashboard.empty() || flags_.abort_on_fail;
  if (!options_.tls.ca_file.empty()) {
    // A bad --cacert is a usage error now, not a failure of every https request later.
    Result<std::unique_ptr<http::TlsClientContext>> tls =
        http::TlsClientContext::Create(options_.tls);
    if (!tls.ok()) return Status::Error("--cacert: " + tls.status().message());
  }
  return Status::Ok();
}

// --split and --split-by: this worker's part of a request file.
Status LoadCommand::CheckSplitFlags(TargetsFormat format, SpecOptions* spec_options) const {
  if (flags_.split.empty() && flags_.split_by.empty()) return Status::Ok();
  if (format == TargetsFormat::kLines) {
    return Status::Error(
        "--split applies to request files (--targets-format vegeta, jsonl or access-log, --har); "
        "give each worker its own URL list instead");
  }
  SplitBy by = SplitBy::kConnection;
  if (!flags_.split_by.empty()) {
    Result<SplitBy> parsed = ParseSplitBy(flags_.split_by);
    if (!parsed.ok()) return parsed.status();
    by = *parsed;
  }
  if (!flags_.split.empty()) {
    Result<ReplaySplit> split = ReplaySplit::Parse(flags_.split, by);
    if (!split.ok()) return split.status();
    spec_options->split = *split;
    return Status::Ok();
  }
  // --split-by alone: the part is this task's (Hadoop, Kubernetes, HAMMER_WORKER_INDEX).
  const int count = flags_.workers > 0 ? flags_.workers : identity_.count;
  const int index = flags_.worker_index >= 0 ? flags_.worker_index : identity_.index;
  if (count <= 0 || index < 0) {
    return Status::Error(
        "--split-by without --split needs this worker's index and the worker count: a Hadoop "
        "task (mapreduce_task_partition, mapreduce_job_maps), or --worker-index and --workers "
        "(JOB_COMPLETION_INDEX or HAMMER_WORKER_INDEX, and HAMMER_WORKERS)");
  }
  if (index >= count) {
    return Status::Error("--split-by: this worker's index " + std::to_string(index) +
                         " is not below the worker count " + std::to_string(count));
  }
  spec_options->split = ReplaySplit(index, count, by);
  return Status::Ok();
}

// --remote-write: each series is labelled with the run and the worker pushing it.
Status LoadCommand::CheckRemoteWriteFlags() {
  if (flags_.remote_write.empty()) {
    if (!flags_.push_interval.empty()) return Status::Error("--push-interval needs --remote-write");
    return Status::Ok();
  }
  if (Result<http::Url> url = http::ParseUrl(flags_.remote_write); !url.ok()) {
    return Status::Error("--remote-write: " + url.status().message());
  }
  remote_write_.url = flags_.remote_write;
  if (!flags_.push_interval.empty()) {
    Status ok =
        ParsePositiveDuration(flags_.push_interval, &remote_write_.interval, "--push-interval");
    if (!ok.ok()) return ok;
  }
  remote_write_.tls = options_.tls;
  // Without a run id from the environment, this process is a run of its own.
  std::string run = identity_.run;
  if (run.empty()) {
    run = std::to_string(WallNowMicros() / 1'000'000) + "-" + std::to_string(getpid());
  }
  remote_write_.labels = {{"run_id", run}, {"worker", std::to_string(worker_index())}};
  return Status::Ok();
}

int LoadCommand::worker_index() const {
  return flags_.worker_index >= 0 ? flags_.worker_index : std::max(0, identity_.index);
}

// --abort-on-fail, --abort-grace and --fleet.
Status LoadCommand::CheckAbortFlags() {
  if (!flags_.abort_on_fail) {
    if (!flags_.abort_grace.empty()) return Status::Error("--abort-grace needs --abort-on-fail");
    if (!flags_.fleet.empty()) return Status::Error("--fleet needs --abort-on-fail");
    return Status::Ok();
  }
  if (thresholds_.empty()) return Status::Error("--abort-on-fail needs a --threshold");
  if (!flags_.abort_grace.empty()) {
    Result<Nanos> grace = ParseDuration(flags_.abort_grace);
    if (!grace.ok()) return Status::Error("--abort-grace: " + grace.status().message());
    abort_grace_ = *grace;
  }
  if (!flags_.fleet.empty()) {
    if (Result<net::ZkUrl> url = net::ParseZkUrl(flags_.fleet); !url.ok()) {
      return Status::Error("--fleet: " + url.status().message());
    }
    if (identity_.run.empty() && !flags_.dry_run) {  // --dry-run joins no fleet
      return Status::Error(
          "--fleet needs the run's id, the same in every worker: HAMMER_RUN_ID (a Hadoop task "
          "has its job's)");
    }
  }
  return Status::Ok();
}

Status LoadCommand::OpenInput() {
  Result<TargetsFormat> format = ParseTargetsFormat(flags_.targets_format);
  if (!format.ok()) return Status::Error("--targets-format: " + format.status().message());
  std::vector<std::string> inputs = flags_.inputs;
  if (inputs.empty()) inputs.push_back("-");
  input_name_.clear();
  for (const std::string& input : inputs)
    input_name_ += (input_name_.empty() ? "" : " ") + input;
  if (!flags_.har.empty()) {
    if (!flags_.inputs.empty()) return Status::Error("--har FILE replaces the URL/FILE arguments");
    format = TargetsFormat::kHar;
    input_name_ = flags_.har;
  }
  SpecOptions spec_options;
  spec_options.loop = options_.source.loop;
  if (options_.recorded_timing) {
    if (*format != TargetsFormat::kHar && *format != TargetsFormat::kJsonl &&
        *format != TargetsFormat::kAccessLog) {
      return Status::Error(
          "--replay (--har-timing) needs a request file with recorded times: --targets-format "
          "jsonl (what `hammer dark --capture` writes), access-log, or --har FILE");
    }
    if (options_.rate > 0) return Status::Error("--replay and --rate are exclusive");
    options_.threads = 1;  // one schedule, in recorded order
    spec_options.timed = true;
  }
  if (flags_.speed != 1.0) {
    if (!options_.recorded_timing) return Status::Error("--speed needs --replay");
    if (!(flags_.speed >= 0.1 && flags_.speed <= 100)) {
      return Status::Error("--speed: expected 0.1 to 100, got " + std::to_string(flags_.speed));
    }
  }
  spec_options.speed = flags_.speed;
  options_.speed = flags_.speed;
  spec_options.send_truncated = flags_.replay_truncated;
  if (!flags_.base_url.empty()) {
    if (*format == TargetsFormat::kLines) {
      return Status::Error(
          "--base-url applies to request files (--targets-format vegeta, jsonl or "
          "access-log, --har)");
    }
    Result<BaseUrl> base = BaseUrl::Parse(flags_.base_url);
    if (!base.ok()) return base.status();
    spec_options.base_url = *base;
    spec_options.preserve_host = flags_.preserve_host;
  } else if (flags_.preserve_host) {
    return Status::Error("--preserve-host needs --base-url");
  }
  if (*format == TargetsFormat::kAccessLog && flags_.preserve_host) {
    return Status::Error("--preserve-host: an access log does not record the Host it was sent");
  }
  if (Status ok = CheckSplitFlags(*format, &spec_options); !ok.ok()) return ok;
  if (*format == TargetsFormat::kLines) {
    auto source = TargetSource::Open(inputs, options_.source);
    if (!source.ok()) return source.status();
    input_.lines = std::move(*source);
  } else {
    if (inputs.size() > 1 || TargetSource::IsUrl(inputs[0])) {
      return Status::Error("--targets-format " + flags_.targets_format +
                           " reads one request FILE (or - for stdin)");
    }
    if (flags_.har.empty()) input_name_ = inputs[0];
    // A request file given with only --duration is replayed like a URL list; stdin cannot be.
    if (replay_notice_ && input_name_ == "-") options_.source.loop = replay_notice_ = false;
    spec_options.loop = options_.source.loop;
    auto specs = SpecSource::Open(input_name_, *format, spec_options);
    if (!specs.ok()) return specs.status();
    input_.specs = std::move(*specs);
  }
  return Status::Ok();
}

Result<LoadVerdict> LoadCommand::Run() {
  if (flags_.dry_run) {
    if (Status ok = PrintDryRun(options_, std::move(input_), stdout); !ok.ok()) return ok;
    return LoadVerdict::kDone;
  }
  BlockShutdownSignals();
  std::unique_ptr<LoadMetrics> metrics;
  if (!flags_.metrics_listen.empty() || !remote_write_.url.empty()) {
    Result<std::unique_ptr<LoadMetrics>> started = LoadMetrics::Start(
        flags_.metrics_listen, &options_, /*keep_samples=*/!remote_write_.url.empty());
    if (!started.ok()) return started.status();
    metrics = std::move(*started);
    if (!flags_.metrics_listen.empty()) {
      std::fprintf(stderr, "hammer load: metrics at http://%s/metrics\n",
                   metrics->address().ToString().c_str());
    }
  }
  std::unique_ptr<RemoteWriter> remote_writer;
  if (!remote_write_.url.empty()) {
    Result<std::unique_ptr<RemoteWriter>> started =
        RemoteWriter::Start(remote_write_, metrics.get());
    if (!started.ok()) return started.status();
    remote_writer = std::move(*started);
  }
  std::unique_ptr<LoadDashboard> dashboard;
  if (!flags_.dashboard.empty()) {
    Result<std::unique_ptr<LoadDashboard>> started =
        LoadDashboard::Start(flags_.dashboard, &options_, "hammer load", {{"input", input_name_}});
    if (!started.ok()) return started.status();
    dashboard = std::move(*started);
    // Said even with -q: the URL is what the flag asked for.
    std::fprintf(stderr, "hammer load: dashboard at %s\n", dashboard->url().c_str());
  }
  std::unique_ptr<FleetAbort> fleet;
  std::unique_ptr<AbortWatch> abort;
  if (flags_.abort_on_fail) {
    if (!flags_.fleet.empty()) {
      Result<std::unique_ptr<FleetAbort>> started =
          FleetAbort::Start(flags_.fleet, identity_.run, worker_index());
      if (!started.ok()) return started.status();
      fleet = std::move(*started);
    }
    AbortOptions abort_options;
    abort_options.thresholds = thresholds_;
    abort_options.grace = abort_grace_;
    abort_options.warmup = options_.warmup;
    abort_options.worker = worker_index();
    abort_options.max_keys = options_.max_keys;
    abort_options.max_key_bytes = options_.max_key_bytes;
    abort = std::make_unique<AbortWatch>(std::move(abort_options), fleet.get());
  }
  if (!flags_.quiet) AnnounceInput();
  Result<LoadSummary> result = RunLoad(options_, std::move(input_), STDOUT_FILENO, progress_,
                                       metrics.get(), dashboard.get(), abort.get());
  if (fleet) {
    if (!fleet->FinishAbort(kAbortWriteTimeout)) {
      std::fprintf(stderr, "hammer load: --fleet: could not write the abort to ZooKeeper at %s\n",
                   fleet->hosts().c_str());
    }
    const FleetAbort::Counts counts = fleet->counts();
    if (counts.not_published > 0) {
      std::fprintf(stderr,
                   "hammer load: --fleet: %llu of %llu figures not published to ZooKeeper at %s "
                   "(last: %s)\n",
                   static_cast<unsigned long long>(counts.not_published),
                   static_cast<unsigned long long>(counts.not_published + counts.published),
                   fleet->hosts().c_str(),
                   counts.last_error.empty() ? "not connected" : counts.last_error.c_str());
    }
    fleet.reset();  // this worker's node goes with its session
  }
  if (remote_writer) {
    RemoteWriter::Counts pushed = remote_writer->Finish(kFinalPushTimeout);
    if (pushed.failed > 0) {
      std::fprintf(stderr, "hammer load: --remote-write: %llu of %llu pushes failed (last: %s)\n",
                   static_cast<unsigned long long>(pushed.failed),
                   static_cast<unsigned long long>(pushed.pushes), pushed.last_failure.c_str());
    }
  }
  if (!result.ok()) return result.status();
  const LoadSummary& summary = *result;
  // An input without a request is a mistake (a wrong file, a filter that kept nothing), not a
  // run that passed; a Hadoop task given an empty split has simply nothing to do.
  if (summary.requests() == 0 && summary.signal == 0 && !flags_.hadoop && !identity_.in_hadoop()) {
    std::string why = " (only blank lines and # comments, or nothing)";
    if (!summary.skipped.empty()) {
      // Every entry was skipped (another method, another --split part, a cut body): say which.
      why = ": every entry was skipped (";
      const char* separator = "";
      for (const auto& [reason, n] : summary.skipped) {
        why += separator + std::to_string(n) + " " + reason;
        separator = "; ";
      }
      why += ")";
    }
    return Status::Error("no requests in " +
                         (input_name_ == "-" ? std::string("standard input") : input_name_) + why);
  }
  const bool with_table = !flags_.no_table && (flags_.table || stderr_is_terminal_);
  if (!flags_.quiet) {
    std::fputs(FormatLoadSummary(summary, with_table, kSummaryTableRows).c_str(), stderr);
  }
  HadoopReporter(progress_.hadoop_reporter)
      .Counters("hammer_load", LoadCounters::kCounterSpecs, summary.counters.CounterValues());
  std::vector<stats::ThresholdResult> results;
  if (!thresholds_.empty()) {
    results = stats::EvaluateThresholds(thresholds_, summary.threshold_inputs());
  }
  if (!summary.records_error.ok()) {
    std::fprintf(stderr,
                 "hammer load: standard output: %s (after %llu records); the summary counts "
                 "every request sent\n",
                 summary.records_error.message().c_str(),
                 static_cast<unsigned long long>(summary.records_written));
  }
  std::string html;
  if (!flags_.html.empty() || dashboard) {
    html = LoadSummaryHtml(summary, "hammer load", {{"input", input_name_}}, results);
  }
  if (dashboard) dashboard->Finish(html);
  if (Status ok = WriteReports(summary, results, html); !ok.ok()) {
    std::fprintf(stderr, "hammer load: %s\n", ok.message().c_str());
    return LoadVerdict::kOutputFailed;
  }
  if (!summary.records_error.ok()) return LoadVerdict::kOutputFailed;
  LoadVerdict verdict = JudgeThresholds(results);
  if (summary.abort) {
    // Said even with -q: it is the run's verdict.
    std::fprintf(stderr, "hammer load: aborted (--abort-on-fail): %s\n",
                 summary.abort->Describe().c_str());
    if (flags_.hadoop || identity_.in_hadoop()) {
      HadoopReporter(true).Counter("threshold", "aborted", 1);
    } else {
      verdict = LoadVerdict::kThresholdsFailed;
    }
  }
  if (metrics && metrics_linger_ > 0 && summary.signal == 0) {
    if (!flags_.quiet) {
      std::fprintf(stderr, "hammer load: serving the final metrics for %s (--metrics-linger)\n",
                   FormatDuration(metrics_linger_).c_str());
    }
    std::fflush(stderr);
    WaitForShutdownSignal(metrics_linger_);
  }
  if (dashboard) {
    dashboard->WaitForClients(kDashboardFlush);
    if (const LoadDashboard::Counts counts = dashboard->counts();
        counts.refused + counts.dropped > 0) {
      std::fprintf(stderr,
                   "hammer load: dashboard: %llu pages disconnected for reading too slowly, %llu "
                   "refused (%zu open already)\n",
                   static_cast<unsigned long long>(counts.dropped),
                   static_cast<unsigned long long>(counts.refused), LoadDashboard::kMaxClients);
    }
    if (dashboard_linger_ > 0 && summary.signal == 0) {
      if (!flags_.quiet) {
        std::fprintf(stderr,
                     "hammer load: serving the final report at %s for %s (--dashboard-linger)\n",
                     dashboard->url().c_str(), FormatDuration(dashboard_linger_).c_str());
      }
      std::fflush(stderr);
      WaitForShutdownSignal(dashboard_linger_);
    }
  }
  // In a Hadoop task a stopped mapper's records are still its output: the task succeeds.
  if (summary.signal != 0 && !flags_.hadoop && !identity_.in_hadoop()) {
    signal_ = summary.signal;
    return LoadVerdict::kInterrupted;
  }
  return verdict;
}

// What the run will read, when it would otherwise surprise: a terminal waiting for URLs, or a
// finite list replayed for --duration.
void LoadCommand::AnnounceInput() const {
  if (flags_.inputs.empty() && flags_.har.empty() && isatty(STDIN_FILENO) != 0) {
    std::fputs(
        "hammer load: reading URLs from the terminal, one per line (Ctrl-D ends, Ctrl-C "
        "stops); usually: hammer load URL... or FILE... (--help)\n",
        stderr);
  }
  if (replay_notice_ && options_.duration > 0) {
    std::fprintf(stderr,
                 "hammer load: replaying the input for %s (--duration; as wrk and vegeta do, "
                 "the list is sent again from its start when it ends)\n",
                 FormatDuration(options_.duration).c_str());
  } else if (replay_notice_) {
    std::fprintf(stderr,
                 "hammer load: replaying the input until %llu requests (--requests; as hey "
                 "does, the list is sent again from its start when it ends)\n",
                 static_cast<unsigned long long>(options_.max_requests));
  }
}

Status LoadCommand::WriteReports(const LoadSummary& summary,
                                 const std::vector<stats::ThresholdResult>& thresholds,
                                 const std::string& html) const {
  if (!flags_.summary_json.empty()) {
    Status written = WriteOutputFile("--summary-json", flags_.summary_json,
                                     LoadSummaryJson(summary, "load", thresholds));
    if (!written.ok()) return written;
  }
  if (!flags_.html.empty()) {
    Status written = WriteOutputFile("--html", flags_.html, html);
    if (!written.ok()) return written;
    if (!flags_.quiet && flags_.html != kStdoutPath) {
      std::fprintf(stderr, "  report       %s\n", flags_.html.c_str());
    }
  }
  return Status::Ok();
}

LoadVerdict LoadCommand::JudgeThresholds(const std::vector<stats::ThresholdResult>& results) const {
  if (results.empty()) return LoadVerdict::kDone;
  for (const stats::ThresholdResult& r : results) {
    if (!flags_.quiet || !r.passed) {  // a failure always names itself, even with -q
      std::fputs(stats::FormatThresholdLine(r).c_str(), stderr);
    }
  }
  const size_t failed = stats::FailedCount(results);
  if (failed == 0) return LoadVerdict::kDone;
  if (flags_.hadoop || identity_.in_hadoop()) {
    // In Hadoop the records and counters are the contract: report, never fail the task.
    HadoopReporter(true).Counter("threshold", "failed", failed);
    return LoadVerdict::kDone;
  }
  std::fprintf(stderr, "hammer load: %zu of %zu thresholds failed\n", failed, results.size());
  return LoadVerdict::kThresholdsFailed;
}

}  // namespace hammer::load
