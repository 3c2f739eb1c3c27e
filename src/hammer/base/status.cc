#include "hammer/base/status.h"

#include <cstring>

namespace hammer {

Status Status::FromErrno(std::string_view what, int errno_value) {
  std::string message(what);
  message += ": ";
  message += std::strerror(errno_value);
  return Status(std::move(message));
}

}  // namespace hammer
