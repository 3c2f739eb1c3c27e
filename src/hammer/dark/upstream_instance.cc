#include "hammer/dark/upstream_instance.h"

#include <utility>

namespace hammer::dark {

std::string UpstreamAddress::Key() const {
  std::string key = url.Origin();
  if (address) key += " " + address->Ip();
  return key;
}

std::string UpstreamAddress::Name() const {
  std::string name = url.ToString();
  if (address) {
    net::SocketAddress at = *address;
    at.set_port(url.port);
    name += " (" + at.ToString() + ")";
  }
  return name;
}

UpstreamInstance::UpstreamInstance(UpstreamAddress where, Health health)
    : where_(std::move(where)), name_(where_.Name()), health_(health) {}

}  // namespace hammer::dark
