#include "hammer/load/record_sink.h"

#include "hammer/base/write_all.h"

namespace hammer::load {

void RecordSink::Write(std::string_view bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  // An error means stdout is gone (EPIPE with SIGPIPE ignored, or EBADF): nothing to do.
  (void)WriteAll(fd_, bytes);
}

}  // namespace hammer::load
