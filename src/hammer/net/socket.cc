#include "hammer/net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace hammer::net {

SocketAddress::SocketAddress(const sockaddr* addr, socklen_t len) {
  if (len > sizeof(storage_)) len = sizeof(storage_);
  std::memcpy(&storage_, addr, len);
  length_ = len;
}

Result<SocketAddress> SocketAddress::FromIp(std::string_view ip, uint16_t port) {
  std::string text(ip);
  sockaddr_in v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    v4.sin_port = htons(port);
    return SocketAddress(reinterpret_cast<const sockaddr*>(&v4), sizeof(v4));
  }
  sockaddr_in6 v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(port);
    return SocketAddress(reinterpret_cast<const sockaddr*>(&v6), sizeof(v6));
  }
  return Status::Error("not an IP address: '" + text + "'");
}

std::string SocketAddress::LoopbackIfPortOnly(std::string_view listen) {
  if (!listen.empty() && listen.find_first_not_of("0123456789") == std::string_view::npos) {
    return "127.0.0.1:" + std::string(listen);
  }
  return std::string(listen);
}

Result<SocketAddress> SocketAddress::Parse(std::string_view host_port) {
  std::string_view host;
  std::string_view port_text;
  if (!host_port.empty() && host_port.front() == '[') {
    size_t close = host_port.find(']');
    if (close == std::string_view::npos || close + 1 >= host_port.size() ||
        host_port[close + 1] != ':') {
      return Status::Error("expected [IPv6]:PORT, got '" + std::string(host_port) + "'");
    }
    host = host_port.substr(1, close - 1);
    port_text = host_port.substr(close + 2);
  } else {
    size_t colon = host_port.rfind(':');
    if (colon == std::string_view::npos) {
      return Status::Error("expected HOST:PORT, got '" + std::string(host_port) + "'");
    }
    host = host_port.substr(0, colon);
    port_text = host_port.substr(colon + 1);
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    return Status::Error("invalid port '" + std::string(port_text) + "'");
  }
  if (host == "localhost") host = "127.0.0.1";
  return FromIp(host, static_cast<uint16_t>(port));
}

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  }
  return 0;
}

void SocketAddress::set_port(uint16_t port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage_)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage_)->sin6_port = htons(port);
}

bool SocketAddress::IsLoopback() const {
  if (family() == AF_INET) {
    uint32_t ip = ntohl(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr);
    return (ip >> 24) == 127;
  }
  if (family() == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr);
  }
  return false;
}

std::string SocketAddress::Ip() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, buf,
              sizeof(buf));
  } else if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, buf,
              sizeof(buf));
  }
  return buf;
}

std::string SocketAddress::ToString() const {
  if (family() == AF_INET) return Ip() + ":" + std::to_string(port());
  if (family() == AF_INET6) return "[" + Ip() + "]:" + std::to_string(port());
  return "(unknown address)";
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void Fd::Reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

namespace {

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

Result<Fd> StartConnect(const SocketAddress& address) {
  Fd fd(socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Status::FromErrno("socket", errno);
  SetNoDelay(fd.get());
  if (connect(fd.get(), address.sockaddr_ptr(), address.length()) != 0 && errno != EINPROGRESS) {
    return Status::FromErrno("connect " + address.ToString(), errno);
  }
  return fd;
}

int TakeSocketError(int fd) {
  int error = 0;
  socklen_t len = sizeof(error);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) return errno;
  return error;
}

Result<Fd> Listen(const SocketAddress& address, bool reuse_port, int backlog) {
  Fd fd(socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Status::FromErrno("socket", errno);
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (reuse_port) setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  if (address.family() == AF_INET6) {
    int zero = 0;  // "[::]:N" serves IPv4 too, as users expect
    setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  }
  if (bind(fd.get(), address.sockaddr_ptr(), address.length()) != 0) {
    return Status::FromErrno("bind " + address.ToString(), errno);
  }
  if (listen(fd.get(), backlog) != 0) {
    return Status::FromErrno("listen " + address.ToString(), errno);
  }
  return fd;
}

Accepted Accept(int listen_fd) {
  while (true) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      SetNoDelay(fd);
      return {Accepted::Kind::kConnection, Fd(fd), 0};
    }
    int error = errno;
    if (error == EINTR || error == ECONNABORTED) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) return {Accepted::Kind::kNone, Fd(), 0};
    if (error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM) {
      return {Accepted::Kind::kOutOfDescriptors, Fd(), error};
    }
    return {Accepted::Kind::kError, Fd(), error};
  }
}

Result<SocketAddress> PeerAddress(int fd) {
  sockaddr_storage storage{};
  socklen_t len = sizeof(storage);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&storage), &len) != 0) {
    return Status::FromErrno("getpeername", errno);
  }
  return SocketAddress(reinterpret_cast<const sockaddr*>(&storage), len);
}

Fd OpenSpareDescriptor() {
  return Fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
}

Result<SocketAddress> LocalAddress(int fd) {
  sockaddr_storage storage{};
  socklen_t len = sizeof(storage);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &len) != 0) {
    return Status::FromErrno("getsockname", errno);
  }
  return SocketAddress(reinterpret_cast<const sockaddr*>(&storage), len);
}

}  // namespace hammer::net
