#include "hammer/stats/line_reader.h"

#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <string>

namespace hammer::stats {

LineReader::LineReader(size_t max_line_bytes)
    : max_line_bytes_(max_line_bytes), buffer_(new char[kBlockBytes]) {
  assert(max_line_bytes < kBlockBytes);
}

void LineReader::Drain(LineHandler& handler) {
  char* data = buffer_.get();
  // End of the complete lines in the buffer (just past its last '\n'), for OnLines.
  size_t complete = begin_;
  if (!skipping_ && scanned_ < end_) {
    if (const void* last = memrchr(data + scanned_, '\n', end_ - scanned_); last != nullptr)
      complete = static_cast<size_t>(static_cast<const char*>(last) - data) + 1;
  }
  while (scanned_ < end_) {
    if (scanned_ == begin_ && begin_ < complete && !skipping_) {
      size_t taken = handler.OnLines(std::string_view(data + begin_, complete - begin_));
      assert(taken <= complete - begin_ && (taken == 0 || data[begin_ + taken - 1] == '\n'));
      begin_ = scanned_ = begin_ + taken;
      if (scanned_ == end_) break;
    }
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

}  // namespace hammer::stats
