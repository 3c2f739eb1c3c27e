// UpstreamInstance: one regular instance of `hammer dark` — where it is, and what the proxy
// knows of it now: the tries in flight on it, its consecutive failures and ejection (kept by
// UpstreamPool), its health (written by HealthChecker), and whether it has left the set.
//
// Identity: UpstreamAddress::Key(). The pool keeps one UpstreamInstance per key for as long
// as some source lists it, so its state survives every change of the set around it.
//
// Ownership: shared. The pool's current set holds it, and so does every try in flight on it
// (PrimaryExchange::instance), so an instance removed from the set lives until its last try
// has ended (it is drained).
//
// Threading: the address part is immutable; the state is relaxed atomics, read and written on
// any thread (the proxy's loops pick and count, the health checker's loop writes the health).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "hammer/base/clock.h"
#include "hammer/http/url.h"
#include "hammer/net/socket.h"

namespace hammer::dark {

// Where one regular instance is.
struct UpstreamAddress {
  // What requests name: the Host header, and for https the TLS server name and the name its
  // certificate is verified against.
  http::Url url;
  // The one address connections go to: one of url.host's addresses, found by DNS discovery.
  // nullopt: url.host itself, resolved when a connection opens.
  std::optional<net::SocketAddress> address;
  uint32_t weight = 1;  // its share of the traffic relative to the others (--upstream-weight)

  // Identity within the set: the URL's origin, and the address when it has one.
  std::string Key() const;
  // For /metrics and messages: "http://api:8080/", or "http://api:8080/ (10.0.0.5:8080)".
  std::string Name() const;
};

// What active health checks (HealthChecker) say of an instance. Without health checks every
// instance is kHealthy; with them a new one is kUnchecked, and not chosen, until its first
// check ends.
enum class Health : uint8_t { kUnchecked, kHealthy, kUnhealthy };

class UpstreamInstance {
 public:
  UpstreamInstance(UpstreamAddress where, Health health);
  UpstreamInstance(const UpstreamInstance&) = delete;
  UpstreamInstance& operator=(const UpstreamInstance&) = delete;

  const UpstreamAddress& where() const { return where_; }
  const http::Url& url() const { return where_.url; }
  // The pinned address (see UpstreamAddress::address), or null.
  const net::SocketAddress* address() const { return where_.address ? &*where_.address : nullptr; }
  uint32_t weight() const { return where_.weight; }
  const std::string& name() const { return name_; }

  // Tries in flight on it (Pick counts one, Finished ends it).
  uint32_t outstanding() const { return outstanding_.load(std::memory_order_relaxed); }
  bool ejected(MonoNanos now) const { return ejected_until_.load(std::memory_order_relaxed) > now; }
  Health health() const { return health_.load(std::memory_order_relaxed); }
  void set_health(Health health) { health_.store(health, std::memory_order_relaxed); }
  // Gone from the set: never chosen again; its tries in flight finish.
  bool removed() const { return removed_.load(std::memory_order_relaxed); }
  // Not ejected and healthy: may be chosen outside panic.
  bool available(MonoNanos now) const { return health() == Health::kHealthy && !ejected(now); }

 private:
  friend class UpstreamPool;

  const UpstreamAddress where_;
  const std::string name_;
  std::atomic<uint32_t> outstanding_{0};
  std::atomic<uint32_t> connect_failures_{0};
  std::atomic<uint32_t> resets_{0};
  std::atomic<uint32_t> server_errors_{0};
  std::atomic<uint32_t> times_ejected_{0};
  std::atomic<MonoNanos> ejected_until_{0};
  std::atomic<Health> health_;
  std::atomic<bool> removed_{false};
};

}  // namespace hammer::dark
