// ConstantQpsFeeder: the constant-qps strategy of one dark cluster on one event loop. Recent
// eligible requests are kept (copied: StoredRequest) in a ConstantQpsDispatcher and re-sent on
// the cluster's own schedule (Nd x target / Ns per second) whatever the inbound rate, through
// the `send` callback given at construction (DarkProxyHandler sends them as dark copies).
//
// Ownership: owned by its DarkCluster; destroying it cancels its timer and drops the buffered
// requests (rest.li #1132: no orphaned schedule). Threading: the loop's thread only.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "hammer/dark/cluster_shape.h"
#include "hammer/dark/constant_qps_dispatcher.h"
#include "hammer/http/owned_headers.h"
#include "hammer/http/server.h"
#include "hammer/net/event_loop.h"

namespace hammer::dark {

// A request kept for later: head fields and body, owned. Immutable once stored (shared by the
// dispatcher's ring buffer and the copies sent from it).
struct StoredRequest {
  http::OwnedHeaders headers;  // Extra(0) = method, Extra(1) = target
  std::string body;
  std::string client_ip;
  http::BodyFraming framing = http::BodyFraming::kNone;

  static std::shared_ptr<const StoredRequest> From(const http::IncomingRequest& request);
  // Views into this object.
  http::RequestHead Head() const;
};

class ConstantQpsFeeder {
 public:
  using Dispatcher = ConstantQpsDispatcher<std::shared_ptr<const StoredRequest>>;
  using SendFn = std::function<void(const StoredRequest& request)>;

  ConstantQpsFeeder(net::EventLoop* loop, Dispatcher dispatcher, SendFn send);

  // Keeps a copy of an eligible request for the schedule.
  void Offer(const http::IncomingRequest& request);
  // New Ns, Nd or target rate (membership change).
  void SetShape(const ClusterShape& shape);

 private:
  void OnTimer();
  void Rearm();

  Dispatcher dispatcher_;
  SendFn send_;
  net::Timer timer_;
};

}  // namespace hammer::dark
