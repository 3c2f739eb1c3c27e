#include "hammer/base/write_all.h"

#include <unistd.h>

#include <cerrno>

namespace hammer {

Status WriteAll(int fd, std::string_view bytes, std::string_view what) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(what, errno);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace hammer
