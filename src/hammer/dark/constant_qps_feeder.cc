#include "hammer/dark/constant_qps_feeder.h"

#include <utility>

namespace hammer::dark {

std::shared_ptr<const StoredRequest> StoredRequest::From(const http::IncomingRequest& request) {
  auto stored = std::make_shared<StoredRequest>();
  const std::string_view extra[] = {request.head.method, request.head.target};
  stored->headers.Assign(request.head.headers, extra);
  stored->body.assign(request.body);
  stored->client_ip.assign(request.client_ip);
  stored->framing = request.head.framing;
  return stored;
}

http::RequestHead StoredRequest::Head() const {
  http::RequestHead head;
  head.method = headers.Extra(0);
  head.target = headers.Extra(1);
  head.headers = headers.headers();
  head.framing = framing;
  return head;
}

ConstantQpsFeeder::ConstantQpsFeeder(net::EventLoop* loop, Dispatcher dispatcher, SendFn send)
    : dispatcher_(std::move(dispatcher)),
      send_(std::move(send)),
      timer_(loop, [this] { OnTimer(); }) {}

void ConstantQpsFeeder::Offer(const http::IncomingRequest& request) {
  dispatcher_.Offer(StoredRequest::From(request), MonoNow());
  Rearm();
}

void ConstantQpsFeeder::SetShape(const ClusterShape& shape) {
  dispatcher_.SetShape(shape, MonoNow());
  Rearm();
}

void ConstantQpsFeeder::OnTimer() {
  dispatcher_.Due(MonoNow(),
                  [this](const std::shared_ptr<const StoredRequest>& request) { send_(*request); });
  Rearm();
}

void ConstantQpsFeeder::Rearm() {
  MonoNanos next = dispatcher_.NextWakeup();
  if (next == Dispatcher::kNever) {
    timer_.Cancel();
  } else {
    timer_.ArmAt(next);
  }
}

}  // namespace hammer::dark
