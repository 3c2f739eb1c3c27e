// WriteAll: the whole of a buffer to a file descriptor, as the line-oriented outputs (records,
// reducer lines, route lines) need it: short writes are continued and EINTR is retried.
//
// Errors: the first failed write(2) ends it, as "<what>: <strerror>" (EPIPE for a closed pipe:
// hammer ignores SIGPIPE, cli/main.cc); `*written` (when given) is then how many bytes went
// out before it, all of them on success. Threads: reentrant; concurrent callers on one
// descriptor must serialise themselves.
#pragma once

#include <cstddef>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer {

Status WriteAll(int fd, std::string_view bytes, std::string_view what = "write output",
                size_t* written = nullptr);

}  // namespace hammer
