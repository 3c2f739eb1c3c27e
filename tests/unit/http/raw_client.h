// A blocking client socket for tests that must control the bytes on the wire exactly: write
// raw requests (or floods of them), read what the server answers, see when it closes.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "hammer/net/socket.h"

namespace hammer::http::testing {

// How many complete responses with Content-Length bodies `text` starts with.
inline int CountResponses(std::string_view text) {
  int complete = 0;
  while (true) {
    size_t end = text.find("\r\n\r\n");
    if (end == std::string_view::npos) return complete;
    size_t length_at = text.find("Content-Length: ");
    if (length_at == std::string_view::npos || length_at > end) return complete;
    size_t length = std::stoul(std::string(text.substr(length_at + 16, 12)));
    if (text.size() < end + 4 + length) return complete;
    text.remove_prefix(end + 4 + length);
    ++complete;
  }
}

class RawClient {
 public:
  explicit RawClient(const net::SocketAddress& address)
      : fd_(socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    EXPECT_EQ(connect(fd_.get(), address.sockaddr_ptr(), address.length()), 0);
    timeval limit{10, 0};  // safety net against a server that never answers
    setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  }
  int fd() const { return fd_.get(); }

  void Write(std::string_view bytes) {
    EXPECT_EQ(write(fd_.get(), bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  // Like Write, but a connection the server has closed is a false result, not a SIGPIPE.
  // Closes the sending side (FIN); the answers can still be read.
  void CloseWrite() { EXPECT_EQ(shutdown(fd_.get(), SHUT_WR), 0); }
  bool TrySend(std::string_view bytes) {
    return send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }

  // Writes `unit` over and over without blocking, until `limit` bytes are written or the
  // socket has accepted nothing for `stall_ms` (the peer stopped reading). Returns the bytes
  // written; the last unit may be cut short (FinishUnit completes it).
  size_t Flood(std::string_view unit, size_t limit, int stall_ms) {
    const int flags = fcntl(fd_.get(), F_GETFL);
    fcntl(fd_.get(), F_SETFL, flags | O_NONBLOCK);
    std::string block;
    while (block.size() < 64 * 1024)
      block.append(unit);
    size_t written = 0;
    size_t offset = 0;  // into `block`, whose size is a multiple of the unit's
    while (written < limit) {
      ssize_t n = send(fd_.get(), block.data() + offset, block.size() - offset, MSG_NOSIGNAL);
      if (n > 0) {
        written += static_cast<size_t>(n);
        offset = (offset + static_cast<size_t>(n)) % block.size();
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) break;
      pollfd p{fd_.get(), POLLOUT, 0};
      if (poll(&p, 1, stall_ms) != 1) break;
    }
    fcntl(fd_.get(), F_SETFL, flags);
    return written;
  }
  // After a Flood of `written` bytes of `unit`: writes the rest of the unit cut short (blocking
  // until the peer reads again) and returns how many whole units went out.
  size_t FinishUnit(std::string_view unit, size_t written) {
    size_t partial = written % unit.size();
    if (partial != 0) Write(unit.substr(partial));
    return (written + unit.size() - 1) / unit.size();
  }

  // True when a read would not block (data or EOF pending) within `timeout_ms`.
  bool Readable(int timeout_ms = 0) {
    pollfd p{fd_.get(), POLLIN, 0};
    return poll(&p, 1, timeout_ms) == 1;
  }

  // Everything until the server closes the connection (or the 10 s safety net).
  std::string ReadAll() {
    std::string out;
    char buf[65536];
    ssize_t n;
    while ((n = read(fd_.get(), buf, sizeof(buf))) > 0)
      out.append(buf, static_cast<size_t>(n));
    closed_ = n == 0 || (n < 0 && errno == ECONNRESET);
    return out;
  }
  // True when the last ReadAll ended because the server closed or reset the connection.
  bool closed() const { return closed_; }

  // Reads until `count` complete responses with Content-Length bodies have arrived.
  std::string ReadResponses(int count) {
    std::string out;
    char buf[65536];
    while (CountResponses(out) < count) {
      ssize_t n = read(fd_.get(), buf, sizeof(buf));
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }

 private:
  net::Fd fd_;
  bool closed_ = false;
};

}  // namespace hammer::http::testing
