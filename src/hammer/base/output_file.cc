#include "hammer/base/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "hammer/base/write_all.h"

namespace hammer {

namespace {

// ".NAME.tmp-PID" beside `path`: hidden, so that a glob over the directory (a reducer reading
// partials/*, a dashboard picking up *.json) never takes a file still being written.
std::string TemporaryName(const std::string& path) {
  const size_t slash = path.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  return path.substr(0, base) + "." + path.substr(base) + ".tmp-" + std::to_string(getpid());
}

// Only a regular file, or nothing yet, can be replaced by a rename; a symbolic link would be
// replaced itself instead of the file it names.
bool WrittenInPlace(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return false;
  return !S_ISREG(st.st_mode);
}

}  // namespace

Result<OutputFile> OutputFile::Open(std::string_view flag, const std::string& path) {
  auto cannot = [&](int errno_value) {
    return Status::FromErrno(std::string(flag) + ": cannot write '" + path + "'", errno_value);
  };
  if (path == kStdoutPath) {
    // stdio may hold bytes for stdout already (the summary, a table): they go out first.
    std::fflush(stdout);
    const int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return cannot(errno);
    return OutputFile(std::string(flag), path, "", fd);
  }
  if (WrittenInPlace(path)) {
    const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return cannot(errno);
    return OutputFile(std::string(flag), path, "", fd);
  }
  std::string temporary = TemporaryName(path);
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return cannot(errno);
  return OutputFile(std::string(flag), path, std::move(temporary), fd);
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : flag_(std::move(other.flag_)),
      path_(std::move(other.path_)),
      temporary_(std::move(other.temporary_)),
      fd_(std::exchange(other.fd_, -1)),
      status_(std::move(other.status_)) {
  other.temporary_.clear();
}

OutputFile& OutputFile::operator=(OutputFile&& other) noexcept {
  if (this != &other) {
    Abandon();
    flag_ = std::move(other.flag_);
    path_ = std::move(other.path_);
    temporary_ = std::exchange(other.temporary_, std::string());
    fd_ = std::exchange(other.fd_, -1);
    status_ = std::move(other.status_);
  }
  return *this;
}

OutputFile::~OutputFile() {
  Abandon();
}

void OutputFile::Abandon() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) unlink(temporary_.c_str());
  temporary_.clear();
}

void OutputFile::Fail(std::string_view what, int errno_value) {
  if (status_.ok()) {
    status_ = Status::FromErrno(flag_ + ": cannot " + std::string(what) + " '" + path_ + "'",
                                errno_value);
  }
}

Status OutputFile::Write(std::string_view bytes) {
  if (!status_.ok()) return status_;
  if (fd_ < 0) return Status::Error(flag_ + ": '" + path_ + "' is already closed");
  status_ = WriteAll(fd_, bytes, flag_ + ": cannot write '" + path_ + "'");
  return status_;
}

Status OutputFile::Commit() {
  if (fd_ < 0) return status_.ok() ? Status::Error(flag_ + ": committed twice") : status_;
  // close(2) reports what a file system deferred (NFS, a full quota): the file is not whole.
  if (close(std::exchange(fd_, -1)) != 0) Fail("write", errno);
  if (status_.ok() && !temporary_.empty() && rename(temporary_.c_str(), path_.c_str()) != 0) {
    Fail("rename its temporary file to", errno);
  }
  if (status_.ok()) temporary_.clear();
  Abandon();
  return status_;
}

Status WriteOutputFile(std::string_view flag, const std::string& path, std::string_view content) {
  Result<OutputFile> file = OutputFile::Open(flag, path);
  if (!file.ok()) return file.status();
  if (Status written = file->Write(content); !written.ok()) return written;
  return file->Commit();
}

}  // namespace hammer
