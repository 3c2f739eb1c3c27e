// ListenReservation: the proxy's listening address with port 0 resolved before the proxy
// starts, so that what must know the real address first (a ZooKeeper registration) can. It
// binds a listening socket with SO_REUSEPORT on the requested address and holds it while
// DarkProxyGroup binds its own listeners to the same port; Release() (or destruction) then
// closes it. Connections the kernel queued on the reserved socket before that are reset, which
// is why it is released right after the group has started. A non-zero port needs no socket:
// the address is kept as given.
//
// Errors: an unparsable address or a bind failure (port in use, no such address) is returned
// by Reserve(), prefixed with "--listen: ". Move-only; any thread.
#pragma once

#include <string>
#include <string_view>

#include "hammer/base/status.h"
#include "hammer/net/socket.h"

namespace hammer::dark {

class ListenReservation {
 public:
  static Result<ListenReservation> Reserve(std::string_view listen);

  // "IP:PORT" with the real port ("[v6]:PORT" for IPv6).
  const std::string& address() const { return address_; }
  void Release() { socket_.Reset(); }

 private:
  std::string address_;
  net::Fd socket_;
};

}  // namespace hammer::dark
