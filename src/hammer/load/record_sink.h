// RecordSink: where workers' record lines go (stdout by default). Workers batch lines into
// 64 KiB buffers (and hand over what they hold each report interval) and hand whole buffers
// over, so lines never interleave and the lock is taken once per buffer, not per request.
//
// Errors: the first failed write (EPIPE for `hammer load | head -1`: SIGPIPE is ignored; ENOSPC;
// EIO) sticks; later buffers are dropped, and failed() tells the run to stop. records_written()
// counts the lines that went out whole, up to the failed write's last complete line. Threads:
// every method from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer::load {

class RecordSink {
 public:
  explicit RecordSink(int fd) : fd_(fd) {}
  void Write(std::string_view bytes);

  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // "cannot write records: Broken pipe"; OK while nothing failed.
  Status status() const;
  uint64_t records_written() const;

 private:
  mutable std::mutex mutex_;
  int fd_;
  Status status_;
  uint64_t records_written_ = 0;
  std::atomic<bool> failed_{false};
};

}  // namespace hammer::load
