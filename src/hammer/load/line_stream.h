// LineStream: the lines of a targets file, one at a time, with their line numbers, in bounded
// memory. Shared by the line-oriented target readers (vegeta's http and JSON formats).
//
// Reads in 64 KiB blocks; memory is at most max_line_bytes plus one block whatever the file
// size. A line is handed out without its '\n' (and without a '\r' before it); the last line
// may lack its '\n'. Errors: open(2)/read(2) failures ("open x: No such file or directory")
// and a line longer than max_line_bytes ("x:12: line longer than 1048576 bytes"); after an
// error the stream is at its end. Owns its file descriptor (standard input is not closed).
// Movable, not copyable; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer::load {

class LineStream {
 public:
  static constexpr size_t kBlockBytes = 64 * 1024;

  // `path` "-" is standard input, named "stdin" in messages.
  static Result<LineStream> Open(const std::string& path, size_t max_line_bytes);
  // A stream over text already in memory (tests, fuzzing); `name` is used in messages.
  static LineStream FromString(std::string text, std::string name, size_t max_line_bytes);

  LineStream(LineStream&& other) noexcept;
  LineStream& operator=(LineStream&& other) noexcept;
  LineStream(const LineStream&) = delete;
  LineStream& operator=(const LineStream&) = delete;
  ~LineStream();

  // Sets *line to the next line (valid until the next call) and returns true; false at the end.
  Result<bool> Next(std::string_view* line);

  uint64_t line_number() const { return line_number_; }  // of the line last returned, from 1
  const std::string& name() const { return name_; }

 private:
  LineStream(int fd, bool owns_fd, std::string name, size_t max_line_bytes);
  void Close();
  Status Fill();  // reads one more block after compacting; sets eof_ at the end of input

  int fd_ = -1;
  bool owns_fd_ = false;
  std::string name_;
  size_t max_line_bytes_ = 0;
  std::string buffer_;
  size_t begin_ = 0;    // start of the next line in buffer_
  size_t scanned_ = 0;  // buffer_[begin_, scanned_) holds no '\n'
  size_t end_ = 0;      // end of the bytes read
  bool eof_ = false;
  uint64_t line_number_ = 0;
};

}  // namespace hammer::load
