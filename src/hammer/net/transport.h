// Transport: the byte stream under an HTTP connection (plain TCP here; TLS implements the
// same interface). Transport separate from protocol, as in h2load: connections speak HTTP over
// any Transport and never call read(2)/write(2) themselves.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "hammer/net/socket.h"

namespace hammer::net {

struct IoResult {
  enum class Kind : uint8_t {
    kOk,         // `bytes` transferred (> 0)
    kWantRead,   // try again when the descriptor is readable
    kWantWrite,  // try again when the descriptor is writable
    kEof,        // the peer closed its side cleanly
    kError,      // `error` holds errno (or a TLS reason in Transport::last_error())
  };
  Kind kind = Kind::kOk;
  size_t bytes = 0;
  int error = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int fd() const = 0;
  // Completes any protocol handshake (TLS). kOk when done.
  virtual IoResult Handshake() { return {}; }
  virtual IoResult Read(char* buf, size_t len) = 0;
  virtual IoResult Write(const iovec* iov, int count) = 0;
  // A human description of the last kError (errno text or TLS reason).
  virtual std::string last_error() const = 0;
  // Asked right after a Read that returned fewer bytes than asked: true when that proves the
  // socket is drained (plain TCP always; TLS when nothing stayed buffered). Edge-triggered
  // readers may then wait for the next event instead of reading again for EAGAIN: one system
  // call less per message.
  virtual bool short_read_drains() const { return false; }
  // True when the transport itself holds input already taken off the socket (TLS: records
  // read ahead, or the rest of a record a Read did not return whole). No epoll event announces
  // it: a reader that stops before kWantRead must come back to it by itself.
  virtual bool holds_input() const { return false; }
  // The application protocol agreed during the handshake (TLS ALPN: "http/1.1", later "h2");
  // empty when none was negotiated (plain TCP, or a TLS peer that offered no ALPN).
  virtual std::string_view application_protocol() const { return {}; }
};

class PlainTransport final : public Transport {
 public:
  explicit PlainTransport(Fd fd) : fd_(std::move(fd)) {}
  int fd() const override { return fd_.get(); }
  IoResult Read(char* buf, size_t len) override;
  IoResult Write(const iovec* iov, int count) override;
  std::string last_error() const override;
  bool short_read_drains() const override { return true; }

 private:
  Fd fd_;
  int last_errno_ = 0;
};

}  // namespace hammer::net
