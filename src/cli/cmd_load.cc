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
#include "hammer/base/signals.h"
#include "hammer/load/body_matcher.h"
#include "hammer/load/load_report.h"
#include "hammer/load/load_run.h"

namespace hammer::cli {

namespace {

int Usage(const std::string& message) {
  std::fprintf(stderr, "hammer load: %s\n", message.c_str());
  return kExitUsage;
}

bool InHadoopTask() {
  return std::getenv("mapreduce_task_id") != nullptr ||
         std::getenv("mapreduce_task_attempt_id") != nullptr ||
         std::getenv("mapred_task_id") != nullptr;
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
  app.add_flag("--table", table, "print the per-URL table at the end (default on a terminal)");
  app.add_flag("--no-table", no_table, "do not print the per-URL table");
  app.add_flag("--hadoop", hadoop,
               "write reporter:counter/status lines (automatic in Hadoop tasks and pipes)");
  app.add_flag("-q,--quiet", quiet, "no summary on stderr");
  app.add_option("--start-at", start_at, "wait until this Unix time (seconds) before starting");
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

  load::ProgressOptions progress;
  const bool stderr_tty = isatty(STDERR_FILENO) != 0;
  progress.live_line = stderr_tty && !quiet;
  progress.hadoop_reporter = hadoop || InHadoopTask() || !stderr_tty;
  if (!start_at.empty()) {
    char* end = nullptr;
    double at = std::strtod(start_at.c_str(), &end);
    if (end == start_at.c_str() || *end != '\0' || at <= 0) {
      return Usage("--start-at: expected Unix seconds, got '" + start_at + "'");
    }
    int64_t wait_micros = static_cast<int64_t>(at * 1e6) - WallNowMicros();
    progress.start_at = MonoNow() + std::max<int64_t>(0, wait_micros) * kMicrosecond;
  }

  auto source = load::TargetSource::Open(input, options.source);
  if (!source.ok()) return Usage(source.status().message());

  BlockShutdownSignals();
  auto summary = load::RunLoad(options, std::move(*source), STDOUT_FILENO, progress);
  if (!summary.ok()) return Usage(summary.status().message());
  bool with_table = !no_table && (table || stderr_tty);
  if (!quiet) std::fputs(load::FormatLoadSummary(*summary, with_table, 50).c_str(), stderr);
  if (!summary_json.empty()) {
    std::ofstream out(summary_json);
    out << load::LoadSummaryJson(*summary);
    if (!out) return Usage("--summary-json: cannot write '" + summary_json + "'");
  }
  // Requests that fail are results, not errors: a Hadoop task must not be retried for them.
  return kExitOk;
}

}  // namespace hammer::cli
