#include "hammer/dark/listen_reservation.h"

#include <utility>

namespace hammer::dark {

Result<ListenReservation> ListenReservation::Reserve(std::string_view listen) {
  Result<net::SocketAddress> address = net::SocketAddress::Parse(std::string(listen));
  if (!address.ok()) return Status::Error("--listen: " + address.status().message());
  ListenReservation reservation;
  reservation.address_ = std::string(listen);
  if (address->port() != 0) return reservation;
  Result<net::Fd> fd = net::Listen(*address, /*reuse_port=*/true);
  if (!fd.ok()) return Status::Error("--listen: " + fd.status().message());
  Result<net::SocketAddress> bound = net::LocalAddress(fd->get());
  if (!bound.ok()) return Status::Error("--listen: " + bound.status().message());
  reservation.address_ = bound->ToString();
  reservation.socket_ = std::move(*fd);
  return reservation;
}

}  // namespace hammer::dark
