#include "hammer/load/record_sink.h"

#include <unistd.h>

#include <cerrno>

namespace hammer::load {

void RecordSink::Write(std::string_view bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (!bytes.empty()) {
    ssize_t n = write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // stdout is gone (EPIPE with SIGPIPE ignored, or EBADF): nothing to do
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace hammer::load
