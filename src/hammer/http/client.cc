#include "hammer/http/client.h"

#include <sys/epoll.h>

#include <utility>

#include "hammer/http/client_connection.h"
#include "hammer/http/h2_client_connection.h"

namespace hammer::http {

HttpClient::HttpClient(net::EventLoop* loop, net::Resolver* resolver, ClientOptions options)
    : loop_(loop), hosts_(loop, resolver, options.dns_ttl), options_(std::move(options)) {}

HttpClient::~HttpClient() {
  // Connections unregister from the pools and connection maps as they close; take them out
  // first.
  auto connections = std::move(connections_);
  connections_.clear();
  pools_.clear();
  auto h2_connections = std::move(h2_connections_);
  h2_connections_.clear();
  h2_pools_.clear();
}

const Origin* HttpClient::GetOrigin(const Url& url) {
  // A list of distinct URLs on one host asks for the same origin every time: answer it without
  // building its key ("scheme://host:port", two allocations) and hashing it.
  if (last_origin_ != nullptr && last_origin_->port == url.port && last_origin_->tls == url.tls() &&
      last_origin_->host == url.host) {
    return last_origin_;
  }
  std::string key = url.Origin();
  auto it = origins_.find(key);
  if (it != origins_.end()) return last_origin_ = it->second.get();
  auto origin = std::make_unique<Origin>();
  origin->key = key;
  origin->host = url.host;
  origin->port = url.port;
  origin->tls = url.tls();
  origin->host_header = url.HostHeader();
  origin->http2 = options_.http2.enabled;
  last_origin_ = origin.get();
  origins_.emplace(std::move(key), std::move(origin));
  return last_origin_;
}

const Origin* HttpClient::GetOrigin(const Url& url, const net::SocketAddress* address) {
  if (address == nullptr) return GetOrigin(url);
  std::string key = url.Origin() + " " + address->Ip();
  auto it = origins_.find(key);
  if (it != origins_.end()) return it->second.get();
  auto origin = std::make_unique<Origin>(*GetOrigin(url));
  origin->key = key;
  origin->address = *address;
  const Origin* pinned = origin.get();
  origins_.emplace(std::move(key), std::move(origin));
  return pinned;
}

Result<TlsClientContext*> HttpClient::Tls() {
  if (!tls_ && options_.tls_config) {
    tls_ = std::make_unique<TlsClientContext>(options_.tls_config);
  } else if (!tls_) {
    Result<std::unique_ptr<TlsClientContext>> created = TlsClientContext::Create(options_.tls);
    if (!created.ok()) return created.status();
    tls_ = std::move(*created);
  }
  return tls_.get();
}

TlsCounters HttpClient::tls_counters() const {
  return tls_ ? tls_->counters() : TlsCounters{};
}

void HttpClient::Send(const ClientRequest& request, ResponseHandler* handler) {
  if (request.origin->http2) {
    SendH2(request, handler, /*is_retry=*/false);
    return;
  }
  ++send_depth_;  // failures found before Send returns are reported later (see Complete)
  Pool& pool = pools_[request.origin];
  if (!pool.idle.empty()) {
    ClientConnection* connection = pool.idle.back();
    pool.idle.pop_back();
    ++counters_.connections_reused;
    connection->StartReused(request, handler);
  } else {
    StartOnNewConnection(request, handler, /*retry=*/false);
  }
  --send_depth_;
}

void HttpClient::Complete(ResponseHandler* handler, ExchangeResult result) {
  if (send_depth_ == 0) {
    handler->OnResponseComplete(result);
    return;
  }
  // Never call a handler from inside its own Send: a closed-loop generator against a dead
  // server would otherwise recurse once per request.
  ++posted_completions_;
  std::weak_ptr<bool> token = completion_token_;
  loop_->Post([this, token, handler, result = std::move(result)] {
    if (token.expired()) return;  // cancelled, or the client is gone
    --posted_completions_;
    handler->OnResponseComplete(result);
  });
}

void HttpClient::StartOnNewConnection(const ClientRequest& request, ResponseHandler* handler,
                                      bool retry) {
  auto owned = std::make_unique<ClientConnection>(this, request.origin);
  ClientConnection* connection = owned.get();
  connections_.emplace(connection, std::move(owned));
  connection->StartFresh(request, handler, retry);
}

void HttpClient::ReturnToPool(ClientConnection* connection) {
  Pool& pool = pools_[connection->origin()];
  if (reuse_stopped_ || pool.idle.size() >= options_.max_idle_per_origin) {
    connection->Close();
    return;
  }
  pool.idle.push_back(connection);
}

void HttpClient::RemoveFromPool(ClientConnection* connection) {
  auto it = pools_.find(connection->origin());
  if (it == pools_.end()) return;
  auto& idle = it->second.idle;
  for (size_t i = 0; i < idle.size(); ++i) {
    if (idle[i] == connection) {
      idle[i] = idle.back();
      idle.pop_back();
      return;
    }
  }
}

void HttpClient::Destroy(ClientConnection* connection) {
  auto it = connections_.find(connection);
  if (it == connections_.end()) return;
  std::unique_ptr<ClientConnection> owned = std::move(it->second);
  connections_.erase(it);
  loop_->DeleteLater(std::move(owned));
}

void HttpClient::SendH2(const ClientRequest& request, ResponseHandler* handler, bool is_retry) {
  ++send_depth_;
  std::vector<H2ClientConnection*>& pool = h2_pools_[request.origin];
  H2ClientConnection* chosen = nullptr;
  for (H2ClientConnection* connection : pool) {
    if (connection->HasRoom()) {
      chosen = connection;
      break;
    }
  }
  if (chosen != nullptr) {
    ++counters_.connections_reused;
    chosen->Send(request, handler, /*fresh=*/false, is_retry);
  } else {
    auto owned = std::make_unique<H2ClientConnection>(this, request.origin);
    chosen = owned.get();
    h2_connections_.emplace(chosen, std::move(owned));
    pool.push_back(chosen);
    chosen->Send(request, handler, /*fresh=*/true, is_retry);
    chosen->Open();
  }
  --send_depth_;
}

void HttpClient::Destroy(H2ClientConnection* connection) {
  auto it = h2_connections_.find(connection);
  if (it == h2_connections_.end()) return;
  std::unique_ptr<H2ClientConnection> owned = std::move(it->second);
  h2_connections_.erase(it);
  std::erase(h2_pools_[connection->origin()], connection);
  loop_->DeleteLater(std::move(owned));
}

void HttpClient::FallBackToHttp1(const Origin* origin) {
  auto it = origins_.find(origin->key);
  if (it != origins_.end()) it->second->http2 = false;
}

void HttpClient::ContinueOnHttp1(std::unique_ptr<net::Transport> transport,
                                 const ConnectTimings& timings, const ClientRequest& request,
                                 ResponseHandler* handler) {
  auto owned = std::make_unique<ClientConnection>(this, request.origin);
  ClientConnection* connection = owned.get();
  connections_.emplace(connection, std::move(owned));
  if (Status s =
          loop_->Modify(transport->fd(), EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, connection);
      !s.ok()) {
    // Not registered: a fresh connection of its own serves the exchange instead.
    connections_.erase(connection);
    StartOnNewConnection(request, handler, /*retry=*/false);
    return;
  }
  connection->StartOnTransport(std::move(transport), timings, request, handler);
}

size_t HttpClient::CancelAll() {
  size_t abandoned = posted_completions_;
  posted_completions_ = 0;
  completion_token_ = std::make_shared<bool>(true);
  CloseIdle();
  std::vector<ClientConnection*> open;
  open.reserve(connections_.size());
  for (auto& [connection, owned] : connections_)
    open.push_back(connection);
  for (ClientConnection* connection : open) {
    if (connection->Abandon()) ++abandoned;
  }
  std::vector<H2ClientConnection*> open_h2;
  open_h2.reserve(h2_connections_.size());
  for (auto& [connection, owned] : h2_connections_)
    open_h2.push_back(connection);
  for (H2ClientConnection* connection : open_h2)
    abandoned += connection->Abandon();
  return abandoned;
}

void HttpClient::StopReuse() {
  if (reuse_stopped_) return;
  reuse_stopped_ = true;
  CloseIdle();
}

void HttpClient::CloseIdle() {
  for (auto& [origin, pool] : pools_) {
    std::vector<ClientConnection*> idle = std::move(pool.idle);
    pool.idle.clear();
    for (ClientConnection* connection : idle)
      connection->Close();
  }
  std::vector<H2ClientConnection*> idle_h2;
  for (auto& [connection, owned] : h2_connections_) {
    if (connection->exchanges() == 0) idle_h2.push_back(connection);
  }
  for (H2ClientConnection* connection : idle_h2)
    connection->Close();
}

void HttpClient::CloseIdle(const Origin* origin) {
  if (auto it = pools_.find(origin); it != pools_.end()) {
    std::vector<ClientConnection*> idle = std::move(it->second.idle);
    it->second.idle.clear();
    for (ClientConnection* connection : idle)
      connection->Close();
  }
  if (auto it = h2_pools_.find(origin); it != h2_pools_.end()) {
    std::vector<H2ClientConnection*> idle_h2;
    for (H2ClientConnection* connection : it->second) {
      if (connection->exchanges() == 0) idle_h2.push_back(connection);
    }
    for (H2ClientConnection* connection : idle_h2)
      connection->Close();
  }
}

}  // namespace hammer::http
