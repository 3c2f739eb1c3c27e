#include "hammer/load/load_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <ctime>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <system_error>
#include <thread>
#include <vector>

#include "hammer/base/side_task.h"
#include "hammer/stats/counter_exposition.h"
#include "hammer/stats/one_request_hint.h"
#include "hammer/stats/report/html.h"
#include "hammer/stats/report/json.h"
#include "hammer/stats/report/json_writer.h"
#include "hammer/stats/report/table.h"

namespace hammer::load {

namespace {

std::string Ms(int64_t micros) {
  return fmt::format("{:.2f}ms", micros / 1000.0);
}

using KeyRows = std::span<const std::pair<std::string, stats::KeyStats>>;

// Rows from this many up are printed on this thread and written on a second one meanwhile: at
// 10,000 rows (3.5 MB) the writes into fresh pages of the page cache took 1.0-1.6 ms, under the
// printing they then overlap (about 3.4 ms in a run); a thread costs about 50 µs to start.
constexpr size_t kRowsForTwoThreads = 2000;
// The text is handed on every this many rows (about 45 KB): under malloc's 128 KiB threshold
// for a mapping of its own, so the few buffers come from heap memory already touched (at
// 10,000 rows the JSON's page faults fell from 362 with 512 rows a piece to 75).
constexpr size_t kRowsPerPiece = 128;
// Rows from this many up are printed on two threads: the last half on a second one while this
// one prints the first (its pieces are handed on after them). The printing is the largest part
// of what a run does after its last response (10,000 rows sent once: about 3 ms of 10); on the
// two cores of the machines hammer was measured on, writing the summary took 4.8 ms on one
// printing thread and 3.9 ms on two (medians of 20 alternated runs).
constexpr size_t kRowsForTwoPrinters = 4000;
// At most this many rows printed ahead, held until the rows before them are written: about
// 6 MB of text (about 240 bytes a row), not half of a --max-keys of millions.
constexpr size_t kMaxRowsPrintedAhead = 25'000;

// Writes pieces of text on a thread of its own, in the order they are handed to it, while the
// caller prints the next ones. A few buffers go back and forth between the two, so the text is
// printed into memory already touched rather than into megabytes of fresh pages (each 4 KiB a
// page fault), and at most kBuffers pieces wait for a slow output. The pieces waiting when the
// thread comes back for more are written together (one writev).
class PieceWriter {
 public:
  explicit PieceWriter(const OutputPieces& write) : write_(write) {}
  PieceWriter(const PieceWriter&) = delete;
  PieceWriter& operator=(const PieceWriter&) = delete;
  ~PieceWriter() { (void)Finish(); }

  // False when no thread could be had: the caller writes the pieces itself.
  bool Start() {
    try {
      thread_ = std::thread([this] { Run(); });
      return true;
    } catch (const std::system_error&) {
      return false;
    }
  }

  // Hands `piece` on and leaves in it an empty buffer to fill next, waiting while kBuffers
  // are handed on and not yet written. False once a write has failed: the rest need not be
  // printed (Finish says why).
  bool HandOn(std::string& piece) {
    std::unique_lock<std::mutex> lock(mutex_);
    queued_.push_back(std::move(piece));
    changed_.notify_all();
    if (free_.empty() && buffers_ < kBuffers) {
      ++buffers_;
      piece = std::string();
      return !failed_;
    }
    changed_.wait(lock, [this] { return !free_.empty(); });
    piece = std::move(free_.back());
    free_.pop_back();
    return !failed_;
  }

  // Hands on pieces printed elsewhere (PrintLaterRows'), all at once: they are already made, and
  // go out together.
  void HandOnAll(std::vector<std::string> more) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::string& piece : more)
      queued_.push_back(std::move(piece));
    changed_.notify_all();
  }

  // Writes what was handed on and ends the thread: the first error of `write`, if any (the
  // pieces after it are not written).
  Status Finish() {
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        done_ = true;
      }
      changed_.notify_all();
      thread_.join();
    }
    return status_;
  }

 private:
  // The buffers in use at a time: the one being filled counts.
  static constexpr size_t kBuffers = 8;

  void Run() {
    Status status;
    std::vector<std::string> taken;
    std::vector<std::string_view> pieces;
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      changed_.wait(lock, [this] { return !queued_.empty() || done_; });
      if (queued_.empty()) break;
      for (std::string& piece : queued_)
        taken.push_back(std::move(piece));
      queued_.clear();
      lock.unlock();
      pieces.assign(taken.begin(), taken.end());
      if (status.ok()) status = write_(pieces);
      lock.lock();
      failed_ = !status.ok();
      for (std::string& piece : taken) {
        piece.clear();
        free_.push_back(std::move(piece));
      }
      taken.clear();
      changed_.notify_all();
    }
    status_ = status;  // read after the join
  }

  const OutputPieces& write_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> queued_;  // handed on, not yet written
  std::vector<std::string> free_;   // written, to be filled again
  size_t buffers_ = 1;              // the caller's first
  bool done_ = false;
  bool failed_ = false;  // a write failed (the thread's status, seen under the lock)
  Status status_;
  std::thread thread_;
};

// Asks for the key of the row kKeysAhead rows after row `i` while row `i` is printed: the keys'
// bytes are spread over the heap (each allocated by the worker that first saw it) and cold, and
// their first reads stalled the printing (10,000 rows written in 3.9 ms without, 3.7 ms with:
// medians of 15 alternated runs).
void PrefetchKeyAhead(KeyRows rows, size_t i) {
  constexpr size_t kKeysAhead = 8;
  if (i + kKeysAhead < rows.size()) __builtin_prefetch(rows[i + kKeysAhead].first.data());
}

// Prints `rows` through `writer` (its text in `out`) and hands the text on every kRowsPerPiece
// rows, and after the last row when `end_piece`; stops when `hand_on` returns false (a write
// failed) and says so.
template <typename HandOn>
bool PrintRows(const stats::KeyRowWriter& row_writer, stats::JsonWriter& writer, std::string& out,
               KeyRows rows, bool end_piece, HandOn hand_on) {
  for (size_t i = 0; i < rows.size(); ++i) {
    PrefetchKeyAhead(rows, i);
    row_writer.Write(writer, rows[i].first, rows[i].second);
    if ((i + 1) % kRowsPerPiece != 0 && !(end_piece && i + 1 == rows.size())) continue;
    writer.Finish();  // `out` holds the text so far
    if (!hand_on(out)) return false;
  }
  return true;
}

// The rows as the "keys" array's writer would print them after other rows of it (each from a
// separator: a comma, a newline, the indentation), in pieces of kRowsPerPiece rows.
std::vector<std::string> PrintLaterRows(const stats::KeyRowWriter& row_writer, KeyRows rows) {
  std::vector<std::string> pieces;
  std::string out;
  stats::JsonWriter writer(&out, /*pretty=*/true, /*depth=*/2, /*continuing=*/true);
  writer.OneLineFrom(2);
  PrintRows(row_writer, writer, out, rows, /*end_piece=*/true, [&pieces](std::string& text) {
    pieces.push_back(std::move(text));
    // The next piece's room at once, about as large as this one: grown from empty, a piece of
    // 128 rows (about 31 KB) was allocated and zero-filled four times (about 4, 8, 17 and
    // 35 KB) and copied three. 10,000 rows: this thread's half printed in 1.61 -> 1.49 ms
    // (medians of 20 alternated runs).
    text.clear();
    text.reserve(pieces.back().size() + pieces.back().size() / 8);
    return true;
  });
  return pieces;
}

// Writes the rows into the "keys" array `writer` has open in `out` (in the summary object,
// pretty), handing the text on every kRowsPerPiece rows: to `write` directly, or for many
// rows to a PieceWriter that writes it while the next rows are printed (and for more, the last
// rows printed meanwhile on a SideTask, PrintLaterRows).
Status WriteKeyRows(stats::JsonWriter& writer, std::string& out, KeyRows rows,
                    const OutputPieces& write) {
  const stats::KeyRowWriter row_writer(/*pretty=*/true, /*depth=*/2, /*one_line_from=*/2);
  PieceWriter pieces(write);
  const bool two_threads = rows.size() >= kRowsForTwoThreads && pieces.Start();
  std::vector<std::string> printed;  // the last rows' text, once the printer has run
  std::optional<SideTask> printer;
  size_t here = rows.size();  // the rows printed on this thread, from the first
  if (two_threads && rows.size() >= kRowsForTwoPrinters) {
    const KeyRows later = rows.last(std::min(rows.size() / 2, kMaxRowsPrintedAhead));
    here = rows.size() - later.size();
    printer.emplace(
        [&printed, &row_writer, later] { printed = PrintLaterRows(row_writer, later); });
  }
  Status written;
  // Before the printer's rows, the rows here are handed on whole.
  const bool handed = PrintRows(row_writer, writer, out, rows.first(here), printer.has_value(),
                                [&](std::string& text) {
                                  if (two_threads) return pieces.HandOn(text);
                                  written = write(text);
                                  text.clear();
                                  return written.ok();
                                });
  if (printer) {
    printer->Wait();
    if (handed) pieces.HandOnAll(std::move(printed));
  }
  if (Status finished = pieces.Finish(); written.ok()) written = finished;
  return written;
}

// Unix microseconds as RFC 3339 UTC with six decimals: 2026-12-02T16:47:16.123456Z.
std::string Rfc3339Micros(int64_t unix_micros) {
  const int64_t micros = ((unix_micros % 1'000'000) + 1'000'000) % 1'000'000;
  const time_t seconds = static_cast<time_t>((unix_micros - micros) / 1'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char date[32];
  const size_t n = std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:06}Z", std::string_view(date, n), micros);
}

std::string Percentiles(const stats::Histogram& h) {
  return fmt::format("p50 {}  p90 {}  p99 {}  p99.9 {}  max {}", Ms(h.ValueAtPercentile(50)),
                     Ms(h.ValueAtPercentile(90)), Ms(h.ValueAtPercentile(99)),
                     Ms(h.ValueAtPercentile(99.9)), Ms(h.max()));
}

}  // namespace

std::string FormatLoadSummary(const LoadSummary& s, bool with_table, size_t max_rows) {
  std::string out;
  out += fmt::format(
      "hammer load: {} requests sent = {} succeeded + {} failed, in {:.2f} s: "
      "{:.1f} req/s{}\n",
      s.requests(), s.succeeded, s.failed, s.seconds, s.rps(),
      s.interrupted
          ? (s.signal == SIGTERM ? " (interrupted by SIGTERM)" : " (interrupted by SIGINT)")
          : "");
  if (s.counters.warmup > 0) {
    out += fmt::format("  warmup       {} requests sent during --warmup (not counted above)\n",
                       s.counters.warmup);
  }
  if (s.counters.aborted > 0) {
    out += fmt::format(
        "  aborted      {} requests in flight, abandoned at a second signal (not counted above)\n",
        s.counters.aborted);
  }
  for (size_t i = 0; i < kFailureCount; ++i) {
    uint64_t n = s.total.failures.counts().by_type[i];
    if (n == 0) continue;
    out += fmt::format("  failed {:<17} {:>10}", kFailureNames[i], n);
    if (!s.failure_examples[i].empty()) out += "   e.g. " + s.failure_examples[i].front();
    out += "\n";
  }
  if (s.succeeded > 0) {
    out += fmt::format("  latency      {}{}\n", Percentiles(s.total.histogram),
                       s.open_loop ? "  (from intended send time)" : "");
    if (s.open_loop) {
      out +=
          fmt::format("  uncorrected  {}  (from actual send time)\n", Percentiles(s.uncorrected));
    }
  }
  if (s.open_loop) {
    out +=
        fmt::format("  target rate {:.1f} req/s, achieved {:.1f} req/s\n", s.target_rate, s.rps());
    if (s.counters.late_no_slot > 0) {
      out += fmt::format(
          "  {} requests started more than 1 ms late because all {} in-flight "
          "slots were busy (raise -c); their latency counts from the due time\n",
          s.counters.late_no_slot, s.concurrency);
    }
    if (s.counters.late_behind > 0) {
      out += fmt::format(
          "  {} requests started more than 1 ms late because the generator was "
          "busy (CPU): add threads or machines\n",
          s.counters.late_behind);
    }
    if (s.counters.dropped > 0) {
      out += fmt::format(
          "  {} requests were due before the end but never sent (no free slot); "
          "they are not counted above\n",
          s.counters.dropped);
    }
  }
  out += fmt::format("  connections  {} opened, {} reuses, {} stale retries",
                     s.counters.connections_opened, s.counters.connections_reused,
                     s.counters.stale_retries);
  if (!s.connect_time.empty()) {
    out += fmt::format("; connect p50 {} p99 {}", Ms(s.connect_time.ValueAtPercentile(50)),
                       Ms(s.connect_time.ValueAtPercentile(99)));
  }
  out += "\n";
  if (s.counters.tls_handshakes > 0) {
    // Request latency includes connection set-up, as the seed's curl timing did; handshakes
    // are also measured on their own so their cost is visible apart.
    out += fmt::format("  tls          {} handshakes ({} resumed), handshake p50 {} p99 {}\n",
                       s.counters.tls_handshakes, s.counters.tls_resumed,
                       Ms(s.handshake_time.ValueAtPercentile(50)),
                       Ms(s.handshake_time.ValueAtPercentile(99)));
  }
  if (s.counters.redirects > 0)
    out += fmt::format("  redirects    {} followed\n", s.counters.redirects);
  if (s.grpc_statuses.total() > 0) {
    out += "  grpc-status ";
    const char* separator = " ";
    for (const auto& [name, n] : s.grpc_statuses.Counted()) {
      out += fmt::format("{}{} {}", separator, name, n);
      separator = ", ";
    }
    out += "\n";
  }
  for (const auto& [reason, n] : s.skipped) {
    out += fmt::format("  skipped      {} request-file entries: {}\n", n, reason);
  }
  if (!s.source_warning.empty()) out += "  warning: " + s.source_warning + "\n";
  if (s.key_folding.folded) {
    out += "  keys         " + s.key_folding.Describe() + "\n";
  } else if (std::string hint = stats::OneRequestRowsHint(s.keys); !hint.empty()) {
    out += "  keys         " + hint + "\n";
  }
  if (with_table && !s.keys.empty()) out += "\n" + stats::FormatKeyTable(s.keys, max_rows);
  return out;
}

Status WriteLoadSummaryJson(const LoadSummary& s, std::string_view command,
                            const std::vector<stats::ThresholdResult>& thresholds,
                            const OutputPieces& write) {
  nlohmann::ordered_json j = stats::SummaryHeader(command);
  j.update(stats::OutcomeJson(s.total));
  j["thresholds"] = stats::ThresholdsJson(thresholds);
  j["seconds"] = s.seconds;
  j["rps"] = s.rps();
  // When the measured part began and when the last response came, to line the run up with a
  // service's own graphs and logs (and to time what hammer does after its last response).
  if (s.wall_end_us > 0) {  // not for a run stopped before it began (--start-at)
    j["started_at"] = Rfc3339Micros(s.wall_start_us);
    j["ended_at"] = Rfc3339Micros(s.wall_end_us);
  }
  j["open_loop"] = s.open_loop;
  if (s.open_loop) {
    j["target_rate"] = s.target_rate;
    j["uncorrected_latency"] = stats::LatencyJson(s.uncorrected);  // from the actual send time
  }
  j["late"] = s.counters.late();
  stats::AddCounterJson(j, LoadCounters::kCounterSpecs, s.counters.CounterValues());
  j["interrupted"] = s.interrupted;
  j["signal"] = s.signal == SIGTERM ? "SIGTERM" : s.signal == SIGINT ? "SIGINT" : "";
  if (s.grpc_statuses.total() > 0) {
    nlohmann::ordered_json statuses = nlohmann::ordered_json::object();
    for (const auto& [name, n] : s.grpc_statuses.Counted())
      statuses[std::string(name)] = n;
    j["grpc_statuses"] = std::move(statuses);
  }
  // The key rows (up to --max-keys of them) are written as text, not built as a tree: the
  // header as nlohmann prints it, without its closing "\n}", then the rows in the same layout
  // but one row to a line (grep finds a URL's row whole; 10,000 rows take 2.4 MB instead of
  // 3.5 MB).
  std::string out = stats::DumpJson(j, /*pretty=*/true);
  out.resize(out.size() - 2);
  stats::JsonWriter writer(&out, /*pretty=*/true, /*depth=*/1, /*continuing=*/true);
  writer.OneLineFrom(2);
  writer.Key("keys");
  writer.BeginArray();
  if (Status written = WriteKeyRows(writer, out, s.keys, write); !written.ok()) return written;
  writer.EndArray();
  if (s.key_folding.folded) {
    writer.Key("key_folding");
    writer.BeginObject();
    writer.Key("max_keys");
    writer.Uint(s.key_folding.max_keys);
    writer.Key("max_key_memory_bytes");
    writer.Uint(s.key_folding.max_bytes);
    // What folded the rows: too many keys, or their statistics' bytes.
    writer.Key("reason");
    writer.String(s.key_folding.for_memory ? "max_key_memory" : "max_keys");
    writer.Key("distinct_keys_estimate");
    writer.Uint(s.key_folding.distinct_keys);
    writer.Key("rows");
    writer.Uint(s.key_folding.rows);
    writer.Key("other_requests");
    writer.Uint(s.key_folding.other_requests);
    // The quietest rows went to (other) to stay within --max-key-memory.
    writer.Key("quiet_rows_in_other");
    writer.Bool(s.key_folding.shed);
    writer.Key("text");
    writer.String(s.key_folding.Describe());
    writer.EndObject();
  }
  writer.Finish();
  out += "\n}\n";
  return write(out);
}

std::string LoadSummaryJson(const LoadSummary& s, std::string_view command,
                            const std::vector<stats::ThresholdResult>& thresholds) {
  std::string text;
  (void)WriteLoadSummaryJson(s, command, thresholds,
                             OutputPieces([&text](std::span<const std::string_view> pieces) {
                               for (std::string_view piece : pieces)
                                 text += piece;
                               return Status::Ok();
                             }));
  return text;
}

std::string LoadSummaryHtml(const LoadSummary& s, std::string title,
                            std::vector<std::pair<std::string, std::string>> metadata) {
  stats::HtmlReportInput input;
  input.title = std::move(title);
  input.metadata = std::move(metadata);
  input.metadata.emplace_back("requests", fmt::format("{} sent = {} succeeded + {} failed",
                                                      s.requests(), s.succeeded, s.failed));
  input.metadata.emplace_back("duration",
                              fmt::format("{:.2f} s, {:.1f} req/s", s.seconds, s.rps()));
  if (s.open_loop) {
    input.metadata.emplace_back(
        "schedule", fmt::format("open loop at {:.1f} req/s: latency counts from each request's "
                                "due time",
                                s.target_rate));
  }
  if (!s.source_warning.empty()) input.notes.push_back(s.source_warning);
  if (std::string note = stats::KeyRowsNote(
          s.key_folding, s.key_folding.folded ? "" : stats::OneRequestRowsHint(s.keys));
      !note.empty()) {
    input.notes.push_back(std::move(note));
  }
  input.keys = s.keys;
  input.total = s.total;
  for (size_t i = 0; i < kFailureCount; ++i) {
    for (const std::string& example : s.failure_examples[i]) {
      input.failure_examples.emplace_back(static_cast<Failure>(i), example);
    }
  }
  input.timeline = s.timeline.empty() ? nullptr : &s.timeline;
  input.covered_from_ms = s.wall_start_us / 1000;
  input.covered_to_ms = s.wall_end_us / 1000;
  input.duration_seconds = s.seconds;
  return stats::RenderHtmlReport(input);
}

}  // namespace hammer::load
