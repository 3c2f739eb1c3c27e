#include "hammer/stats/line_reader.h"

#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <string>

namespace hammer {

LineReader::LineReader(size_t max_line_bytes)
    : max_line_bytes_(max_line_bytes), buffer_(new char[kBlockBytes]) {
  assert(max_line_bytes < kBlockBytes);
}

void LineReader::Drain(LineHandler& handler) {
  char* data = buffer_.get();
  while (scanned_ < end_) {
    void* newline = std::memchr(data + scanned_, '\n', end_ - scanned_);
    if (newline == nullptr) {
      scanned_ = end_;
      break;
    }
    size_t at = static_cast<size_t>(static_cast<char*>(newline) - data);
    if (skipping_) {
      skipping_ = false;
    } else if (at - begin_ > max_line_bytes_) {
      handler.OnOverlongLine();
    } else {
      handler.OnLine(std::string_view(data + begin_, at - begin_));
    }
    begin_ = scanned_ = at + 1;
  }
  // The pending line: drop it if it is already too long, else move it to the front.
  if (skipping_) {
    begin_ = scanned_ = end_;
  } else if (end_ - begin_ > max_line_bytes_) {
    handler.OnOverlongLine();
    skipping_ = true;
    begin_ = scanned_ = end_;
  }
  if (begin_ > 0) {
    std::memmove(data, data + begin_, end_ - begin_);
    end_ -= begin_;
    scanned_ -= begin_;
    begin_ = 0;
  }
}

void LineReader::Feed(std::string_view bytes, LineHandler& handler) {
  while (!bytes.empty()) {
    size_t n = std::min(bytes.size(), kBlockBytes - end_);
    std::memcpy(buffer_.get() + end_, bytes.data(), n);
    end_ += n;
    bytes.remove_prefix(n);
    Drain(handler);
  }
}

void LineReader::Finish(LineHandler& handler) {
  if (!skipping_ && end_ > begin_) {
    handler.OnLine(std::string_view(buffer_.get() + begin_, end_ - begin_));
  }
  begin_ = scanned_ = end_ = 0;
  skipping_ = false;
}

Status LineReader::ReadAll(int fd, std::string_view name, LineHandler& handler) {
  while (true) {
    ssize_t n = read(fd, buffer_.get() + end_, kBlockBytes - end_);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno("read " + std::string(name), errno);
    }
    if (n == 0) break;
    end_ += static_cast<size_t>(n);
    Drain(handler);
  }
  Finish(handler);
  return Status::Ok();
}

}  // namespace hammer
