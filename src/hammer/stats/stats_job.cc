#include "hammer/stats/stats_job.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "hammer/stats/line_reader.h"
#include "hammer/stats/partial.h"
#include "hammer/stats/record.h"
#include "hammer/stats/report_csv.h"
#include "hammer/stats/report_hdr.h"
#include "hammer/stats/report_json.h"
#include "hammer/stats/report_table.h"
#include "hammer/stats/report_tsv.h"

namespace hammer {
namespace {

constexpr size_t kFlushBytes = 256 * 1024;

// Buffered writes to a descriptor; the first error sticks and later writes are dropped.
class FdWriter {
 public:
  explicit FdWriter(int fd) : fd_(fd) {}
  std::string& buffer() { return buffer_; }
  void MaybeFlush() {
    if (buffer_.size() >= kFlushBytes) Flush();
  }
  void Flush() {
    size_t done = 0;
    while (status_.ok() && done < buffer_.size()) {
      ssize_t n = write(fd_, buffer_.data() + done, buffer_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) status_ = Status::FromErrno("write output", errno);
      if (n > 0) done += static_cast<size_t>(n);
    }
    buffer_.clear();
  }
  const Status& status() const { return status_; }

 private:
  int fd_;
  std::string buffer_;
  Status status_;
};

// Receives each finished key: writes it (streamed modes) or keeps it (reports).
class OutputSink : public KeySink {
 public:
  OutputSink(const StatsJobOptions& options, FdWriter* writer)
      : options_(options), writer_(writer) {}

  void OnKey(std::string_view key, const KeyStats& stats) override {
    if (options_.only_key && key != *options_.only_key) return;
    ++keys_;
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
    }
    writer_->MaybeFlush();
  }

  uint64_t keys() const { return keys_; }
  const std::vector<std::pair<std::string, KeyStats>>& rows() const { return rows_; }

 private:
  const StatsJobOptions& options_;
  FdWriter* writer_;
  uint64_t keys_ = 0;
  std::vector<std::pair<std::string, KeyStats>> rows_;
};

// Routes each input line: reducer output to the CSV converter (kCsv only), the rest to the
// reducer; keeps the position of the first malformed line.
class LineRouter : public LineHandler {
 public:
  LineRouter(const StatsJobOptions& options, Reducer* reducer, FdWriter* writer)
      : options_(options), reducer_(reducer), writer_(writer) {}

  void StartInput(const std::string& name) {
    input_ = &name;
    line_ = 0;
  }

  void OnLine(std::string_view line) override {
    ++line_;
    ++lines_;
    if (options_.mode == StatsMode::kCsv && LooksLikeReducerLine(line)) {
      if (!AppendCsvRowFromReducerLine(writer_->buffer(), line)) {
        NoteMalformed("reducer line with neither 12 nor 7 fields");
      }
      writer_->MaybeFlush();
      return;
    }
    uint64_t before = reducer_->malformed();
    reducer_->OnLine(line);
    if (reducer_->malformed() != before) NoteMalformed(reducer_->first_malformed_reason());
    NoteOrder();
  }

  void OnOverlongLine() override {
    ++line_;
    ++lines_;
    reducer_->OnOverlongLine();
    NoteMalformed(reducer_->first_malformed_reason());
  }

  uint64_t lines() const { return lines_; }
  uint64_t malformed() const { return malformed_; }
  const std::string& first_malformed() const { return first_malformed_; }
  const std::string& late_unsorted() const { return late_unsorted_; }

 private:
  std::string Position() const { return *input_ + ":" + std::to_string(line_); }

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
  FdWriter* writer_;
  const std::string* input_ = nullptr;
  uint64_t line_ = 0;
  uint64_t lines_ = 0;
  uint64_t malformed_ = 0;
  std::string first_malformed_;
  std::string late_unsorted_;
};

}  // namespace

std::string StatsJobSummary::StderrText() const {
  std::string text;
  if (malformed > 0) {
    text += "reporter:counter:stats,malformed," + std::to_string(malformed) + "\n";
    if (mode != StatsMode::kTable) {
      text += "hammer stats: skipped " + std::to_string(malformed) +
              (malformed == 1 ? " malformed line" : " malformed lines") + " (first at " +
              first_malformed + ")\n";
    }
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
  return Status::Ok();
}

Result<StatsJobSummary> StatsJob::Run(int out_fd) {
  FdWriter writer(out_fd);
  OutputSink sink(options_, &writer);
  Reducer::Options reducer_options;
  reducer_options.order = options_.order;
  Reducer reducer(reducer_options, &sink);
  LineRouter router(options_, &reducer, &writer);
  LineReader reader(kMaxLineBytes);

  if (options_.mode == StatsMode::kCsv) AppendCsvHeader(writer.buffer());
  for (const Input& input : inputs_) {
    router.StartInput(input.name);
    if (Status status = reader.ReadAll(input.fd, input.name, router); !status.ok()) return status;
    if (!writer.status().ok()) return writer.status();
  }
  reducer.Finish();

  StatsJobSummary summary;
  summary.mode = options_.mode;
  summary.lines = router.lines();
  summary.keys = sink.keys();
  summary.malformed = router.malformed();
  summary.first_malformed = router.first_malformed();
  summary.late_unsorted = router.late_unsorted();

  std::string& out = writer.buffer();
  switch (options_.mode) {
    case StatsMode::kJson:
      out += FormatJsonReport(sink.rows(), summary.malformed);
      break;
    case StatsMode::kTable:
      out += FormatKeyTable(sink.rows(), options_.table_rows);
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
      break;
  }
  writer.Flush();
  if (!writer.status().ok()) return writer.status();
  return summary;
}

}  // namespace hammer
