// Sockets: addresses, RAII descriptors, and non-blocking TCP connect/listen/accept. errno is
// translated into Status here, once, at the system-call boundary.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "hammer/base/status.h"

namespace hammer::net {

// An IPv4 or IPv6 address with a port. A plain value.
class SocketAddress {
 public:
  SocketAddress() = default;
  SocketAddress(const sockaddr* addr, socklen_t len);

  // "127.0.0.1:8080", "[::1]:0", "0.0.0.0:80". IP literals only (no name lookup).
  static Result<SocketAddress> Parse(std::string_view host_port);
  // An IP literal (no brackets) and a port.
  static Result<SocketAddress> FromIp(std::string_view ip, uint16_t port);
  // A listen address as a user may give it: a port alone ("8080") means loopback
  // ("127.0.0.1:8080"); anything else is returned as it is, for Parse to judge.
  static std::string LoopbackIfPortOnly(std::string_view listen);

  const sockaddr* sockaddr_ptr() const { return reinterpret_cast<const sockaddr*>(&storage_); }
  socklen_t length() const { return length_; }
  int family() const { return storage_.ss_family; }
  uint16_t port() const;
  void set_port(uint16_t port);
  bool IsLoopback() const;
  // "127.0.0.1:8080" / "[::1]:8080".
  std::string ToString() const;
  // The IP alone, without brackets or port: "127.0.0.1" / "::1" ("" when unset).
  std::string Ip() const;

 private:
  sockaddr_storage storage_{};
  socklen_t length_ = 0;
};

// Owns a file descriptor; closes it on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset();

 private:
  int fd_ = -1;
};

// Starts a non-blocking connect. The connection is established when the descriptor becomes
// writable and TakeSocketError() returns 0. Sets TCP_NODELAY.
Result<Fd> StartConnect(const SocketAddress& address);
// The pending error of a socket (SO_ERROR), clearing it; 0 when none.
int TakeSocketError(int fd);

// A non-blocking listening socket with SO_REUSEADDR (and SO_REUSEPORT when asked, so several
// loops can each own a listener on the same port and the kernel spreads connections).
Result<Fd> Listen(const SocketAddress& address, bool reuse_port, int backlog = 4096);
// The outcome of one accept(2) on a non-blocking listening socket.
struct Accepted {
  enum class Kind : uint8_t {
    kConnection,        // `fd` is the new connection (non-blocking, TCP_NODELAY)
    kNone,              // nothing pending (EAGAIN)
    kOutOfDescriptors,  // EMFILE/ENFILE/ENOBUFS/ENOMEM: the connection stays pending in the
                        // kernel, and an edge-triggered listener gets no new event for it
    kError,             // anything else; `error` holds errno
  };
  Kind kind = Kind::kNone;
  Fd fd;
  int error = 0;
};
// Accepts one connection (ECONNABORTED and EINTR are retried).
Accepted Accept(int listen_fd);

Result<SocketAddress> LocalAddress(int fd);
// The address of a connected socket's peer (getpeername).
Result<SocketAddress> PeerAddress(int fd);

// A descriptor held in reserve (/dev/null, read-only): a listener that runs out of descriptors
// closes it to accept, and at once close, the connection it cannot serve. Invalid when even
// this cannot be opened.
Fd OpenSpareDescriptor();

}  // namespace hammer::net
