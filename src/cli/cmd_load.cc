// hammer load: the load generator and Hadoop Streaming mapper.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "hammer/base/duration.h"
#include "hammer/base/hadoop_reporter.h"
#include "hammer/base/progress.h"
#include "hammer/base/signals.h"
#include "hammer/base/worker_identity.h"
#include "hammer/load/body_matcher.h"
#include "hammer/load/load_report.h"
#include "hammer/load/load_run.h"
#include "hammer/load/load_worker.h"
#include "hammer/load/redact.h"
#include "hammer/load/request_feed.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/resolver.h"
#include "hammer/stats/threshold.h"

namespace hammer::cli {

namespace {

int Usage(const std::string& message) {
  return Complain("load", message, kExitUsage);
}

// RFC 3339 ("2026-11-30T02:00:00Z", "...+01:00") or Unix seconds ("1764468000.5"), as
// microseconds since the epoch.
Result<int64_t> ParseStartAt(const std::string& text) {
  int64_t nanos = 0;
  if (load::ParseIsoTimestamp(text, &nanos)) return nanos / 1000;
  char* end = nullptr;
  double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0' && seconds > 0) {
    return static_cast<int64_t>(seconds * 1e6);
  }
  return Status::Error("expected an RFC 3339 time (2026-11-30T02:00:00Z) or Unix seconds, got '" +
                       text + "'");
}

// --dry-run: what would be sent, prepared exactly as a run prepares it, with secrets redacted.
int DryRun(const load::LoadOptions& options, load::LoadInput input) {
  net::EventLoop loop;
  net::Resolver resolver(0);
  http::HttpClient client(&loop, &resolver, http::ClientOptions{});
  load::SharedRunState shared;
  shared.requests_left = static_cast<int64_t>(options.max_requests ? options.max_requests : 10);
  stats::KeyStats unused;
  load::RequestFeed feed(
      &options, input.lines.get(), input.specs.get(), &shared, &client,
      [&unused](const std::string&) { return &unused; }, 1);
  load::PreparedRequest scratch;
  int shown = 0;
  while (const load::PreparedRequest* r = feed.Next(&scratch)) {
    ++shown;
    if (r->invalid) {
      std::printf("# %d: not sent (invalid_url): %s: %s\n\n", shown, r->key.c_str(),
                  r->invalid->c_str());
      continue;
    }
    std::printf("# %d: %s %s  (key %s, %zu body bytes)\n%s\n", shown, r->method.c_str(),
                r->url.ToString().c_str(), r->key.c_str(), r->body.size(),
                load::RedactHead(r->head, "").c_str());
  }
  if (input.specs && input.specs->error()) return Usage(input.specs->error()->message());
  return kExitOk;
}

}  // namespace

int RunLoad(int argc, char** argv) {
  CLI::App app{
      "Send the requests of a URL list and record every latency.\n\n"
      "Input (FILE or - for stdin): one URL per line, or 'METHOD URL'; blank lines and #\n"
      "comments are skipped; Hadoop's 'OFFSET<TAB>URL' is accepted. Repeat a line to weight it.\n"
      "Output (stdout): one record per request, 'URL<TAB>SECONDS' on success and 'URL<TAB>' on\n"
      "failure (the Hadoop Streaming mapper format). Summary and progress go to stderr.\n\n"
      "Examples:\n"
      "  hammer load urls.txt -c 100                      closed loop, 100 in flight\n"
      "  hammer load urls.txt --loop --rate 2000 -d 60s   open loop at 2000 req/s for a minute\n"
      "  hammer load urls.txt | hammer stats --table     per-URL report",
      "hammer load"};
  std::string input = "-";
  load::LoadOptions options;
  options.threads = 0;
  std::string rate_text, duration_text, timeout_text = "30s", connect_timeout_text = "5s";
  std::string error_pattern(load::kSeedErrorPattern);
  bool no_error_pattern = false;
  std::string emit = "records";
  std::vector<std::string> headers;
  std::string body_arg;
  std::string summary_json;
  bool table = false, no_table = false, hadoop = false, quiet = false;
  std::string start_at;
  std::string targets_format = "lines";
  std::string har_path;
  std::string key_mode = "url";
  std::vector<std::string> key_patterns;
  std::vector<std::string> threshold_texts;
  bool dry_run = false;
  double rate_total = 0;
  int workers = 0, worker_index = -1;

  app.add_option("file", input, "URL list (default: standard input)");
  app.add_option("-c,--concurrency", options.concurrency,
                 "requests in flight (closed loop); the in-flight cap with --rate")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_option("-t,--threads", options.threads, "event-loop threads (default: CPUs)")
      ->check(CLI::Range(0, 1024));
  app.add_option("-r,--rate", rate_text,
                 "open loop: requests per second in total; latency counts from the due time");
  app.add_option("-d,--duration", duration_text, "stop after this long (e.g. 10s, 5m)");
  app.add_option("-n,--requests", options.max_requests, "stop after this many requests");
  app.add_flag("--loop", options.source.loop, "cycle the input until --duration/--requests end");
  app.add_flag("--shuffle", options.source.shuffle, "randomise order within a window of lines");
  app.add_option("--shuffle-window", options.source.shuffle_window, "lines in the shuffle window")
      ->capture_default_str();
  app.add_option("--seed", options.source.seed, "random seed for --shuffle");
  app.add_option("--timeout", timeout_text, "per-request timeout")->capture_default_str();
  app.add_option("--connect-timeout", connect_timeout_text, "TCP connect timeout")
      ->capture_default_str();
  app.add_option("--error-pattern", error_pattern,
                 "a 2xx/3xx whose body matches this regex (case-insensitive) is a failure")
      ->capture_default_str();
  app.add_flag("--no-error-pattern", no_error_pattern, "do not look at response bodies");
  app.add_flag("--empty-body-is-error", options.empty_body_is_error,
               "count an empty 2xx/3xx body as errorlike_content (the seed's rule)");
  app.add_option("--emit", emit, "records (default) | partials | none")->capture_default_str();
  app.add_option("-H,--header", headers, "header 'Name: value' added to every request");
  app.add_option("--method", options.method, "method for every request (overrides the lines)");
  app.add_option("--body", body_arg, "request body: text, or @FILE");
  app.add_flag(
      "--insecure", [&](int64_t) { options.tls.verify = false; },
      "https: do not verify certificates");
  app.add_option("--cacert", options.tls.ca_file, "https: trust these CA certificates (PEM)");
  app.add_option("--summary-json", summary_json, "also write the summary as JSON to this file");
  std::string html;
  app.add_option("--html", html,
                 "also write the self-contained HTML report (table, charts, timeline) here");
  app.add_flag("--timestamps", options.timestamps,
               "records get a third field, the request's end time in Unix ms (for hammer stats "
               "--html timelines; the seed's Ruby reducer misreads such failure lines)");
  app.add_flag("--table", table, "print the per-URL table at the end (default on a terminal)");
  app.add_flag("--no-table", no_table, "do not print the per-URL table");
  app.add_flag("--hadoop", hadoop,
               "write reporter:counter/status lines (automatic in Hadoop tasks and pipes)");
  app.add_flag("-q,--quiet", quiet, "no summary on stderr");
  app.add_option("--start-at", start_at,
                 "wait until this time before the first request: RFC 3339 "
                 "(2026-11-30T02:00:00Z) or Unix seconds; lets many workers start together");
  app.add_option("--rate-total", rate_total,
                 "open loop across many workers: this worker sends RATE/--workers req/s, its "
                 "schedule staggered by its index so the sum stays smooth");
  app.add_option("--workers", workers,
                 "number of workers sharing --rate-total (default: the Hadoop job's map count)");
  app.add_option("--worker-index", worker_index,
                 "this worker's index 0..N-1 (default: from the Hadoop task, Kubernetes "
                 "JOB_COMPLETION_INDEX, or HAMMER_WORKER_INDEX)");
  app.add_option("--targets-format", targets_format,
                 "input format: lines (URL or METHOD URL per line), vegeta (http targets: "
                 "METHOD URL, header lines, @body-file, blank line), jsonl (one "
                 "{method,url,header,body(base64)} object per line)")
      ->capture_default_str();
  app.add_option("--har", har_path, "replay the requests of a browser HAR export");
  app.add_flag("--har-timing", options.har_timing,
               "send HAR entries at their recorded offsets (latency counts from then)");
  app.add_option("--key", key_mode,
                 "group records and statistics by url | path | method-path | "
                 "host")
      ->capture_default_str();
  app.add_option("--key-pattern", key_patterns,
                 "REGEX=NAME: a key matching REGEX becomes NAME (\\1 refers to groups), e.g. "
                 "'/item/[0-9]+=/item/:id'");
  app.add_option("--threshold", threshold_texts,
                 "pass/fail rule, e.g. 'p99<250ms', 'errors<1%', 'rps>1000', "
                 "'p99<100ms@KEY'; any failure exits 3 (except in Hadoop mode)");
  app.add_option("--max-redirects", options.max_redirects,
                 "follow up to N redirects (0: do not follow); a cycle is redirect_loop")
      ->capture_default_str();
  app.add_flag("--cookies", options.cookies,
               "keep a cookie jar per in-flight slot (a simulated user), as libcurl did");
  app.add_flag("--dry-run", dry_run,
               "print the first requests (10, or --requests) that would be sent, then exit");
  app.add_option("--verbose", options.verbose,
                 "print N request/response pairs to stderr (Authorization, cookies redacted)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  if (!rate_text.empty()) {
    char* end = nullptr;
    options.rate = std::strtod(rate_text.c_str(), &end);
    if (end == rate_text.c_str() || *end != '\0' || !(options.rate > 0) || options.rate > 1e8) {
      return Usage("--rate: expected requests per second > 0, got '" + rate_text + "'");
    }
  }
  if (!duration_text.empty()) {
    Result<Nanos> d = ParseDuration(duration_text);
    if (!d.ok() || *d == 0) return Usage("--duration: invalid duration '" + duration_text + "'");
    options.duration = *d;
  }
  Result<Nanos> timeout = ParseDuration(timeout_text);
  if (!timeout.ok() || *timeout == 0) return Usage("--timeout: invalid '" + timeout_text + "'");
  options.timeout = *timeout;
  Result<Nanos> connect_timeout = ParseDuration(connect_timeout_text);
  if (!connect_timeout.ok() || *connect_timeout == 0) {
    return Usage("--connect-timeout: invalid '" + connect_timeout_text + "'");
  }
  options.connect_timeout = *connect_timeout;
  if (options.source.loop && options.duration == 0 && options.max_requests == 0) {
    return Usage("--loop needs --duration or --requests to end the run");
  }
  if (!no_error_pattern) {
    auto pattern = load::CompileErrorPattern(error_pattern);
    if (!pattern.ok()) return Usage(pattern.status().message());
    options.error_pattern = *pattern;
  }
  if (emit == "records") {
    options.emit = load::EmitMode::kRecords;
  } else if (emit == "partials") {
    options.emit = load::EmitMode::kPartials;
  } else if (emit == "none") {
    options.emit = load::EmitMode::kNone;
  } else {
    return Usage("--emit: expected records, partials or none, got '" + emit + "'");
  }
  for (const std::string& h : headers) {
    size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0) {
      return Usage("--header: expected 'Name: value', got '" + h + "'");
    }
    std::string value = h.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    options.headers.emplace_back(h.substr(0, colon), value);
  }
  if (!body_arg.empty() && body_arg[0] == '@') {
    std::ifstream file(body_arg.substr(1), std::ios::binary);
    if (!file) return Usage("--body: cannot read '" + body_arg.substr(1) + "'");
    std::ostringstream content;
    content << file.rdbuf();
    options.body = content.str();
  } else {
    options.body = body_arg;
  }
  if (options.threads == 0) {
    options.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  options.threads = std::min(options.threads, options.concurrency);
  if (options.source.seed == 0) options.source.seed = std::random_device{}();

  const WorkerIdentity identity = DetectWorkerIdentity();
  if (rate_total > 0) {
    if (options.rate > 0) return Usage("--rate and --rate-total are exclusive");
    int n = workers > 0 ? workers : identity.count;
    if (n <= 0) {
      return Usage(
          "--rate-total needs --workers N (or HAMMER_WORKERS, or a Hadoop task, where "
          "the map count is known)");
    }
    int index = worker_index >= 0 ? worker_index : std::max(0, identity.index);
    if (index >= n) return Usage("--worker-index must be below --workers");
    options.rate = rate_total / n;
    // Worker i starts i/R after worker 0: together they send one request every 1/R seconds.
    options.schedule_offset = static_cast<Nanos>(static_cast<double>(index) / rate_total * 1e9);
  }
  ProgressOptions progress;
  progress.label = identity.label;
  const bool stderr_tty = isatty(STDERR_FILENO) != 0;
  progress.live_line = stderr_tty && !quiet;
  progress.hadoop_reporter = hadoop || identity.in_hadoop() || !stderr_tty;
  if (!start_at.empty()) {
    Result<int64_t> at_micros = ParseStartAt(start_at);
    if (!at_micros.ok()) return Usage("--start-at: " + at_micros.status().message());
    int64_t wait_micros = *at_micros - WallNowMicros();
    options.start_at = MonoNow() + std::max<int64_t>(0, wait_micros) * kMicrosecond;
  }
  Result<load::KeyMode> mode = load::ParseKeyMode(key_mode);
  if (!mode.ok()) return Usage("--key: " + mode.status().message());
  Result<load::KeyMapper> keys = load::KeyMapper::Create(*mode, key_patterns);
  if (!keys.ok()) return Usage("--key-pattern: " + keys.status().message());
  options.keys = *keys;
  std::vector<stats::Threshold> thresholds;
  for (const std::string& text : threshold_texts) {
    Result<stats::Threshold> t = stats::ParseThreshold(text);
    if (!t.ok()) return Usage("--threshold: " + t.status().message());
    thresholds.push_back(*t);
  }
  if (!options.tls.ca_file.empty()) {
    // A bad --cacert is a usage error now, not a failure of every https request later.
    Result<std::unique_ptr<http::TlsClientContext>> tls =
        http::TlsClientContext::Create(options.tls);
    if (!tls.ok()) return Usage("--cacert: " + tls.status().message());
  }

  Result<load::TargetsFormat> format = load::ParseTargetsFormat(targets_format);
  if (!format.ok()) return Usage("--targets-format: " + format.status().message());
  if (!har_path.empty()) {
    format = load::TargetsFormat::kHar;
    input = har_path;
  }
  if (options.har_timing) {
    if (*format != load::TargetsFormat::kHar) return Usage("--har-timing needs --har FILE");
    if (options.rate > 0) return Usage("--har-timing and --rate are exclusive");
    options.threads = 1;  // one schedule, in recorded order
  }
  load::LoadInput load_input;
  if (*format == load::TargetsFormat::kLines) {
    auto source = load::TargetSource::Open(input, options.source);
    if (!source.ok()) return Usage(source.status().message());
    load_input.lines = std::move(*source);
  } else {
    auto specs = load::SpecSource::Open(input, *format, options.source.loop);
    if (!specs.ok()) return Usage(specs.status().message());
    load_input.specs = std::move(*specs);
  }
  if (dry_run) return DryRun(options, std::move(load_input));

  BlockShutdownSignals();
  auto summary = load::RunLoad(options, std::move(load_input), STDOUT_FILENO, progress);
  if (!summary.ok()) return Usage(summary.status().message());
  bool with_table = !no_table && (table || stderr_tty);
  if (!quiet) std::fputs(load::FormatLoadSummary(*summary, with_table, 50).c_str(), stderr);
  if (!summary_json.empty()) {
    std::ofstream out(summary_json);
    out << load::LoadSummaryJson(*summary);
    if (!out) return Usage("--summary-json: cannot write '" + summary_json + "'");
  }
  if (!html.empty()) {
    std::ofstream out(html);
    out << load::LoadSummaryHtml(*summary, "hammer load", {{"input", input}});
    if (!out) return Usage("--html: cannot write '" + html + "'");
    if (!quiet) std::fprintf(stderr, "  report       %s\n", html.c_str());
  }
  if (!thresholds.empty()) {
    auto results = stats::EvaluateThresholds(thresholds, summary->threshold_inputs());
    size_t failed = 0;
    for (const stats::ThresholdResult& r : results) {
      failed += r.passed ? 0 : 1;
      if (!quiet || !r.passed) {  // a failure always names itself, even with -q
        std::fprintf(stderr, "  threshold %-24s %s  %s\n", r.text.c_str(),
                     r.passed ? "passed" : "FAILED", r.message.c_str());
      }
    }
    const bool hadoop_mode = hadoop || identity.in_hadoop();
    if (failed > 0 && hadoop_mode) {
      // In Hadoop the records and counters are the contract: report, never fail the task.
      HadoopReporter(true).Counter("threshold", "failed", failed);
    } else if (failed > 0) {
      std::fprintf(stderr, "hammer load: %zu of %zu thresholds failed\n", failed, results.size());
      return kExitThreshold;
    }
  }
  // Requests that fail are results, not errors: a Hadoop task must not be retried for them.
  return kExitOk;
}

}  // namespace hammer::cli
