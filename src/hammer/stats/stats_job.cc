#include "hammer/stats/stats_job.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "hammer/base/hadoop_reporter.h"
#include "hammer/base/line_reader.h"
#include "hammer/base/output_file.h"
#include "hammer/base/write_all.h"
#include "hammer/stats/attempt_selector.h"
#include "hammer/stats/one_request_hint.h"
#include "hammer/stats/partial.h"
#include "hammer/stats/record.h"
#include "hammer/stats/report/csv.h"
#include "hammer/stats/report/hdr.h"
#include "hammer/stats/report/hdr_log.h"
#include "hammer/stats/report/html.h"
#include "hammer/stats/report/json.h"
#include "hammer/stats/report/table.h"
#include "hammer/stats/report/tsv.h"
#include "hammer/stats/timeline.h"
#include "hammer/stats/top_keys.h"

namespace hammer::stats {
namespace {

constexpr size_t kFlushBytes = 256 * 1024;
// Records are read in 1 MiB blocks: `hammer stats` must go faster than awk over large inputs.
constexpr size_t kReadBlockBytes = 1 << 20;

// Buffered writes to a descriptor; the first error sticks and later writes are dropped.
class FdWriter {
 public:
  explicit FdWriter(int fd) : fd_(fd) {}
  std::string& buffer() { return buffer_; }
  void MaybeFlush() {
    if (buffer_.size() >= kFlushBytes) Flush();
  }
  void Flush() {
    if (status_.ok()) status_ = WriteAll(fd_, buffer_, "cannot write to standard output");
    buffer_.clear();
  }
  const Status& status() const { return status_; }

 private:
  int fd_;
  std::string buffer_;
  Status status_;
};

// Formats and writes reducer and combiner lines on a thread of its own, in the order keys are
// handed in. Encoding a key's histogram (V2 + deflate) is about 40 % of a reducer's CPU time;
// on its own thread it overlaps the parsing of the next keys, so a reducer with a second core
// runs at the parser's speed. Memory stays bounded: at most kMaxQueuedBatches batches of
// kBatchKeys keys wait; Add() blocks beyond that.
// Threads: Add() and Finish() from one producer thread; the writer belongs to the encoder
// thread from construction until Finish() returns.
class LineEncoder {
 public:
  LineEncoder(StatsMode mode, FdWriter* writer)
      : mode_(mode), writer_(writer), thread_([this] { Loop(); }) {}
  ~LineEncoder() { Finish(); }
  LineEncoder(const LineEncoder&) = delete;
  LineEncoder& operator=(const LineEncoder&) = delete;

  void Add(std::string_view key, const KeyStats& stats) {
    batch_.emplace_back(std::string(key), stats);
    if (batch_.size() >= kBatchKeys) Hand();
  }

  // Writes everything handed in, then stops the thread. Idempotent.
  void Finish() {
    if (!thread_.joinable()) return;
    Hand();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }

  // True once a write failed (the writer's status says why after Finish()).
  bool failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  using Batch = std::vector<std::pair<std::string, KeyStats>>;
  static constexpr size_t kBatchKeys = 32;
  static constexpr size_t kMaxQueuedBatches = 4;

  void Hand() {
    if (batch_.empty()) return;
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [this] { return queue_.size() < kMaxQueuedBatches; });
    queue_.push_back(std::move(batch_));
    lock.unlock();
    ready_.notify_one();
    batch_ = Batch();
  }

  void Loop() {
    while (true) {
      Batch batch;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return done_ || !queue_.empty(); });
        if (queue_.empty()) break;
        batch = std::move(queue_.front());
        queue_.pop_front();
      }
      space_.notify_one();
      for (const auto& [key, stats] : batch) {
        if (mode_ == StatsMode::kReducer) {
          AppendReducerLine(writer_->buffer(), key, stats);
        } else {
          AppendPartialRecord(writer_->buffer(), key, stats);
        }
        writer_->MaybeFlush();
      }
      if (!writer_->status().ok()) failed_.store(true, std::memory_order_relaxed);
    }
  }

  const StatsMode mode_;
  FdWriter* writer_;
  Batch batch_;  // producer side, not yet handed over
  std::mutex mutex_;
  std::condition_variable ready_;  // a batch is queued, or done_
  std::condition_variable space_;  // the queue has room
  std::deque<Batch> queue_;
  bool done_ = false;
  std::atomic<bool> failed_{false};
  std::thread thread_;  // last: starts after every other member exists
};

// What thresholds judge: every key merged, and the keys they name, gathered as keys are written.
// Memory is bounded by the number of thresholds, whatever the number of keys.
class ThresholdTally {
 public:
  explicit ThresholdTally(const std::vector<Threshold>& thresholds) : active_(!thresholds.empty()) {
    for (const Threshold& t : thresholds) {
      if (!t.key.empty() && Find(t.key) == nullptr) named_.emplace_back(t.key, KeyStats());
    }
  }

  bool active() const { return active_; }

  void Add(std::string_view key, const KeyStats& stats) {
    if (!active_) return;
    if (total_.CanMerge(stats)) total_.Merge(stats);  // only hostile input cannot
    if (KeyStats* named = Find(key); named != nullptr && named->CanMerge(stats)) {
      named->Merge(stats);
    }
  }

  std::vector<ThresholdResult> Evaluate(const std::vector<Threshold>& thresholds) const {
    // A named key that never came is left out: its thresholds say "no requests with key".
    std::vector<std::pair<std::string, KeyStats>> keys;
    for (const auto& [key, stats] : named_) {
      if (stats.total() > 0) keys.emplace_back(key, stats);
    }
    return EvaluateThresholds(thresholds, ThresholdInputs{total_, /*seconds=*/0, keys});
  }

 private:
  KeyStats* Find(std::string_view key) {
    for (auto& [name, stats] : named_) {
      if (name == key) return &stats;
    }
    return nullptr;
  }

  const bool active_;
  KeyStats total_;
  std::vector<std::pair<std::string, KeyStats>> named_;
};

// Receives each finished key: writes it (streamed modes) or keeps it (reports).
class OutputSink : public KeySink {
 public:
  // `report_keys` (optional) also gets every key written.
  // `encode_async`: reducer and combiner lines are written by a LineEncoder thread (nothing
  // else may use the writer until Finish()).
  OutputSink(const StatsJobOptions& options, FdWriter* writer, TopKeys* report_keys,
             ThresholdTally* tally, bool encode_async)
      : options_(options), writer_(writer), report_keys_(report_keys), tally_(tally) {
    if (encode_async) encoder_ = std::make_unique<LineEncoder>(options.mode, writer);
  }

  void OnKey(std::string_view key, const KeyStats& stats) override {
    if (options_.only_key && key != *options_.only_key) return;
    ++keys_;
    if (key != kOtherKey) {
      ++keyed_rows_;
      if (stats.total() == 1) ++one_request_rows_;
    }
    if (report_keys_ != nullptr) report_keys_->Add(key, stats);
    tally_->Add(key, stats);
    if (encoder_ != nullptr) {
      encoder_->Add(key, stats);
      return;
    }
    std::string& out = writer_->buffer();
    switch (options_.mode) {
      case StatsMode::kReducer:
        AppendReducerLine(out, key, stats);
        break;
      case StatsMode::kCombine:
        AppendPartialRecord(out, key, stats);
        break;
      case StatsMode::kCsv:
        AppendCsvRow(out, key, stats);
        break;
      case StatsMode::kJson:
      case StatsMode::kTable:
      case StatsMode::kHdr:
        rows_.emplace_back(std::string(key), stats);
        return;
      case StatsMode::kNone:
        if (options_.summary_json_path) rows_.emplace_back(std::string(key), stats);
        return;
    }
    writer_->MaybeFlush();
  }

  // Waits until every key is written; the writer is the caller's again.
  void Finish() {
    if (encoder_ != nullptr) encoder_->Finish();
  }
  // True when writing has failed so far (safe while the encoder runs).
  bool write_failed() const {
    return encoder_ != nullptr ? encoder_->failed() : !writer_->status().ok();
  }

  uint64_t keys() const { return keys_; }
  // OneRequestRowsHint of the keys written.
  std::string OneRequestHint() const { return OneRequestRowsHint(keyed_rows_, one_request_rows_); }
  const std::vector<std::pair<std::string, KeyStats>>& rows() const { return rows_; }

 private:
  const StatsJobOptions& options_;
  FdWriter* writer_;
  TopKeys* report_keys_;
  ThresholdTally* tally_;
  uint64_t keys_ = 0;
  uint64_t keyed_rows_ = 0;  // keys besides "(other)"
  uint64_t one_request_rows_ = 0;
  std::vector<std::pair<std::string, KeyStats>> rows_;
  std::unique_ptr<LineEncoder> encoder_;
};

// Routes each input line: reducer output to the CSV converter (kCsv only), the rest to the
// reducer; keeps the position of the first malformed line.
class LineRouter : public LineHandler {
 public:
  LineRouter(const StatsJobOptions& options, Reducer* reducer, AttemptSelector* attempts,
             ThresholdTally* tally, FdWriter* writer)
      : options_(options), reducer_(reducer), attempts_(attempts), tally_(tally), writer_(writer) {}

  void StartInput(const std::string& name) {
    input_ = &name;
    line_ = 0;
  }

  void OnLine(std::string_view line) override {
    ++line_;
    ++lines_;
    if (std::string_view text; ParseAbortNote(line, &text)) {
      if (abort_notes_++ == 0) first_abort_note_ = text;
      // --combine passes notes on, so that the reader of its output sees them too.
      if (options_.mode == StatsMode::kCombine) AppendAbortNote(passed_notes_, text);
      return;
    }
    if (options_.mode == StatsMode::kCsv && LooksLikeReducerLine(line)) {
      if (!AppendCsvRowFromReducerLine(writer_->buffer(), line)) {
        NoteMalformed("reducer line with neither 12 nor 7 fields");
      } else if (tally_->active() && IsReducerLine(line)) {
        TallyReducerLine(line);
      }
      writer_->MaybeFlush();
      return;
    }
    std::string converted;  // a reducer line, read back as the partial it is
    if (IsReducerLine(line)) {
      Result<std::string> partial = ReducerLineAsPartial(line);
      if (!partial.ok()) {
        NoteMalformed(partial.status().message());
        return;
      }
      converted = std::move(*partial);
      line = converted;
    }
    if (options_.select_attempts && HoldsOrigin(line)) {
      ParsedRecord record = ParseRecordLine(line);
      if (record.kind == RecordKind::kPartial && record.origin) {
        if (Status held = attempts_->Add(line, record); !held.ok()) {
          NoteMalformed(held.message());
        } else if (options_.mode != StatsMode::kCombine && !holding_every_key_) {
          // The kept attempts reach the reducer after the input: their keys must still be open.
          reducer_->HoldEveryKey();
          holding_every_key_ = true;
        }
        return;
      }
    }
    uint64_t before = reducer_->malformed();
    reducer_->OnLine(line);
    if (reducer_->malformed() != before) NoteMalformed(reducer_->first_malformed_reason());
    NoteOrder();
  }

  // Reducer's fast path: its lines are never malformed and never change the key order.
  size_t OnLines(std::string_view lines) override {
    if (options_.mode == StatsMode::kCsv) return 0;
    uint64_t before = reducer_->lines();
    size_t taken = reducer_->OnLines(lines);
    line_ += reducer_->lines() - before;
    lines_ += reducer_->lines() - before;
    return taken;
  }

  void OnOverlongLine() override {
    ++line_;
    ++lines_;
    reducer_->OnOverlongLine();
    NoteMalformed(reducer_->first_malformed_reason());
  }

  uint64_t lines() const { return lines_; }
  uint64_t abort_notes() const { return abort_notes_; }
  const std::string& first_abort_note() const { return first_abort_note_; }
  const std::string& passed_notes() const { return passed_notes_; }
  uint64_t malformed() const { return malformed_; }
  const std::string& first_malformed() const { return first_malformed_; }
  const std::string& late_unsorted() const { return late_unsorted_; }

 private:
  std::string Position() const { return *input_ + ":" + std::to_string(line_); }

  // --csv converts reducer lines as they come, without the reducer: thresholds still count them.
  void TallyReducerLine(std::string_view line) {
    Result<std::string> partial = ReducerLineAsPartial(line);
    if (!partial.ok()) return;
    ParsedRecord record = ParseRecordLine(*partial);
    KeyStats stats;
    if (record.kind == RecordKind::kPartial && ParsePartialFields(record.partial, &stats).ok()) {
      tally_->Add(record.key, stats);
    }
  }

  // A partial with its origin (#ha1): it goes to the AttemptSelector, not to the reducer.
  static bool HoldsOrigin(std::string_view line) {
    const size_t tab = line.find('\t');
    return tab != std::string_view::npos &&
           line.substr(tab + 1).starts_with(std::string(kAttemptPartialTag) + " ");
  }

  // Reducer reasons: only the first is kept, and it is the first of the whole input whenever
  // first_malformed_ is still empty here.
  void NoteMalformed(const std::string& reason) {
    if (malformed_++ == 0) first_malformed_ = Position() + ": " + reason;
  }

  void NoteOrder() {
    if (late_unsorted_.empty() && reducer_->late_unsorted_line() != 0) late_unsorted_ = Position();
  }

  const StatsJobOptions& options_;
  Reducer* reducer_;
  AttemptSelector* attempts_;
  ThresholdTally* tally_;
  FdWriter* writer_;
  bool holding_every_key_ = false;
  const std::string* input_ = nullptr;
  uint64_t line_ = 0;
  uint64_t lines_ = 0;
  uint64_t malformed_ = 0;
  std::string first_malformed_;
  std::string late_unsorted_;
  uint64_t abort_notes_ = 0;
  std::string first_abort_note_;
  std::string passed_notes_;  // --combine: the notes, written after the partials
};

}  // namespace

std::string StatsJobSummary::StderrText() const {
  std::string text;
  if (abort_notes > 0) {
    text += "hammer stats: the run was aborted (--abort-on-fail; " + std::to_string(abort_notes) +
            (abort_notes == 1 ? " note" : " notes") + " read): " + first_abort_note + "\n";
  }
  if (malformed > 0) {
    text += HadoopReporter::CounterLine("stats", "malformed", malformed);
    if (mode != StatsMode::kTable) {
      text += "hammer stats: skipped " + std::to_string(malformed) +
              (malformed == 1 ? " malformed line" : " malformed lines") + " (first at " +
              first_malformed + ")\n";
    }
  }
  if (attempts.attempts_dropped > 0) {
    text += HadoopReporter::CounterLine("stats", "attempts_dropped", attempts.attempts_dropped);
    text += "hammer stats: kept one attempt of each of " + std::to_string(attempts.tasks) +
            (attempts.tasks == 1 ? " task" : " tasks") + ", dropped " +
            std::to_string(attempts.attempts_dropped) +
            (attempts.attempts_dropped == 1 ? " attempt" : " attempts") + " (" +
            std::to_string(attempts.lines_dropped) + " partial lines); " + attempts.first_drop +
            "\n";
  }
  if (attempts.incomplete_kept > 0) {
    text += "hammer stats: " + std::to_string(attempts.incomplete_kept) +
            (attempts.incomplete_kept == 1 ? " task has" : " tasks have") +
            " no attempt whose every partial line was read (an output cut short?): the last "
            "attempt was kept\n";
  }
  if (attempts.duplicate_lines > 0) {
    text += "hammer stats: " + std::to_string(attempts.duplicate_lines) +
            " partial lines were read twice (the same output given twice?) and counted once\n";
  }
  if (key_folding.folded && mode != StatsMode::kTable) {  // the table says it itself
    text += "hammer stats: " + key_folding.Describe() + "\n";
  }
  if (!one_request_hint.empty() && mode != StatsMode::kTable) {  // as the folding sentence
    text += "hammer stats: " + one_request_hint + "\n";
  }
  if (hdr_log_written && timestamped == 0) {
    text += "hammer stats: no record carries a timestamp; the HdrHistogram log has no intervals\n";
  }
  if (!late_unsorted.empty()) {
    text += "hammer stats: input stopped being sorted by key at " + late_unsorted +
            "; keys written before may appear twice (use --unsorted for unsorted input)\n";
  }
  return text;
}

StatsJob::StatsJob(StatsJobOptions options) : options_(std::move(options)) {}

StatsJob::~StatsJob() {
  for (const Input& input : inputs_) {
    if (input.owned) close(input.fd);
  }
}

Status StatsJob::Open(const std::vector<std::string>& inputs) {
  if (inputs.empty()) inputs_.push_back({"<stdin>", STDIN_FILENO, false});
  for (const std::string& path : inputs) {
    if (path == "-") {
      inputs_.push_back({"<stdin>", STDIN_FILENO, false});
      continue;
    }
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::FromErrno("open " + path, errno);
    inputs_.push_back({path, fd, true});
  }
  auto create = [](std::string_view flag, const std::optional<std::string>& path,
                   std::optional<OutputFile>* file) {
    if (!path) return Status::Ok();
    Result<OutputFile> opened = OutputFile::Open(flag, *path);  // "-": standard output
    if (!opened.ok()) return opened.status();
    file->emplace(std::move(*opened));
    return Status::Ok();
  };
  if (Status status = create("--html", options_.html_path, &html_); !status.ok()) {
    return status;
  }
  if (Status status = create("--hdr-log", options_.hdr_log_path, &hdr_log_); !status.ok()) {
    return status;
  }
  return create("--summary-json", options_.summary_json_path, &summary_json_);
}

Result<StatsJobSummary> StatsJob::Run(int out_fd) {
  FdWriter writer(out_fd);
  const bool files = options_.html_path || options_.hdr_log_path;
  TopKeys report_keys(kHtmlMaxKeys);
  Timeline timeline;
  // Reducer and combiner lines are encoded on a second thread when there is a second core.
  const bool encode_async =
      (options_.mode == StatsMode::kReducer || options_.mode == StatsMode::kCombine) &&
      std::thread::hardware_concurrency() > 1;
  ThresholdTally tally(options_.thresholds);
  OutputSink sink(options_, &writer, options_.html_path ? &report_keys : nullptr, &tally,
                  encode_async);
  Reducer::Options reducer_options;
  reducer_options.order = options_.order;
  reducer_options.timeline_key = options_.only_key;
  reducer_options.key_patterns = options_.key_patterns;
  const bool exact_lines =
      options_.mode == StatsMode::kReducer || options_.mode == StatsMode::kCombine;
  if (!exact_lines && !options_.only_key) {
    reducer_options.max_keys = options_.max_keys;
    reducer_options.max_key_bytes = options_.max_key_bytes;
  }
  Reducer reducer(reducer_options, &sink, files ? &timeline : nullptr);
  AttemptSelector attempts;
  LineRouter router(options_, &reducer, &attempts, &tally, &writer);
  LineReader::Options reader_options;
  reader_options.max_line_bytes = kMaxLineBytes;  // longer lines go to OnOverlongLine
  reader_options.block_bytes = kReadBlockBytes;

  if (options_.mode == StatsMode::kCsv) AppendCsvHeader(writer.buffer());
  for (const Input& input : inputs_) {
    router.StartInput(input.name);
    LineReader reader = LineReader::FromFd(input.fd, /*owns_fd=*/false, input.name, reader_options);
    if (Status status = reader.ReadAll(router); !status.ok()) return status;
    if (sink.write_failed()) break;
  }
  // One attempt of each task: --combine passes its lines on as they are (a later reader may
  // meet other attempts of the same tasks), every other mode merges them.
  std::string kept_lines;
  attempts.Finish([&](std::string_view line) {
    if (options_.mode == StatsMode::kCombine) {
      kept_lines.append(line).push_back('\n');
    } else {
      reducer.OnLine(line);
    }
  });
  reducer.Finish();
  sink.Finish();
  writer.buffer() += kept_lines;
  writer.buffer() += router.passed_notes();
  if (!writer.status().ok()) return writer.status();

  StatsJobSummary summary;
  summary.mode = options_.mode;
  summary.lines = router.lines();
  summary.keys = sink.keys();
  summary.malformed = router.malformed();
  summary.first_malformed = router.first_malformed();
  summary.abort_notes = router.abort_notes();
  summary.first_abort_note = router.first_abort_note();
  summary.late_unsorted = router.late_unsorted();
  summary.timestamped = timeline.requests();
  summary.hdr_log_written = options_.hdr_log_path.has_value();
  summary.key_folding = reducer.key_folding();
  summary.attempts = attempts.summary();
  // Exact lines (--reducer, --combine) are per key by contract: no --max-keys to suggest.
  if (!exact_lines && !summary.key_folding.folded) summary.one_request_hint = sink.OneRequestHint();
  summary.thresholds = tally.Evaluate(options_.thresholds);
  if (summary.key_folding.folded) {
    for (size_t i = 0; i < summary.thresholds.size(); ++i) {
      ThresholdResult& result = summary.thresholds[i];
      if (!options_.thresholds[i].key.empty() && result.actual.empty()) {
        result.message += " (" + summary.key_folding.Describe() + "; --max-keys 0 keeps them)";
      }
    }
  }

  std::string& out = writer.buffer();
  switch (options_.mode) {
    case StatsMode::kJson:
      out += FormatJsonReport(sink.rows(), summary.malformed, summary.thresholds);
      break;
    case StatsMode::kTable:
      out += FormatKeyTable(sink.rows(), options_.table_rows);
      if (summary.key_folding.folded) out += summary.key_folding.Describe() + "\n";
      if (!summary.one_request_hint.empty()) out += summary.one_request_hint + "\n";
      if (summary.malformed > 0) {
        out += std::to_string(summary.malformed) +
               (summary.malformed == 1 ? " malformed input line" : " malformed input lines") +
               " skipped (first at " + summary.first_malformed + ")\n";
      }
      break;
    case StatsMode::kHdr:
      out += FormatHdrReport(sink.rows());
      break;
    case StatsMode::kReducer:
    case StatsMode::kCombine:
    case StatsMode::kCsv:
    case StatsMode::kNone:
      break;
  }
  writer.Flush();
  if (!writer.status().ok()) return writer.status();
  if (Status status = WriteFiles(summary, report_keys, timeline, sink.rows()); !status.ok()) {
    return status;
  }
  return summary;
}

Status StatsJob::WriteFiles(const StatsJobSummary& summary, TopKeys& keys, const Timeline& timeline,
                            const std::vector<std::pair<std::string, KeyStats>>& rows) {
  if (summary_json_) {
    Status written =
        summary_json_->Write(FormatJsonReport(rows, summary.malformed, summary.thresholds));
    if (!written.ok()) return written;
    if (Status committed = summary_json_->Commit(); !committed.ok()) return committed;
  }
  if (hdr_log_) {
    if (Status written = hdr_log_->Write(FormatHdrIntervalLog(timeline)); !written.ok()) {
      return written;
    }
    if (Status committed = hdr_log_->Commit(); !committed.ok()) return committed;
  }
  if (!html_) return Status::Ok();
  HtmlReportInput input;
  input.title = options_.html_title;
  std::string names;
  for (const Input& in : inputs_)
    names += (names.empty() ? "" : ", ") + in.name;
  input.metadata.emplace_back("input", names);
  input.metadata.emplace_back(
      "lines", std::to_string(summary.lines) + " read, " + std::to_string(summary.malformed) +
                   " malformed" +
                   (summary.malformed > 0 ? " (first at " + summary.first_malformed + ")" : ""));
  if (options_.only_key) input.metadata.emplace_back("key", *options_.only_key);
  char generated[32];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  input.metadata.emplace_back("generated",
                              std::string(generated, std::strftime(generated, sizeof(generated),
                                                                   "%Y-%m-%d %H:%M:%S UTC", &tm)));
  if (!summary.late_unsorted.empty()) {
    input.notes.push_back("The input stopped being sorted by key at " + summary.late_unsorted +
                          "; a key may be listed twice (use --unsorted).");
  }
  if (std::string note = KeyRowsNote(summary.key_folding, summary.one_request_hint);
      !note.empty()) {
    input.notes.push_back(std::move(note));
  }
  if (timeline.empty()) {
    input.notes.push_back(
        "No record carries a timestamp (KEY<TAB>SECONDS<TAB>EPOCH_MS), so there are no charts "
        "over time.");
  }
  input.thresholds = summary.thresholds;
  input.total = keys.total();
  input.unlisted_keys = keys.dropped();
  input.keys = keys.TakeSorted();
  input.timeline = &timeline;
  if (Status written = html_->Write(RenderHtmlReport(input)); !written.ok()) return written;
  return html_->Commit();
}

}  // namespace hammer::stats
