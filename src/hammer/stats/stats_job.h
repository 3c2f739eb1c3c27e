// StatsJob: everything `hammer stats` does, so that its CLI only parses flags. Reads record
// lines (record.h) from files or stdin, aggregates them with a Reducer, and writes one of the
// outputs:
//   kReducer  report/tsv.h lines, one per key, streamed (the Hadoop Streaming reducer)
//   kCombine  partial.h lines, one per key, streamed (a combiner, or to merge runs later)
//   kCsv      report/csv.h, streamed; reducer-output lines in the input are converted as they come
//   kJson     report/json.h, kTable report/table.h, kHdr report/hdr.h: written at the end
//   kNone     nothing on out_fd (only the files below)
// and, alongside any mode, files written at the end:
//   html_path     report/html.h: the busiest kHtmlMaxKeys keys, the total of all, and charts
//                 over time when records carry timestamps (record.h);
//   hdr_log_path  report/hdr_log.h: the timestamped records' HdrHistogram interval log;
//   summary_json_path  the kJson document (not with kReducer, kCombine or kCsv, which keep no
//                 key rows).
// Reducer lines (report/tsv.h) are read back as the partials they are: a job's part files
// merge like its partials (in kCsv they are converted line by line, as the seed's were).
//
// Thresholds (threshold.h, ThresholdSubject::kMerged) are judged once the input has ended, on
// the exact merge of every key written (only_key alone with it), and on the keys they name; not
// with kCombine, whose lines are part of a run. Their results are in the summary, the kJson
// document and the HTML report.
// Every mode but kReducer and kCombine (whose lines feed another stage and stay exact per key)
// keeps at most max_keys key rows (reducer.h, key_table.h): past that, keys are grouped by
// path template and then into "(other)", so memory does not grow with the number of distinct
// keys; and rows of at most max_key_bytes, folded and then shed to "(other)" past it, so
// memory does not grow with the number of records either. The summary says what was folded.
// Usage: Open(inputs), then Run(out_fd) once. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hammer/base/output_file.h"
#include "hammer/base/status.h"
#include "hammer/stats/attempt_selector.h"
#include "hammer/stats/key_patterns.h"
#include "hammer/stats/reducer.h"
#include "hammer/stats/threshold.h"

namespace hammer::stats {

class TopKeys;
class Timeline;

enum class StatsMode : uint8_t { kReducer, kCombine, kCsv, kJson, kTable, kHdr, kNone };

// Keys the HTML report lists at most (all are in its TOTAL).
inline constexpr size_t kHtmlMaxKeys = 1000;
// --max-keys' default: rows a report keeps before grouping keys by template.
inline constexpr size_t kDefaultMaxKeys = 10000;

struct StatsJobOptions {
  StatsMode mode = StatsMode::kReducer;
  Reducer::Order order = Reducer::Order::kDetect;
  std::optional<std::string> only_key;  // report this key alone
  size_t table_rows = 40;               // kTable: keys listed before "… N more keys" (0: all)
  std::optional<std::string> html_path;
  std::string html_title = "hammer stats";
  std::optional<std::string> hdr_log_path;
  // Key rows of the report modes (see above); 0: every key exact. Not applied with only_key.
  size_t max_keys = kDefaultMaxKeys;
  // --max-key-memory: the bytes those rows may take (KeyTable's max_bytes); 0: no bound.
  uint64_t max_key_bytes = kDefaultMaxKeyBytes;
  // --key-pattern: records' keys are renamed before they are grouped, as `hammer load
  // --key-pattern` would have named them (key_patterns.h); only_key names a renamed key.
  KeyPatterns key_patterns;
  // Partials that name their task and attempt (#ha1) keep one attempt of each task
  // (AttemptSelector; they are held until the input ends). False inside a Hadoop task, where
  // the shuffle only ever carries the output of one attempt of each map task: they are then
  // merged as they come, and a reducer streams as over #hp1 partials.
  bool select_attempts = true;
  // --threshold, judged as described above (kMerged rules: no rps).
  std::vector<Threshold> thresholds;
  std::optional<std::string> summary_json_path;  // --summary-json
};

struct StatsJobSummary {
  StatsMode mode = StatsMode::kReducer;
  uint64_t lines = 0;
  uint64_t keys = 0;  // written
  uint64_t malformed = 0;
  std::string first_malformed;  // "<input>:<line>: <reason>"
  std::string late_unsorted;    // "<input>:<line>" when order broke after the detection window
  uint64_t timestamped = 0;     // records with a timestamp (counted when a file output wants them)
  bool hdr_log_written = false;
  KeyFolding key_folding;  // what --max-keys or --max-key-memory folded (folded == false: nothing)
  AttemptSelector::Summary attempts;  // partials of retried tasks (#ha1) left out
  // OneRequestRowsHint of the rows when nothing was folded (report modes and --html), else
  // empty: printed after the table (--table), else on stderr, and a note in the HTML report.
  std::string one_request_hint;
  std::vector<ThresholdResult> thresholds;  // one per StatsJobOptions::thresholds, in order
  // Abort notes read (record.h: a `hammer load --abort-on-fail` run was aborted), and the
  // first one's text.
  uint64_t abort_notes = 0;
  std::string first_abort_note;

  // What to print on stderr at the end: the Hadoop counter "reporter:counter:stats,malformed,N"
  // and one human line per problem. Empty when there is nothing to say.
  std::string StderrText() const;
};

class StatsJob {
 public:
  explicit StatsJob(StatsJobOptions options);
  ~StatsJob();
  StatsJob(const StatsJob&) = delete;
  StatsJob& operator=(const StatsJob&) = delete;

  // Opens every input, and creates the html/hdr-log files (OutputFile: they appear at their path
  // only once Run has written them whole), now, so that a wrong path is reported before any
  // output is written. "-" (or no input at all) is stdin. Errors: "open <path>: <strerror>".
  Status Open(const std::vector<std::string>& inputs);

  // Reads the inputs in order and writes the output to `out_fd`. Errors: a failed read or write.
  Result<StatsJobSummary> Run(int out_fd);

 private:
  struct Input {
    std::string name;
    int fd = -1;
    bool owned = false;
  };
  Status WriteFiles(const StatsJobSummary& summary, TopKeys& keys, const Timeline& timeline,
                    const std::vector<std::pair<std::string, KeyStats>>& rows);

  StatsJobOptions options_;
  std::vector<Input> inputs_;
  std::optional<OutputFile> html_;          // --html: committed once written whole
  std::optional<OutputFile> hdr_log_;       // --hdr-log: likewise
  std::optional<OutputFile> summary_json_;  // --summary-json: likewise
};

}  // namespace hammer::stats
