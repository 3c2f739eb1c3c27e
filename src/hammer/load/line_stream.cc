#include "hammer/load/line_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace hammer::load {

Result<LineStream> LineStream::Open(const std::string& path, size_t max_line_bytes) {
  if (path == "-") return LineStream(STDIN_FILENO, false, "stdin", max_line_bytes);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("open " + path, errno);
  return LineStream(fd, true, path, max_line_bytes);
}

LineStream LineStream::FromString(std::string text, std::string name, size_t max_line_bytes) {
  LineStream stream(-1, false, std::move(name), max_line_bytes);
  stream.end_ = text.size();
  stream.buffer_ = std::move(text);
  stream.eof_ = true;
  return stream;
}

LineStream::LineStream(int fd, bool owns_fd, std::string name, size_t max_line_bytes)
    : fd_(fd), owns_fd_(owns_fd), name_(std::move(name)), max_line_bytes_(max_line_bytes) {}

LineStream::LineStream(LineStream&& other) noexcept {
  *this = std::move(other);
}

LineStream& LineStream::operator=(LineStream&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = std::exchange(other.fd_, -1);
    owns_fd_ = std::exchange(other.owns_fd_, false);
    name_ = std::move(other.name_);
    max_line_bytes_ = other.max_line_bytes_;
    buffer_ = std::move(other.buffer_);
    begin_ = std::exchange(other.begin_, 0);
    scanned_ = std::exchange(other.scanned_, 0);
    end_ = std::exchange(other.end_, 0);
    eof_ = std::exchange(other.eof_, true);
    line_number_ = other.line_number_;
  }
  return *this;
}

LineStream::~LineStream() {
  Close();
}

void LineStream::Close() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  fd_ = -1;
  owns_fd_ = false;
}

Status LineStream::Fill() {
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    scanned_ -= begin_;
    begin_ = 0;
  }
  if (buffer_.size() < end_ + kBlockBytes) buffer_.resize(end_ + kBlockBytes);
  while (true) {
    ssize_t n = ::read(fd_, buffer_.data() + end_, kBlockBytes);
    if (n > 0) {
      end_ += static_cast<size_t>(n);
      return Status::Ok();
    }
    if (n == 0) {
      eof_ = true;
      return Status::Ok();
    }
    if (errno != EINTR) {
      int error = errno;
      eof_ = true;
      begin_ = scanned_ = end_ = 0;
      return Status::FromErrno("read " + name_, error);
    }
  }
}

Result<bool> LineStream::Next(std::string_view* line) {
  while (true) {
    const char* start = buffer_.data() + scanned_;
    const void* newline = std::memchr(start, '\n', end_ - scanned_);
    size_t line_end;
    if (newline != nullptr) {
      line_end = static_cast<size_t>(static_cast<const char*>(newline) - buffer_.data());
    } else if (eof_) {
      if (begin_ == end_) return false;
      line_end = end_;
    } else {
      scanned_ = end_;
      if (end_ - begin_ <= max_line_bytes_) {
        Status read = Fill();
        if (!read.ok()) return read;
        continue;
      }
      line_end = end_;  // over the limit without a newline: reported below
    }
    ++line_number_;
    size_t length = line_end - begin_;
    if (length > 0 && buffer_[line_end - 1] == '\r') --length;
    if (length > max_line_bytes_) {
      eof_ = true;
      begin_ = scanned_ = end_ = 0;
      return Status::Error(name_ + ":" + std::to_string(line_number_) + ": line longer than " +
                           std::to_string(max_line_bytes_) + " bytes");
    }
    *line = std::string_view(buffer_.data() + begin_, length);
    begin_ = scanned_ = std::min(line_end + 1, end_);
    return true;
  }
}

}  // namespace hammer::load
