// TargetSource: the stream of input lines shared by every load worker.
//
// Memory is bounded whatever the input size: lines are read in 64 KiB blocks and handed out in
// batches; a line longer than max_line_bytes is cut and marked oversized (the worker records it
// as an invalid_url failure) and the rest of it is skipped. --loop starts the input again at
// its end (files are re-read from the start; standard input is replayed from memory when it is
// at most kMaxReplayBytes, otherwise looping stops with a warning); an input without any line
// to send (only comments and blank lines) is not repeated. --shuffle emits lines in
// random order within a window of shuffle_window lines. Thread-safe: NextBatch takes a lock,
// once per batch.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/net/socket.h"

namespace hammer::load {

struct SourceOptions {
  bool loop = false;
  bool shuffle = false;
  size_t shuffle_window = 10000;
  uint64_t seed = 0;
  size_t max_line_bytes = 64 * 1024;
};

struct SourceLine {
  std::string text;
  bool oversized = false;
};

class TargetSource {
 public:
  static constexpr size_t kMaxReplayBytes = 256u << 20;

  // `path` "-" is standard input.
  static Result<std::unique_ptr<TargetSource>> Open(const std::string& path,
                                                    const SourceOptions& options);
  // A source over fixed text (tests, `hammer demo`).
  static std::unique_ptr<TargetSource> FromText(std::string text, const SourceOptions& options);

  // Fills `out` (resized, storage reused) with up to `max` lines. Returns false at the end.
  bool NextBatch(std::vector<SourceLine>& out, size_t max);

  uint64_t lines_read() const;
  // Set when --loop could not replay standard input; a message for the summary.
  std::string warning() const;

 private:
  TargetSource(net::Fd fd, std::string name, const SourceOptions& options);
  bool ReadLine(SourceLine& line);     // next line in input order
  bool ReadRawLine(SourceLine& line);  // next line of the current pass
  bool FillBuffer();
  bool Rewind();

  mutable std::mutex mutex_;
  net::Fd fd_;
  std::string name_;
  SourceOptions options_;
  bool seekable_ = false;
  bool eof_ = false;
  std::string buffer_;
  size_t buffer_start_ = 0;
  size_t buffer_end_ = 0;
  bool skipping_rest_of_line_ = false;

  // Replay of non-seekable input for --loop.
  bool replaying_ = false;
  bool replay_overflow_ = false;
  std::string replay_;
  size_t replay_offset_ = 0;

  uint64_t lines_read_ = 0;
  uint64_t requests_this_pass_ = 0;  // lines of this pass that are not comments or blank
  std::string warning_;
  std::vector<SourceLine> window_;
  std::mt19937_64 rng_;
};

}  // namespace hammer::load
