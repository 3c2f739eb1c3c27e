// RecordSink: where workers' record lines go (stdout by default). Workers batch lines into
// 64 KiB buffers and hand whole buffers over, so lines never interleave and the lock is taken
// once per buffer, not per request. A closed pipe ends the process with SIGPIPE, as Unix
// filters do (`hammer load urls | head`).
#pragma once

#include <mutex>
#include <string_view>

namespace hammer::load {

class RecordSink {
 public:
  explicit RecordSink(int fd) : fd_(fd) {}
  void Write(std::string_view bytes);

 private:
  std::mutex mutex_;
  int fd_;
};

}  // namespace hammer::load
