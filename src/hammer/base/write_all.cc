#include "hammer/base/write_all.h"

#include <unistd.h>

#include <cerrno>

namespace hammer {

Status WriteAll(int fd, std::string_view bytes, std::string_view what, size_t* written) {
  const size_t size = bytes.size();
  Status status;
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      status = Status::FromErrno(what, errno);
      break;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  if (written != nullptr) *written = size - bytes.size();
  return status;
}

}  // namespace hammer
