#include "hammer/base/write_all.h"

#include <limits.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <cerrno>

namespace hammer {

Status WriteAll(int fd, std::string_view bytes) {
  return WriteAll(fd, std::span<const std::string_view>(&bytes, 1));
}

Status WriteAll(int fd, std::span<const std::string_view> pieces) {
  constexpr size_t kMaxVectors = std::min<size_t>(IOV_MAX, 64);
  std::array<iovec, kMaxVectors> vectors;
  size_t next_written = 0;  // the first piece not wholly written
  size_t first_done = 0;    // its bytes already written
  while (next_written < pieces.size()) {
    // The vectors from the first piece not wholly written on.
    size_t count = 0;
    for (size_t next = next_written; next < pieces.size() && count < kMaxVectors; ++next) {
      std::string_view piece = pieces[next];
      if (next == next_written) piece.remove_prefix(first_done);
      if (piece.empty()) continue;
      vectors[count++] = {const_cast<char*>(piece.data()), piece.size()};
    }
    if (count == 0) break;  // only empty pieces left
    const ssize_t n = writev(fd, vectors.data(), static_cast<int>(count));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno("write output", errno);
    }
    // Past the pieces written whole, to the one written in part (if any).
    size_t left = static_cast<size_t>(n);
    while (next_written < pieces.size()) {
      const size_t rest = pieces[next_written].size() - first_done;
      if (left < rest) {
        first_done += left;
        break;
      }
      left -= rest;
      first_done = 0;
      ++next_written;
    }
  }
  return Status::Ok();
}

}  // namespace hammer
