#include "hammer/serve/serve_group.h"

#include <fmt/format.h>

#include <random>

namespace hammer::serve {

TargetServerGroup::TargetServerGroup(const ServeOptions& options,
                                     std::shared_ptr<http::TlsServerContext> tls,
                                     std::shared_ptr<http::ServerResources> resources)
    : options_(options),
      tls_(std::move(tls)),
      resources_(std::move(resources)),
      loops_(options.threads),
      counts_(options.threads, tls_.get(), resources_.get()) {}

TargetServerGroup::~TargetServerGroup() {
  Stop();
}

Result<std::unique_ptr<TargetServerGroup>> TargetServerGroup::Start(const ServeOptions& options) {
  if (options.threads < 1) return Status::Error("--threads must be at least 1");
  Result<net::SocketAddress> address = net::SocketAddress::Parse(options.listen);
  if (!address.ok()) return Status::Error("--listen: " + address.status().message());
  std::shared_ptr<http::TlsServerContext> tls;
  if (options.tls.enabled()) {
    http::TlsServerOptions tls_options = options.tls;
    if (options.http2) tls_options.alpn = {"h2", "http/1.1"};
    Result<std::shared_ptr<http::TlsServerContext>> created =
        http::TlsServerContext::Create(tls_options);
    if (!created.ok()) return Status::Error("--tls-cert: " + created.status().message());
    tls = std::move(*created);
  }
  std::shared_ptr<http::ServerResources> resources =
      http::CreateServerResources(options.client_limits, /*descriptors_per_connection=*/1);
  http::ServerOptions server;
  server.tls = tls;
  server.header_timeout = options.client_limits.header_timeout;
  server.resources = resources;
  server.http2.enabled = options.http2;
  server.http2.max_concurrent_streams = options.http2_max_concurrent_streams;
  std::unique_ptr<TargetServerGroup> group(
      new TargetServerGroup(options, std::move(tls), std::move(resources)));
  if (Status s = group->loops_.Init(); !s.ok()) return s;
  std::random_device entropy;
  net::SocketAddress bind_to = *address;
  for (int i = 0; i < options.threads; ++i) {
    net::EventLoop* loop = group->loops_.loop(i);
    auto handler = std::make_unique<TargetHandler>(loop, i, &group->options_.target,
                                                   &group->counts_, entropy());
    auto listener = std::make_unique<http::HttpListener>(loop, handler.get(), server);
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

Result<std::string> TargetServerGroup::ReloadTls() {
  if (!tls_) return Status::Error("the server has no TLS certificate to reload");
  if (Status s = tls_->Reload(); !s.ok()) return s;
  return tls_->stats().certificate;
}

std::string TargetServerGroup::TlsSummary() const {
  if (!tls_) return "";
  http::TlsServerStats s = tls_->stats();
  return fmt::format(
      "TLS: {} handshakes ({} resumed), {} failed ({} errors, {} closed by the client, {} timed "
      "out)",
      s.handshakes, s.resumed, s.handshake_failures(), s.failed_error, s.failed_closed,
      s.failed_timeout);
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
