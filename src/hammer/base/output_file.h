// Output files (`--summary-json FILE`, `--html FILE`, `--hdr-log FILE`, `--verdict-json FILE`,
// `--dead-letter FILE`): every command reads "-" as standard output, as curl, vegeta and k6 do,
// and anything else as a path.
//
// A file appears whole or not at all. Its bytes go to a hidden file beside it (".NAME.tmp-PID"
// in the same directory, so the rename cannot cross file systems), which Commit() renames over
// the path once every byte is written and the file is closed without error, as rsync and
// editors do. A command that fails, is killed or runs out of disk leaves the path as it was:
// absent, or holding the previous output whole, never a truncated file that looks complete.
// A path that exists and is not a regular file (/dev/full, /dev/null, a FIFO, /dev/stdout) or
// is a symbolic link is written in place, truncated when opened: there is nothing to rename.
//
// Errors name the flag and the path: "--html: cannot write 'out/r.html': No space left on
// device". Standard output is flushed first, never closed. Threads: an OutputFile is used by
// one thread at a time; WriteOutputFile is reentrant.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "hammer/base/status.h"

namespace hammer {

inline constexpr std::string_view kStdoutPath = "-";

class OutputFile {
 public:
  // Opens `path` for writing ("-": a duplicate of standard output). `flag` names the option in
  // errors. Fails when the file (or its temporary) cannot be created.
  static Result<OutputFile> Open(std::string_view flag, const std::string& path);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&& other) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Without a successful Commit(): closes, and removes the temporary file.
  ~OutputFile();

  // Writes all of `bytes`. The first error is returned, and by every later Write and Commit.
  Status Write(std::string_view bytes);
  // Closes the file and renames the temporary file over the path. Returns the first error of
  // any Write, of close(2) or of rename(2); then the path is left as it was. Once only.
  Status Commit();

  const std::string& path() const { return path_; }

 private:
  OutputFile(std::string flag, std::string path, std::string temporary, int fd)
      : flag_(std::move(flag)), path_(std::move(path)), temporary_(std::move(temporary)), fd_(fd) {}
  // Keeps the first error: "<flag>: cannot <what> '<path>': <strerror>".
  void Fail(std::string_view what, int errno_value);
  void Abandon();

  std::string flag_;
  std::string path_;
  std::string temporary_;  // empty: written in place
  int fd_ = -1;
  Status status_;
};

// Opens, writes `content` and commits: the path holds all of `content` or is left as it was.
Status WriteOutputFile(std::string_view flag, const std::string& path, std::string_view content);

}  // namespace hammer
