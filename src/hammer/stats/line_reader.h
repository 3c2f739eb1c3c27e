// LineReader: splits a file descriptor's bytes into lines without copying them, for readers of
// record streams (`hammer stats`) that must go faster than `awk`.
//
// Reads in 1 MiB blocks and hands each line, without its '\n', to a LineHandler as a view into
// the block (valid only during the call). The last line may lack its '\n'. A line longer than
// max_line_bytes is never buffered whole: the handler gets OnOverlongLine() once and the bytes
// up to the next '\n' are skipped, so memory stays bounded by the block size whatever the input.
// Not thread-safe; one reader per input.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer::stats {

class LineHandler {
 public:
  virtual ~LineHandler() = default;
  virtual void OnLine(std::string_view line) = 0;
  virtual void OnOverlongLine() = 0;
  // Optional fast path for handlers that can take many lines at once. `lines` holds one or more
  // complete lines, each with its '\n', starting at a line start. The handler takes a prefix of
  // whole lines (as if each had gone to OnLine) and returns its length in bytes: 0, or just
  // past one of the '\n's. The reader hands the next line to OnLine and offers the rest again.
  // Lines taken here skip the reader's max_line_bytes check: take only lines OnLine accepts.
  virtual size_t OnLines(std::string_view /*lines*/) { return 0; }
};

class LineReader {
 public:
  static constexpr size_t kBlockBytes = 1 << 20;

  // max_line_bytes must be below kBlockBytes.
  explicit LineReader(size_t max_line_bytes);

  // Reads `fd` to its end. Errors: a failed read(2) ("read <name>: <strerror>").
  Status ReadAll(int fd, std::string_view name, LineHandler& handler);

  // Feeds bytes that are already in memory (tests, small inputs); Finish() ends the stream.
  void Feed(std::string_view bytes, LineHandler& handler);
  void Finish(LineHandler& handler);

 private:
  // Hands out the complete lines of buffer_[begin_, end_) and compacts the rest.
  void Drain(LineHandler& handler);

  size_t max_line_bytes_;
  std::unique_ptr<char[]> buffer_;
  size_t begin_ = 0;       // first byte of the pending (incomplete) line
  size_t scanned_ = 0;     // bytes before this offset hold no '\n'
  size_t end_ = 0;         // end of valid data
  bool skipping_ = false;  // inside an overlong line: drop bytes until the next '\n'
};

}  // namespace hammer::stats
