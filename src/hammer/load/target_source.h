// TargetSource: the stream of input lines shared by every load worker.
//
// Memory is bounded whatever the input size: lines are read in 64 KiB blocks (LineReader) and
// handed out in batches; a line longer than max_line_bytes is cut and marked oversized (the
// worker records it as an invalid_url failure) and the rest of it is skipped. Each line is parsed
// here, once (ParseTargetLine): the workers use what SourceLine carries. --loop starts the input
// again at its end (files are re-read from the start; standard input is replayed from memory when
// it is at most kMaxReplayBytes, otherwise looping stops with a warning); an input without any line
// to send (only comments and blank lines) is not repeated. --shuffle emits lines in
// random order within a window of shuffle_window lines (while the input is idle, the window's
// lines go out as they are).
//
// Reading never waits for input: a pipe or terminal that is open but idle (`tail -f log |`, a
// user typing URLs) answers kNotYet, so that a worker's event loop keeps running (responses,
// the --duration timer) and sends each line as it arrives. waited() says how long readers were
// told kNotYet before the next line came: the run's time waiting for input. Thread-safe:
// NextBatch takes a lock, once per batch.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/line_reader.h"
#include "hammer/base/status.h"
#include "hammer/load/target_line.h"

namespace hammer::load {

struct SourceOptions {
  bool loop = false;
  bool shuffle = false;
  size_t shuffle_window = 10000;
  uint64_t seed = 0;
  size_t max_line_bytes = 64 * 1024;
};

// One input line and what ParseTargetLine found in it. The method and URL are kept as offsets
// into `text`, so a SourceLine can be moved (batches, the shuffle window) and still be read.
struct SourceLine {
  std::string text;
  bool oversized = false;

  // Parses `text` (once; NextBatch has done it for every line it hands out).
  void Parse();
  // A request line (not a comment or a blank line).
  bool request() const { return request_; }
  // The parse: views into `text` ("GET" when the line names no method).
  TargetLine target() const;

 private:
  bool request_ = false;
  size_t method_at_ = 0;
  size_t method_size_ = 0;  // 0: the line names no method
  size_t url_at_ = 0;
  size_t url_size_ = 0;
};

class TargetSource {
 public:
  static constexpr size_t kMaxReplayBytes = 256u << 20;
  static constexpr size_t kBlockBytes = 64 * 1024;

  // `path` "-" is standard input.
  static Result<std::unique_ptr<TargetSource>> Open(const std::string& path,
                                                    const SourceOptions& options);
  // Several inputs read one after the other: each is a URL ("SCHEME://...", sent as it is; a
  // scheme other than http and https fails as invalid_url), a file, or "-" (standard input). Every
  // file is opened now (errors name it); a later one is read when the one before it ends. With
  // --loop the whole sequence is repeated; standard input may then only be the sole input (it
  // cannot be read twice).
  static Result<std::unique_ptr<TargetSource>> Open(const std::vector<std::string>& inputs,
                                                    const SourceOptions& options);
  // True for an input that Open reads as a URL rather than a file name.
  static bool IsUrl(const std::string& input);
  // A source over fixed text (tests, `hammer demo`).
  static std::unique_ptr<TargetSource> FromText(std::string text, const SourceOptions& options);

  enum class Batch : uint8_t {
    kLines,   // `out` holds 1 to max lines
    kNotYet,  // `out` is empty: no line has arrived yet and the input is open; ask again later
    kEnd,     // `out` is empty: the input has ended
  };
  // Fills `out` (resized, storage reused) with up to `max` of the lines that have arrived,
  // without waiting for more.
  Batch NextBatch(std::vector<SourceLine>& out, size_t max);
  // Waits until the input may have a line (bytes arrived, or its end), at most
  // `timeout_millis`: for a reader with nothing else to do (--dry-run).
  void AwaitInput(int timeout_millis) const;
  // The time from each kNotYet answer (the first of a row) to the next line handed out, summed;
  // a wait still open counts up to `now`.
  Nanos waited(MonoNanos now) const;

  // Ends the input as soon as possible, from any thread: a worker blocked reading an idle pipe
  // or a terminal, or skipping an endless line, returns within ~50 ms (LineReader's interrupt).
  void Interrupt() { interrupted_.store(true); }

  uint64_t lines_read() const;
  // Set when --loop could not replay standard input; a message for the summary.
  std::string warning() const;

 private:
  // One of several inputs: a file to open when its turn comes, or URLs given as arguments.
  struct Part {
    std::string path;  // empty: `text` holds the lines
    std::string text;
  };

  TargetSource(LineReader reader, const SourceOptions& options);
  LineReader::Poll ReadLine(SourceLine& line);  // next line in input order, if it has arrived
  bool Rewind();
  bool OpenPart(size_t index);  // false (with warning_ set) when the file cannot be opened

  std::atomic<bool> interrupted_{false};

  mutable std::mutex mutex_;
  LineReader reader_;
  SourceOptions options_;
  bool replaying_ = false;   // reader_ reads the copy of the input kept by the first pass
  std::vector<Part> parts_;  // several inputs (empty: reader_ is the only one)
  size_t part_ = 0;          // the part reader_ reads

  uint64_t lines_read_ = 0;
  MonoNanos waiting_since_ = 0;      // when a reader was told kNotYet with no line since (0: none)
  Nanos waited_ = 0;                 // the waits that ended
  uint64_t requests_this_pass_ = 0;  // lines of this pass that are not comments or blank
  std::string warning_;
  std::vector<SourceLine> window_;
  std::mt19937_64 rng_;
};

}  // namespace hammer::load
