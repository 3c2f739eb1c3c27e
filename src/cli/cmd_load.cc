// hammer load: the load generator and Hadoop Streaming mapper.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "hammer/load/load_command.h"

namespace hammer::cli {

namespace {

constexpr const char* kDescription =
    "Send the requests of a URL list and record every latency.\n\n"
    "Input: URLs given as arguments, and/or FILEs (- for stdin, the default) with one URL per\n"
    "line, or 'METHOD URL'; blank lines and # comments are skipped; Hadoop's 'OFFSET<TAB>URL'\n"
    "is accepted. Repeat a line to weight it. With --duration the list is replayed until then.\n"
    "Output (stdout, when it is a file or a pipe; --records on a terminal): one record per\n"
    "request, 'URL<TAB>SECONDS' on success and 'URL<TAB>' on failure (the Hadoop Streaming\n"
    "mapper format). Summary and progress go to stderr. A run stopped by Ctrl-C (SIGINT) or\n"
    "SIGTERM prints its summary and exits 130 or 143; a second signal abandons the requests\n"
    "in flight. Records that cannot be written (a closed pipe: '| head', a full disk) stop the\n"
    "run the same way; it exits 1 once the summary is printed. Exit 2: usage error, 3: a\n"
    "--threshold failed (or, with --abort-on-fail, aborted the run).\n\n"
    "Examples:\n"
    "  hammer load http://127.0.0.1:8080/ -d 10s         one URL for 10 seconds\n"
    "  hammer load urls.txt -c 100                      closed loop, 100 in flight\n"
    "  hammer load urls.txt --loop --rate 2000 -d 60s   open loop at 2000 req/s for a minute\n"
    "  hammer load urls.txt | hammer stats --table     per-URL report\n"
    "  hammer load calls.jsonl --targets-format jsonl --http2 -m 16 -d 30s\n"
    "                                                   gRPC unary calls (Content-Type\n"
    "                                                   application/grpc, framed bodies)";

// Every flag, in the order --help lists them.
void AddLoadFlags(CLI::App& app, load::LoadFlags& f) {
  app.add_option("input", f.inputs,
                 "URLs (http://..., https://...), URL list FILEs, or - for standard input "
                 "(default)")
      ->type_name("URL|FILE");
  app.add_option("-c,--concurrency", f.run.concurrency,
                 "requests in flight (closed loop); the in-flight cap with --rate")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_flag("--http2", f.run.http2.enabled,
               "speak HTTP/2: ALPN h2 on https, prior knowledge (h2c) on http; -c then counts "
               "connections, each carrying --max-streams requests");
  app.add_option("-m,--max-streams", f.max_streams,
                 "--http2: concurrent streams per connection (h2load's -m; default 1)")
      ->check(CLI::Range(1, 100000));
  app.add_flag("--http2-fallback", f.run.http2.fallback,
               "--http2: speak HTTP/1.1 to a server that does not speak HTTP/2 (default: its "
               "requests fail as protocol errors)");
  app.add_option("-t,--threads", f.run.threads, "event-loop threads (default: CPUs)")
      ->check(CLI::Range(0, 1024));
  app.add_option("-r,--rate", f.rate,
                 "open loop: requests per second in total; latency counts from the due time");
  app.add_option("-d,--duration", f.duration,
                 "stop after this long (10s, 1m30s); a finite list is replayed until then");
  app.add_option("--stages", f.stages,
                 "open loop whose rate changes: 'DUR:RATE,...' ramps linearly from the previous "
                 "rate (--rate, or 0) to each RATE over DUR, as k6's ramping-arrival-rate, e.g. "
                 "'30s:100,2m:100,30s:0'; the run lasts the stages unless -d says otherwise");
  app.add_option("--warmup", f.warmup,
                 "send load for this first part of the run (within -d and --stages) but leave "
                 "it out of every statistic and record");
  app.add_option("--think-time", f.think_time,
                 "closed loop: each simulated user pauses this long between requests: 250ms, "
                 "uniform:100ms,500ms or exp:300ms (exponential with that mean)");
  app.add_option(
      "-n,--requests", f.run.max_requests,
      "send this many requests and stop (a shorter input is sent again from its start, as "
      "hey does)");
  app.add_flag("--loop", f.run.source.loop, "cycle the input until --duration/--requests end");
  app.add_flag("--shuffle", f.run.source.shuffle, "randomise order within a window of lines");
  app.add_option("--shuffle-window", f.run.source.shuffle_window, "lines in the shuffle window")
      ->capture_default_str();
  app.add_option("--seed", f.run.source.seed, "random seed for --shuffle");
  app.add_option("--timeout", f.timeout, "per-request timeout")->capture_default_str();
  app.add_option("--connect-timeout", f.connect_timeout, "TCP connect timeout")
      ->capture_default_str();
  app.add_option("--dns-ttl", f.dns_ttl,
                 "reuse a resolved host name this long, then look it up again (new connections "
                 "after that follow DNS changes; a name that stops resolving fails them as dns)")
      ->capture_default_str();
  app.add_option("--error-pattern", f.error_pattern,
                 "a 2xx/3xx whose body matches this regex (case-insensitive) is a failure")
      ->capture_default_str();
  app.add_flag("--no-error-pattern", f.no_error_pattern, "do not look at response bodies");
  app.add_flag("--empty-body-is-error", f.run.empty_body_is_error,
               "count an empty 2xx/3xx body as errorlike_content (the seed's rule)");
  app.add_option("--emit", f.emit,
                 "records | partials | none (default: records when stdout is a file or pipe, "
                 "none on a terminal or when --summary-json or --html is -)");
  app.add_flag("--records", f.records, "write records even when stdout is a terminal");
  app.add_option("-H,--header", f.headers, "header 'Name: value' added to every request");
  app.add_option("--method", f.run.method, "method for every request (overrides the lines)");
  app.add_option("--body", f.body, "request body: text, or @FILE");
  app.add_flag(
      "--insecure", [&f](int64_t) { f.run.tls.verify = false; },
      "https: do not verify certificates");
  app.add_option("--cacert", f.run.tls.ca_file, "https: trust these CA certificates (PEM)")
      ->type_name("FILE");
  app.add_option("--summary-json", f.summary_json,
                 "also write the summary as JSON to this file (-: stdout, which records then "
                 "leave alone)")
      ->type_name("FILE");
  app.add_option("--html", f.html,
                 "also write the self-contained HTML report (table, charts, timeline) here")
      ->type_name("FILE");
  app.add_option("--metrics-listen", f.metrics_listen,
                 "serve live Prometheus metrics at http://ADDR/metrics during the run (ADDR: "
                 "IP:PORT, e.g. 127.0.0.1:9464; port 0 picks one, printed on stderr): requests "
                 "by key and outcome, latency histograms by key, in flight, achieved and target "
                 "rate")
      ->type_name("ADDR");
  app.add_option("--metrics-linger", f.metrics_linger,
                 "with --metrics-listen: keep serving the final metrics this long after the run "
                 "(e.g. 5s) so Prometheus can scrape them; a signal ends the wait")
      ->type_name("DUR");
  app.add_option("--remote-write", f.remote_write,
                 "push the live metrics (those --metrics-listen serves) to this Prometheus "
                 "remote-write URL every --push-interval and once at the end, labelled "
                 "run_id (HAMMER_RUN_ID, or the Hadoop job) and worker (the worker index)")
      ->type_name("URL");
  app.add_option("--push-interval", f.push_interval,
                 "with --remote-write: how often to push (default 5s)")
      ->type_name("DUR");
  app.add_option("--dashboard", f.dashboard,
                 "serve a live page of the run at http://ADDR/ (ADDR: :PORT or PORT for "
                 "loopback, e.g. :0, which picks a port; the URL is printed on stderr; an IP "
                 "such as 0.0.0.0:8089 to serve other machines): rate, latency over time, "
                 "errors, busiest keys, updated every second; at the end it shows the --html "
                 "report")
      ->type_name("ADDR");
  app.add_option("--dashboard-linger", f.dashboard_linger,
                 "with --dashboard: keep serving the final report this long after the run (e.g. "
                 "10m; a signal ends the wait); without it hammer exits once open pages have "
                 "the report")
      ->type_name("DUR");
  app.add_flag("--timestamps", f.run.timestamps,
               "records get a third field, the request's end time in Unix ms (for hammer stats "
               "--html timelines; the seed's Ruby reducer misreads such failure lines)");
  app.add_flag("--failure-types", f.run.failure_types,
               "failure records get the failure type as a third column ('URL<TAB><TAB>timeout'; "
               "after the time with --timestamps), which hammer stats reports by type; the "
               "seed's Ruby reducer counts such lines as 0 s successes");
  app.add_flag("--table", f.table,
               "print the per-URL table at the end (default on a terminal): requests = ok + "
               "errors, latency in ms");
  app.add_flag("--no-table", f.no_table, "do not print the per-URL table");
  app.add_flag("--hadoop", f.hadoop,
               "Hadoop mode outside a detected Hadoop task: reporter: lines, and a failed "
               "--threshold or a signal still exits 0");
  app.add_flag("--hadoop-counters", f.hadoop_counters,
               "write Hadoop Streaming reporter:counter/status lines on stderr (automatic "
               "inside a Hadoop task)");
  app.add_flag("-q,--quiet", f.quiet, "no summary on stderr");
  app.add_option("--start-at", f.start_at,
                 "wait until this time before the first request: RFC 3339 "
                 "(2026-11-30T02:00:00Z) or Unix seconds; lets many workers start together");
  app.add_option("--rate-total", f.rate_total,
                 "open loop across many workers: this worker sends RATE/--workers req/s, its "
                 "schedule staggered by its index so the sum stays smooth");
  app.add_option("--workers", f.workers,
                 "number of workers sharing --rate-total (default: the Hadoop job's map count)");
  app.add_option("--worker-index", f.worker_index,
                 "this worker's index 0..N-1 (default: from the Hadoop task, Kubernetes "
                 "JOB_COMPLETION_INDEX, or HAMMER_WORKER_INDEX)");
  app.add_option("--targets-format", f.targets_format,
                 "input format: lines (URL or METHOD URL per line), vegeta (http targets: "
                 "METHOD URL, header lines, @body-file, blank line), jsonl (one "
                 "{method,url,header,body(base64)} object per line), access-log (nginx/Apache "
                 "combined or common log lines: GET and HEAD requests, sent to --base-url, "
                 "timed by the log's time with --replay); with --http2, an entry "
                 "whose Content-Type is application/grpc is a gRPC call whose body is the "
                 "length-prefixed message and whose grpc-status decides success (a non-zero "
                 "one is a grpc_status failure)")
      ->capture_default_str();
  app.add_option("--har", f.har, "replay the requests of a browser HAR export")->type_name("FILE");
  app.add_flag("--replay,--har-timing", f.run.recorded_timing,
               "send each entry of a request file at its recorded time, offset from the "
               "earliest: a jsonl entry's ts (Unix microseconds, as `hammer dark --capture` "
               "writes it; every entry needs one), a HAR entry's startedDateTime. Open loop on "
               "one thread with --concurrency slots: latency counts from the intended send "
               "time, so a slow server does not slow the schedule (late sends are counted). "
               "Entries whose body was cut by the capture are skipped unless "
               "--replay-truncated. With --loop the schedule repeats (needs --duration or "
               "--requests)");
  app.add_option("--speed", f.speed,
                 "with --replay: play the recording X times faster (0.1 to 100; 0.5 is half "
                 "speed): each entry is sent at its recorded offset divided by X")
      ->capture_default_str()
      ->type_name("X");
  app.add_option("--base-url", f.base_url,
                 "send every entry of a request file (jsonl, vegeta, HAR) to this scheme://host"
                 "[:port] instead, keeping its path and query, e.g. a production capture "
                 "replayed against staging; the Host header follows the new URL unless "
                 "--preserve-host")
      ->type_name("URL");
  app.add_flag("--preserve-host", f.preserve_host,
               "with --base-url: send each entry with its own Host (its Host header, else its "
               "original URL's host:port), as a virtual-hosted staging server expects");
  app.add_option("--split", f.split,
                 "send only part i of N of a request file (0/4 .. 3/4), chosen by --split-by: N "
                 "workers started with the same --start-at and --speed replay the whole file "
                 "together, each entry at its original time")
      ->type_name("I/N");
  app.add_option("--split-by", f.split_by,
                 "how --split chooses an entry's part: connection (the default: a capture's "
                 "client connection, an access log's client address; the URL for entries "
                 "without one) or url; alone, the part is this task's (Hadoop task, "
                 "--worker-index/--workers)")
      ->type_name("CONNECTION|URL");
  app.add_flag("--replay-truncated", f.replay_truncated,
               "send captured entries whose body was cut at --capture-body-limit (marked "
               "body_truncated) with the part that was kept, instead of skipping them");
  app.add_option("--key", f.key,
                 "group records and statistics by url | path | method-path | "
                 "host")
      ->capture_default_str();
  app.add_option("--key-pattern", f.key_patterns,
                 "REGEX=NAME: a key matching REGEX becomes NAME (\\1 refers to groups), e.g. "
                 "'/item/[0-9]+=/item/:id'");
  app.add_option("--max-keys", f.run.max_keys,
                 "rows of the summary table, --summary-json, --html and --emit partials: past N "
                 "distinct keys, keys are grouped by path template (/item/{id}?q={id}), the rest "
                 "go to an (other) row; records keep every URL (0: no limit)")
      ->capture_default_str();
  app.add_option("--max-key-memory", f.max_key_memory,
                 "the key rows' statistics may take SIZE in all (e.g. 64MiB): past it, keys are "
                 "grouped by path template as past --max-keys, then the quietest rows go to "
                 "(other), so memory does not grow with the run's length (0: no limit)")
      ->type_name("SIZE")
      ->capture_default_str();
  app.add_option("--threshold", f.thresholds,
                 "pass/fail rule, e.g. 'p99<250ms', 'errors<1%', 'rps>1000', "
                 "'p99<100ms@KEY'; any failure exits 3 (except in Hadoop mode)");
  app.add_flag("--abort-on-fail", f.abort_on_fail,
               "judge the --threshold rules every second while the run goes on (after "
               "--abort-grace) and stop the run when one fails, on this worker's figures or, with "
               "--fleet, on the fleet's merge; exits 3 (a Hadoop task succeeds, its partials "
               "saying it was aborted)");
  app.add_option("--abort-grace", f.abort_grace,
                 "with --abort-on-fail: judge only after this long from the start (default 10s)")
      ->type_name("DUR");
  app.add_option("--fleet", f.fleet,
                 "with --abort-on-fail: judge the fleet's merged figures, shared through "
                 "ZooKeeper (zk://HOST:PORT[,HOST:PORT][/PATH]) under PATH/hammer/runs/RUN_ID "
                 "(HAMMER_RUN_ID or the Hadoop job id); "
                 "the first worker to see a failure aborts every worker; ZooKeeper out of reach: "
                 "the run goes on")
      ->type_name("URL");
  app.add_option("--max-redirects", f.run.max_redirects,
                 "follow up to N redirects (0: do not follow); a cycle is redirect_loop")
      ->capture_default_str();
  app.add_flag("--cookies", f.run.cookies,
               "keep a cookie jar per in-flight slot (a simulated user), as libcurl did");
  app.add_flag("--dry-run", f.dry_run,
               "print the first requests (10, or --requests) that would be sent, then exit");
  app.add_option("--verbose", f.run.verbose,
                 "print N request/response pairs to stderr (Authorization, cookies redacted)");
}

}  // namespace

int LoadMain(int argc, char** argv) {
  CLI::App app{kDescription, "hammer load"};
  load::LoadFlags flags;
  AddLoadFlags(app, flags);
  if (std::optional<int> exit = ParseCommandLine(app, argc, argv, "load")) return *exit;
  Result<load::LoadCommand> command = load::LoadCommand::Create(flags);
  if (!command.ok()) return Complain("load", command.status().message(), kExitUsage);
  // Requests that fail are results, not errors: a Hadoop task must not be retried for them.
  Result<load::LoadVerdict> verdict = command->Run();
  if (!verdict.ok()) return Complain("load", verdict.status().message(), kExitUsage);
  switch (*verdict) {
    case load::LoadVerdict::kThresholdsFailed:
      return kExitThreshold;
    case load::LoadVerdict::kInterrupted:
      return kExitSignalBase + command->signal();  // 130 for SIGINT, 143 for SIGTERM
    case load::LoadVerdict::kOutputFailed:
      return kExitFailure;
    case load::LoadVerdict::kDone:
      break;
  }
  return kExitOk;
}

}  // namespace hammer::cli
