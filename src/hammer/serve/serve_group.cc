#include "hammer/serve/serve_group.h"

#include <random>

namespace hammer::serve {

TargetServerGroup::TargetServerGroup(const ServeOptions& options)
    : options_(options), loops_(options.threads), counts_(options.threads) {}

TargetServerGroup::~TargetServerGroup() {
  Stop();
}

Result<std::unique_ptr<TargetServerGroup>> TargetServerGroup::Start(const ServeOptions& options) {
  if (options.threads < 1) return Status::Error("--threads must be at least 1");
  Result<net::SocketAddress> address = net::SocketAddress::Parse(options.listen);
  if (!address.ok()) return Status::Error("--listen: " + address.status().message());
  std::unique_ptr<TargetServerGroup> group(new TargetServerGroup(options));
  if (Status s = group->loops_.Init(); !s.ok()) return s;
  std::random_device entropy;
  net::SocketAddress bind_to = *address;
  for (int i = 0; i < options.threads; ++i) {
    net::EventLoop* loop = group->loops_.loop(i);
    auto handler = std::make_unique<TargetHandler>(loop, i, &group->options_.target,
                                                   &group->counts_, entropy());
    auto listener =
        std::make_unique<http::HttpListener>(loop, handler.get(), http::ServerOptions{});
    if (Status s = listener->Listen(bind_to, /*reuse_port=*/true); !s.ok()) return s;
    // Port 0 picks a free port once; the other loops join that port.
    bind_to = listener->local_address();
    group->handlers_.push_back(std::move(handler));
    group->listeners_.push_back(std::move(listener));
  }
  group->address_ = bind_to;
  group->loops_.Start();
  return group;
}

void TargetServerGroup::Stop() {
  if (stopped_) return;
  stopped_ = true;
  loops_.StopAll();
  loops_.Join();
  listeners_.clear();
  handlers_.clear();
}

}  // namespace hammer::serve
