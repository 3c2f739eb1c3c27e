// hammer stats: the reducer / combiner / report writer. Flags only; the work is StatsJob's.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "hammer/base/byte_size.h"
#include "hammer/base/hadoop_reporter.h"
#include "hammer/base/worker_identity.h"
#include "hammer/stats/stats_job.h"
#include "hammer/stats/threshold.h"

namespace hammer::cli {
namespace {

constexpr const char* kDescription =
    "Aggregate latency records per key (URL). Reads `KEY<TAB>SECONDS` records (`KEY<TAB>` for a\n"
    "failure) as written by `hammer load` or the seed's Ruby mapper, timestamped records\n"
    "`KEY<TAB>SECONDS<TAB>EPOCH_MS` / `KEY<TAB><TAB>EPOCH_MS` (EPOCH_MS: the request's end, ms\n"
    "since the Unix epoch; opt-in, because the seed's reducer reads a timestamped failure as a\n"
    "success lasting EPOCH_MS seconds), and `KEY<TAB>#hp1 ...` partials written by --combine,\n"
    "mixed and in any order, from FILEs or stdin. Malformed lines are counted, reported on stderr\n"
    "(Hadoop counter stats/malformed) and otherwise ignored. Partials that name their task and\n"
    "attempt (`KEY<TAB>#ha1 ...`, from `load --emit partials` as a Hadoop task, a Kubernetes\n"
    "Indexed Job pod, or with HAMMER_TASK/HAMMER_ATTEMPT) count one attempt of each task, the\n"
    "last complete one: a retried task's requests are never merged twice (counter\n"
    "stats/attempts_dropped). Inside a Hadoop task they are merged as they come: Hadoop's\n"
    "shuffle carries one attempt of each map task.";

constexpr const char* kFooter =
    "Modes (one; default --table on a terminal, --reducer otherwise; with --html or --hdr-log\n"
    "and no mode, none):\n"
    "  --reducer  per key: key sum average max min errors count p50 p90 p99 p99.9 histogram,\n"
    "             TAB-separated, seconds; the seed reducer's columns first, as the seed named\n"
    "             them (count: successful requests; errors: failed ones; sum, average, min,\n"
    "             max and the percentiles: of the successful ones). Streams sorted input.\n"
    "               hadoop jar hadoop-streaming.jar ... -mapper 'hammer load' \\\n"
    "                 -combiner 'hammer stats --combine' -reducer 'hammer stats --reducer'\n"
    "  --combine  per key one partial line (exact counts, sums, min/max and histogram); feed\n"
    "             partials of many runs or machines back into any mode to merge them exactly.\n"
    "               hammer stats --combine < run1.tsv > run1.partial\n"
    "               cat run1.partial run2.partial | hammer stats --table\n"
    "  --csv      the --reducer columns (same names) as CSV with a header; also converts\n"
    "             --reducer output.\n"
    "               hadoop fs -cat out/part-* | hammer stats --csv > stats.csv\n"
    "  --json     one JSON document (schema hammer.summary.v1, as load --summary-json): the\n"
    "             total and per key, times in microseconds.\n"
    "               hammer stats --json records.tsv | jq '.latency.p99_us'\n"
    "  --table    aligned table in milliseconds, busiest keys first, with a TOTAL row; columns\n"
    "             requests = ok (successful) + errors (failed), as in `hammer load`'s table.\n"
    "               hammer load urls.txt | hammer stats --table\n"
    "  --hdr      HdrHistogram percentile distribution (ms) per key, for HdrHistogram's plotter.\n"
    "               hammer stats --hdr --key http://127.0.0.1:8080/ records.tsv\n"
    "\n"
    "Files (with any mode, or alone: then nothing is written to stdout):\n"
    "  --html FILE     one self-contained HTML page (works offline): summary, sortable per-key\n"
    "                  table, latency percentile spectrum per key, errors by type and key, and\n"
    "                  throughput and latency over time when records carry timestamps.\n"
    "                    hammer stats --html report.html records.tsv\n"
    "                    hammer stats --reducer --html report.html < sorted.tsv > reduced.tsv\n"
    "  --hdr-log FILE  HdrHistogram interval log of the timestamped records (all keys, or --key):\n"
    "                  one V2-compressed histogram per time bucket (1 s, coarser for long runs),\n"
    "                  for HistogramLogProcessor and the HdrHistogram plotters.\n"
    "\n"
    "Many distinct keys (a URL per item or user): the report modes and --html keep --max-keys\n"
    "rows (default 10000). Past that, keys are grouped by path template (numeric, UUID and\n"
    "long hex path segments and every query value become {id}), and keys of templates beyond\n"
    "the budget go to an (other) row, so the rows still add up to the TOTAL; stderr (and the\n"
    "table) say how many distinct keys were folded into how many rows. The rows' statistics\n"
    "also stay within --max-key-memory (default 256MiB): past it, keys are grouped by template\n"
    "as past --max-keys, then the quietest rows go to (other). When nothing was folded but\n"
    "at least 100 keys, 9 in 10 of them, had one record each, stderr (and the table) say how\n"
    "to group them. --reducer and --combine stay exact per key.\n"
    "\n"
    "Thresholds: --threshold RULE (repeatable) judges the merged figures of everything read, with\n"
    "hammer load's rules and exit status: a Hadoop job's, Spark job's or Kubernetes Job's one\n"
    "verdict, from its partials, records or reducer output (a reducer's part files are read back\n"
    "exactly, as partials). Each result is printed on stderr, and in --json, --summary-json and\n"
    "--html.\n"
    "  hadoop fs -cat out/part-* | hammer stats --threshold 'p99<250ms' --threshold 'errors<1%'\n"
    "\n"
    "Exit status: 0 ok (even with malformed lines), 1 read/write error, 2 usage or unreadable "
    "FILE, 3 a --threshold failed (or the partials say the run was aborted by one:\n"
    "hammer load --abort-on-fail).";

// Prints each result on stderr, as hammer load does; kExitThreshold when one failed, or when the
// run was aborted by a failed threshold (`aborted`: its partials say so; its figures are those
// of a run cut short), except in a Hadoop task, where the job's output and counters are the
// contract (as for hammer load).
int JudgeThresholds(const std::vector<stats::ThresholdResult>& results, bool aborted) {
  for (const stats::ThresholdResult& r : results)
    std::fputs(stats::FormatThresholdLine(r).c_str(), stderr);
  size_t failed = stats::FailedCount(results);
  if (aborted && !results.empty() && failed == 0) {
    std::fputs("hammer stats: the run was aborted by a failed threshold (--abort-on-fail)\n",
               stderr);
    failed = 1;
  }
  if (failed == 0) return kExitOk;
  if (DetectWorkerIdentity().in_hadoop()) {
    HadoopReporter(true).Counter("threshold", "failed", failed);
    return kExitOk;
  }
  std::fprintf(stderr, "hammer stats: %zu of %zu thresholds failed\n", failed, results.size());
  return kExitThreshold;
}

}  // namespace

int StatsMain(int argc, char** argv) {
  CLI::App app(kDescription, "hammer stats");
  app.footer(kFooter);
  bool reducer = false, combine = false, csv = false, json = false, table = false, hdr = false;
  bool unsorted = false;
  std::string only_key, html_path, hdr_log_path, title = "hammer stats";
  size_t rows = 40;
  std::vector<std::string> inputs;
  app.add_flag("--reducer", reducer, "Hadoop Streaming reducer output (seed columns + ours)");
  app.add_flag("--combine", combine, "one mergeable partial line per key");
  app.add_flag("--csv", csv, "CSV with a header row");
  app.add_flag("--json", json, "JSON document");
  app.add_flag("--table", table, "human-readable table (ms)");
  app.add_flag("--hdr", hdr, "HdrHistogram percentile distribution (ms)");
  app.add_option("--html", html_path, "write the HTML report to FILE")->type_name("FILE");
  app.add_option("--hdr-log", hdr_log_path, "write an HdrHistogram interval log to FILE")
      ->type_name("FILE");
  std::string summary_json_path;
  app.add_option("--summary-json", summary_json_path,
                 "write the --json document to FILE ('-' for stdout), with the --threshold results")
      ->type_name("FILE");
  std::vector<std::string> thresholds;
  app.add_option("--threshold", thresholds,
                 "pass/fail rule on the merged figures, as hammer load's: 'p99<250ms', "
                 "'errors<1%', 'max<2s', 'p99<100ms@KEY' (repeatable; no rps: records and "
                 "partials carry no run time); any failure exits 3 (in a Hadoop task: counter "
                 "threshold/failed)")
      ->type_name("RULE");
  app.add_option("--title", title, "--html: the report's title")->capture_default_str();
  app.add_flag("--unsorted", unsorted,
               "input is not sorted by key: aggregate in memory (otherwise detected)");
  app.add_option("--key", only_key, "output this key only");
  size_t max_keys = stats::kDefaultMaxKeys;
  app.add_option("--max-keys", max_keys,
                 "report modes and --html: keep at most N key rows; past N, keys are grouped by "
                 "path template (/item/{id}) and the rest go to an (other) row (0: no limit; "
                 "never applies to --reducer and --combine)")
      ->capture_default_str();
  std::string max_key_memory{stats::kDefaultMaxKeyMemory};
  app.add_option("--max-key-memory", max_key_memory,
                 "report modes and --html: the key rows' statistics may take SIZE (e.g. 64MiB); "
                 "past it, keys are grouped by path template, then the quietest rows go to "
                 "(other) (0: no limit; never applies to --reducer and --combine)")
      ->type_name("SIZE")
      ->capture_default_str();
  std::vector<std::string> key_patterns;
  app.add_option("--key-pattern", key_patterns,
                 "REGEX=NAME (repeatable): a record's key matching REGEX is grouped as NAME (\\1 "
                 "refers to groups), as hammer load --key-pattern would have, e.g. "
                 "'/item/[0-9]+=/item/:id'");
  app.add_option("--rows", rows, "--table: keys to list before '... N more keys' (0: all)")
      ->capture_default_str();
  app.add_option("FILE", inputs, "inputs, '-' for stdin (default: stdin)");

  if (std::optional<int> exit = ParseCommandLine(app, argc, argv, "stats")) return *exit;
  int modes = reducer + combine + csv + json + table + hdr;
  bool files =
      app.count("--html") > 0 || app.count("--hdr-log") > 0 || app.count("--summary-json") > 0;
  if (modes > 1) {
    std::fprintf(stderr,
                 "hammer stats: choose one of --reducer, --combine, --csv, --json, --table, "
                 "--hdr\n");
    return kExitUsage;
  }

  stats::StatsJobOptions options;
  options.mode = reducer                 ? stats::StatsMode::kReducer
                 : combine               ? stats::StatsMode::kCombine
                 : csv                   ? stats::StatsMode::kCsv
                 : json                  ? stats::StatsMode::kJson
                 : table                 ? stats::StatsMode::kTable
                 : hdr                   ? stats::StatsMode::kHdr
                 : files                 ? stats::StatsMode::kNone
                 : isatty(STDOUT_FILENO) ? stats::StatsMode::kTable
                                         : stats::StatsMode::kReducer;
  options.order = unsorted ? stats::Reducer::Order::kUnsorted : stats::Reducer::Order::kDetect;
  options.select_attempts = !DetectWorkerIdentity().in_hadoop();
  if (app.count("--key") > 0) options.only_key = only_key;
  options.table_rows = rows;
  options.max_keys = max_keys;
  Result<uint64_t> max_key_bytes = ParseByteSize(max_key_memory);
  if (!max_key_bytes.ok()) {
    return Complain("stats", "--max-key-memory: " + max_key_bytes.status().message(), kExitUsage);
  }
  options.max_key_bytes = *max_key_bytes;
  Result<stats::KeyPatterns> patterns = stats::KeyPatterns::Create(key_patterns);
  if (!patterns.ok()) return Complain("stats", patterns.status().message(), kExitUsage);
  options.key_patterns = std::move(*patterns);
  if (app.count("--html") > 0) options.html_path = html_path;
  if (app.count("--hdr-log") > 0) options.hdr_log_path = hdr_log_path;
  options.html_title = title;
  if (app.count("--summary-json") > 0) {
    if (reducer || combine || csv) {
      return Complain("stats",
                      "--summary-json goes with --json, --table, --hdr or no mode (--reducer, "
                      "--combine and --csv keep no key rows)",
                      kExitUsage);
    }
    options.summary_json_path = summary_json_path;
  }
  if (combine && !thresholds.empty()) {
    return Complain("stats",
                    "--threshold judges a merge, and a combiner sees part of a run: judge its "
                    "output instead (hammer stats --threshold RULE < partials)",
                    kExitUsage);
  }
  for (const std::string& text : thresholds) {
    Result<stats::Threshold> t = stats::ParseThreshold(text, stats::ThresholdSubject::kMerged);
    if (!t.ok()) return Complain("stats", "--threshold: " + t.status().message(), kExitUsage);
    options.thresholds.push_back(std::move(*t));
  }

  // As hammer load does: a terminal waiting for input would otherwise look like a hang.
  const bool reads_stdin =
      inputs.empty() || std::find(inputs.begin(), inputs.end(), "-") != inputs.end();
  if (reads_stdin && isatty(STDIN_FILENO) != 0) {
    std::fputs(
        "hammer stats: reading records from the terminal, KEY<TAB>SECONDS per line (Ctrl-D "
        "ends); usually: hammer load ... | hammer stats, or hammer stats FILE... (--help)\n",
        stderr);
  }
  stats::StatsJob job(options);
  if (Status status = job.Open(inputs); !status.ok()) {
    std::fprintf(stderr, "hammer stats: %s\n", status.message().c_str());
    return kExitUsage;
  }
  Result<stats::StatsJobSummary> summary = job.Run(STDOUT_FILENO);
  if (!summary.ok()) {
    std::fprintf(stderr, "hammer stats: %s\n", summary.status().message().c_str());
    return 1;
  }
  std::fputs(summary->StderrText().c_str(), stderr);
  return JudgeThresholds(summary->thresholds, summary->abort_notes > 0);
}

}  // namespace hammer::cli
