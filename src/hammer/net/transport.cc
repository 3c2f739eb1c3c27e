#include "hammer/net/transport.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hammer::net {

IoResult PlainTransport::Read(char* buf, size_t len) {
  while (true) {
    ssize_t n = read(fd_.get(), buf, len);
    if (n > 0) return {IoResult::Kind::kOk, static_cast<size_t>(n), 0};
    if (n == 0) return {IoResult::Kind::kEof, 0, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoResult::Kind::kWantRead, 0, 0};
    last_errno_ = errno;
    return {IoResult::Kind::kError, 0, errno};
  }
}

IoResult PlainTransport::Write(const iovec* iov, int count) {
  while (true) {
    msghdr message{};
    message.msg_iov = const_cast<iovec*>(iov);
    message.msg_iovlen = static_cast<size_t>(count);
    // MSG_NOSIGNAL: a peer that closed early gives EPIPE, not a process-killing SIGPIPE.
    ssize_t n = sendmsg(fd_.get(), &message, MSG_NOSIGNAL);
    if (n >= 0) return {IoResult::Kind::kOk, static_cast<size_t>(n), 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoResult::Kind::kWantWrite, 0, 0};
    last_errno_ = errno;
    return {IoResult::Kind::kError, 0, errno};
  }
}

std::string PlainTransport::last_error() const {
  return std::strerror(last_errno_);
}

}  // namespace hammer::net
