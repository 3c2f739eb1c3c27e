// CaptureWriter: records the exchanges `hammer dark` serves to a file, one line each
// (capture_line.h), never on the user's path.
//
// The loops decide per request whether to record it (Choose: --capture-filter, --capture-rate,
// --capture-max-rps), and hand each finished exchange to Submit, which only queues it: a
// bounded queue (CaptureOptions::queue_max_lines and queue_max_bytes) in front of one writer
// thread that encodes the lines and writes them. A full queue (a slow disk) drops the exchange
// and counts it; nothing a loop does waits for the disk. The writer is woken by the first
// exchange queued and gathers those that follow for up to 20 ms (less once 256 KiB are queued,
// or when Flush or Close asks): one wake-up and one write for many lines.
//
// The file: opened for appending (created if absent) and given mode 0600 whatever it had, as
// it holds user traffic. Each write(2) carries whole lines only, so a process killed between
// writes leaves only complete lines; a write that fails or is cut short (a full disk) is undone
// with ftruncate to the last whole line, and its lines are counted as dropped. Linux may still
// stop one write(2) at a page boundary when a fatal signal arrives in the middle of it, so after
// a kill -9 the last line may rarely be incomplete; it is never followed by another, and
// `hammer load` drops it, saying so (load/jsonl_targets.h).
//
// Compression (--capture-compress zstd): each write(2) is one zstd frame (zstd_frames.h) of
// whole lines, at most about one zstd block of them (128 KiB) unless a line is longer, with
// what is said above of writes true of frames: a failed one is cut off whole, and a file cut
// by a kill decodes, with `zstdcat` or `hammer load`, to complete lines. Rotation sizes and
// hammer_dark_capture_bytes_total count compressed bytes.
//
// Rotation (--capture-rotate SIZE and/or DURATION): lines always go to the file named by
// --capture; once it holds SIZE bytes, or DURATION after it was begun (checked at least once a
// second), and when the writer closes, it is complete: it is renamed, atomically, to
// STEM-YYYYmmddTHHMMSSZ.jsonl (.jsonl.zst when compressed; STEM: the path without its ".jsonl"
// or ".jsonl.zst"; the UTC time it was begun;
// "-2", "-3", ... appended should that name exist, never overwriting a file) and a new file is
// begun. A reader that takes only the dated names never sees a file being written.
//
// Errors: Open fails when the file cannot be opened or a --capture-filter pattern is not valid
// RE2, naming it. Threads: Choose and Submit from any loop; Close (and the destructor) from one
// thread once no loop submits any more; counters from anywhere.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/dark/capture_line.h"
#include "hammer/dark/capture_options.h"
#include "hammer/dark/dark_metrics.h"

namespace re2 {
class RE2;
}

namespace hammer {
class ZstdFrameEncoder;
}

namespace hammer::dark {

class CaptureWriter {
 public:
  static Result<std::unique_ptr<CaptureWriter>> Open(const CaptureOptions& options);
  // Writes what is queued, then stops (Close).
  ~CaptureWriter();
  CaptureWriter(const CaptureWriter&) = delete;
  CaptureWriter& operator=(const CaptureWriter&) = delete;

  // Whether to record a request with this method and target (as forwarded: origin-form),
  // arriving at `now_us` (Unix µs); a request not chosen is counted by reason. `rng` is the
  // calling loop's, drawn only when --capture-rate is below 1.
  bool Choose(std::string_view method, std::string_view target, int64_t now_us,
              std::mt19937_64& rng);
  // Queues a finished exchange (dropped and counted when the queue is full or closed).
  void Submit(std::unique_ptr<CapturedExchange> exchange);
  // Returns once everything queued before the call is written (or dropped). Any thread but
  // the writer's.
  void Flush();
  // Writes what is queued, stops the writer thread and closes the file. Idempotent.
  void Close();

  size_t body_limit() const { return options_.body_limit; }
  const std::string& path() const { return options_.path; }
  CaptureCounters& counters() { return counters_; }
  const CaptureCounters& counters() const { return counters_; }
  // One line for the operator at exit: lines written, dropped and skipped.
  std::string Summary() const;

 private:
  explicit CaptureWriter(const CaptureOptions& options);
  void Run();  // the writer thread
  // Writes `lines` (whole lines, `count` of them) with one write(2); undoes a partial one.
  void WriteLines(std::string_view lines, uint64_t count);
  // Opens (creates) the file at options_.path, mode 0600, for appending.
  Status OpenFile();
  // --capture-rotate: when the file is due, completes it and begins another.
  void MaybeRotate(bool closing);
  // The name a completed file begun at `begun_us` (Unix µs) takes: "STEM-<UTC>[-N].jsonl".
  std::string CompletedName(int64_t begun_us, int attempt) const;

  const CaptureOptions options_;
  const CaptureRedaction redaction_;
  std::vector<std::unique_ptr<re2::RE2>> filters_;
  std::unique_ptr<ZstdFrameEncoder> zstd_;  // --capture-compress zstd
  std::string frame_;                       // the writer thread's: the frame being written
  int fd_ = -1;
  uint64_t file_size_ = 0;     // the writer thread's: the end of the last whole line
  int64_t file_begun_us_ = 0;  // when the current file was begun (Unix µs), for rotation
  MonoNanos file_begun_ = 0;
  CaptureCounters counters_;
  // --capture-max-rps: the second being counted and the requests chosen in it.
  std::atomic<int64_t> rps_second_{0};
  std::atomic<uint64_t> rps_count_{0};

  std::mutex mutex_;
  std::condition_variable wake_;     // the writer: work or closing
  std::condition_variable written_;  // Flush: a batch is done
  std::deque<std::unique_ptr<CapturedExchange>> queue_;
  size_t queued_bytes_ = 0;
  uint64_t submitted_ = 0;  // exchanges taken into the queue, ever
  uint64_t done_ = 0;       // of those, written or dropped by the writer
  bool closing_ = false;
  bool stopped_ = false;  // the writer thread has ended
  std::thread thread_;
};

}  // namespace hammer::dark
