// Connector: opens the transport of one client connection (internal to HttpClient). It
// resolves the origin's host (HostCache), connects to each address in turn with the
// client's connect timeout, and for https wraps the socket in TLS and completes the handshake,
// offering the ALPN protocols it was given. The connection that owns it then speaks HTTP/1.1
// (ClientConnection) or HTTP/2 (H2ClientConnection) over the transport: how a connection is
// opened is the same for both, only what is spoken on it differs.
//
// States: kResolving -> kConnecting (one address after another) -> kHandshaking (TLS) ->
// kDone. While it runs, the Connector is the socket's IoHandler and owns a timer for the
// connect timeout; when the transport is ready it re-registers the socket for the owner's
// handler and hands the transport over (Owner::OnTransportReady), or reports why it could not
// (Owner::OnConnectFailed: dns, connect or tls, with a detail naming the addresses tried).
// Either callback is made once per Start and may be made from inside Start (a cached name
// that fails at once); the owner must not destroy the Connector inside it (it is a member of
// the connection, which is destroyed through DeleteLater).
//
// The exchange deadline is not the Connector's business: the owner keeps its own timer and
// calls Cancel() when it expires (phase() says what was being waited for).
//
// Threading: the client's loop thread only.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "hammer/base/clock.h"
#include "hammer/base/failure.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/resolver.h"
#include "hammer/net/transport.h"

namespace hammer::http {

class HttpClient;
struct Origin;

// When the phases of opening a connection ended (loop time); 0 for those that did not happen.
struct ConnectTimings {
  MonoNanos connect_start = 0;  // first connect(2) attempt
  MonoNanos connect_end = 0;    // TCP connected
  MonoNanos handshake_end = 0;  // TLS handshake done
};

class Connector final : public net::IoHandler {
 public:
  enum class Phase : uint8_t { kIdle, kResolving, kConnecting, kHandshaking, kDone };

  class Owner {
   public:
    virtual ~Owner() = default;
    // The transport is connected (and its TLS handshake done); its socket is now registered
    // for `handler` given to Start (edge-triggered, both directions).
    virtual void OnTransportReady(std::unique_ptr<net::Transport> transport) = 0;
    virtual void OnConnectFailed(Failure failure, std::string detail) = 0;
  };

  Connector(HttpClient* client, const Origin* origin, Owner* owner);
  ~Connector() override;
  Connector(const Connector&) = delete;
  Connector& operator=(const Connector&) = delete;

  // Starts opening a transport; `handler` receives the socket's events once it is ready.
  // `alpn` (TLS wire format, see AlpnWire) is offered on https; empty: the config's default.
  void Start(net::IoHandler* handler, std::string alpn = {});
  // Stops whatever is in progress (closes the socket, forgets the timer); no callback follows.
  void Cancel();

  Phase phase() const { return phase_; }
  const ConnectTimings& timings() const { return timings_; }
  // The phase in progress for messages: "while resolving", "while connecting", "during the
  // TLS handshake".
  std::string_view phase_name() const;

  void OnIoEvents(uint32_t events) override;

 private:
  void OnResolved(const Result<net::AddressList>& addresses);
  void ConnectNext();
  void OnConnectReady();
  void ContinueHandshake();
  void OnConnectTimeout();
  void Succeed();
  void Fail(Failure failure, std::string detail);
  void AddError(const std::string& error);
  void CloseSocket();

  HttpClient* client_;
  net::EventLoop* loop_;
  const Origin* origin_;
  Owner* owner_;
  net::IoHandler* handler_ = nullptr;
  std::string alpn_;
  Phase phase_ = Phase::kIdle;
  std::unique_ptr<net::Transport> transport_;
  net::Timer timer_;  // connect timeout of the address being tried
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // guards the resolver callback
  net::AddressList addresses_;
  size_t next_address_ = 0;
  std::string errors_;
  ConnectTimings timings_;
};

}  // namespace hammer::http
