#include "hammer/base/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "hammer/base/write_all.h"

namespace hammer {
namespace {

// `path` opened for writing with `flags` besides O_WRONLY | O_CREAT ("-": standard output).
Result<int> OpenOutput(std::string_view flag, const std::string& path, int flags) {
  // stdio may hold bytes for stdout already (the summary, a table): they go out first.
  if (path == kStdoutPath) std::fflush(stdout);
  int fd = path == kStdoutPath ? fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0)
                               : open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
  if (fd < 0) return Status::FromErrno(std::string(flag) + ": cannot write '" + path + "'", errno);
  return fd;
}

}  // namespace

Result<int> OpenOutputFile(std::string_view flag, const std::string& path) {
  return OpenOutput(flag, path, O_TRUNC);
}

Status WriteOutputFile(std::string_view flag, const std::string& path, std::string_view content) {
  return WriteOutputFile(flag, path,
                         [content](const OutputPieces& write) { return write(content); });
}

Status WriteOutputFile(std::string_view flag, const std::string& path,
                       const std::function<Status(const OutputPieces& write)>& produce) {
  Result<int> fd = OpenOutput(flag, path, 0);  // a regular file is cut to length below
  if (!fd.ok()) return fd.status();
  // A file of its own (not standard output, whatever it is), written from its start.
  struct stat st {};
  const bool regular = path != kStdoutPath && fstat(*fd, &st) == 0 && S_ISREG(st.st_mode);
  off_t length = 0;  // the bytes of the pieces written whole
  Status written =
      produce(OutputPieces([fd = *fd, &length](std::span<const std::string_view> pieces) {
        Status status = WriteAll(fd, pieces);
        if (status.ok()) {
          for (std::string_view piece : pieces)
            length += static_cast<off_t>(piece.size());
        }
        return status;
      }));
  // An older, longer file's bytes past the new ones go, after a failed write too.
  if (regular && ftruncate(*fd, length) != 0 && written.ok()) {
    written = Status::FromErrno("truncate", errno);
  }
  if (close(*fd) != 0 && written.ok()) {
    written = Status::FromErrno("close", errno);
  }
  if (!written.ok()) {
    return Status::Error(std::string(flag) + ": cannot write '" + path + "': " + written.message());
  }
  return Status::Ok();
}

}  // namespace hammer
