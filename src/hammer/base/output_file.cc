#include "hammer/base/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "hammer/base/write_all.h"

namespace hammer {

Result<int> OpenOutputFile(std::string_view flag, const std::string& path) {
  // stdio may hold bytes for stdout already (the summary, a table): they go out first.
  if (path == kStdoutPath) std::fflush(stdout);
  int fd = path == kStdoutPath ? fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0)
                               : open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(std::string(flag) + ": cannot write '" + path + "'", errno);
  return fd;
}

Status WriteOutputFile(std::string_view flag, const std::string& path, std::string_view content) {
  Result<int> fd = OpenOutputFile(flag, path);
  if (!fd.ok()) return fd.status();
  Status written = WriteAll(*fd, content);
  if (close(*fd) != 0 && written.ok()) {
    written = Status::FromErrno("close", errno);
  }
  if (!written.ok()) {
    return Status::Error(std::string(flag) + ": cannot write '" + path + "': " + written.message());
  }
  return Status::Ok();
}

}  // namespace hammer
