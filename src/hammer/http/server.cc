#include "hammer/http/server.h"

#include <sys/epoll.h>

#include <utility>

#include "hammer/http/listener_context.h"
#include "hammer/http/server_connection.h"

namespace hammer::http {

namespace {
// After a failed accept(2) that could not be shed, accepting is tried again this soon (an
// edge-triggered listener hears of connections already pending only from a new one).
constexpr Nanos kAcceptRetry = 100 * kMillisecond;
}  // namespace

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 101:
      return "Switching Protocols";
    case 102:
      return "Processing";
    case 103:
      return "Early Hints";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

HttpListener::HttpListener(net::EventLoop* loop, RequestHandler* handler, ServerOptions options)
    : context_(std::make_unique<ListenerContext>(loop, handler, std::move(options))),
      accept_retry_(loop, [this] { AcceptPending(); }) {}

HttpListener::~HttpListener() {
  if (fd_.valid()) context_->loop->Remove(fd_.get());
  context_.reset();  // its table destroys the connections still open
}

bool HttpListener::draining() const {
  return context_->draining;
}

size_t HttpListener::open_connections() const {
  return context_ ? context_->open_connections.load(std::memory_order_relaxed) : 0;
}

ServerResources& HttpListener::resources() {
  return *context_->resources;
}

uint64_t HttpListener::requests() const {
  return context_->requests;
}

void HttpListener::StartDraining() {
  if (context_->draining) return;
  context_->draining = true;
  accept_retry_.Cancel();
  if (fd_.valid()) {
    context_->loop->Remove(fd_.get());
    fd_.Reset();
  }
  for (ConnectionTable::Entry* connection : context_->connections.All())
    connection->Drain();
}

Status HttpListener::Listen(const net::SocketAddress& address, bool reuse_port) {
  Result<net::Fd> fd = net::Listen(address, reuse_port);
  if (!fd.ok()) return fd.status();
  Result<net::SocketAddress> local = net::LocalAddress(fd->get());
  if (!local.ok()) return local.status();
  local_ = *local;
  fd_ = std::move(*fd);
  spare_ = net::OpenSpareDescriptor();
  return context_->loop->Add(fd_.get(), EPOLLIN | EPOLLET, this);
}

void HttpListener::OnIoEvents(uint32_t /*events*/) {
  AcceptPending();
}

void HttpListener::AcceptPending() {
  ServerResources& resources = *context_->resources;
  while (fd_.valid()) {
    net::Accepted accepted = net::Accept(fd_.get());
    switch (accepted.kind) {
      case net::Accepted::Kind::kConnection:
        break;
      case net::Accepted::Kind::kNone:
        return;
      case net::Accepted::Kind::kOutOfDescriptors:
        if (context_->loop->deletions_pending()) {
          // Connections closed in this iteration (evicted ones among them) still hold their
          // descriptors: accept again once they are destroyed, in a later pass.
          accept_retry_.ArmAfter(0);
          return;
        }
        if (ShedPendingConnection()) continue;
        accept_retry_.ArmAfter(kAcceptRetry);
        return;
      case net::Accepted::Kind::kError:
        accept_retry_.ArmAfter(kAcceptRetry);
        return;
    }
    if (!Admit()) {
      resources.Count(Rejection::kConnectionLimit);
      continue;  // the descriptor closes here: the client sees its connection closed at once
    }
    std::unique_ptr<net::Transport> transport =
        std::make_unique<net::PlainTransport>(std::move(accepted.fd));
    if (context_->options.tls) {
      Result<std::unique_ptr<net::Transport>> wrapped =
          context_->options.tls->Wrap(std::move(transport));
      if (!wrapped.ok()) {  // OpenSSL out of memory: the socket closes with it
        resources.CloseConnection();
        continue;
      }
      transport = std::move(*wrapped);
    }
    auto connection = std::make_unique<ServerConnection>(context_.get(), std::move(transport));
    if (!connection->Register().ok()) continue;  // its destructor gives the slot back
    context_->connections.Add(std::move(connection));
    context_->open_connections.fetch_add(1, std::memory_order_relaxed);
  }
}

// Takes a connection slot; at the cap, the connection table's eviction candidate (the oldest
// idle connection, else the oldest still sending its head) is closed to make room.
bool HttpListener::Admit() {
  ServerResources& resources = *context_->resources;
  if (resources.TryOpenConnection()) return true;
  ConnectionTable::Entry* candidate = context_->connections.EvictionCandidate();
  if (candidate == nullptr) return false;
  candidate->Evict();  // gives its slot back now, its descriptor after this iteration
  return resources.TryOpenConnection();
}

// Out of descriptors: the spare one is given up to accept the pending connection, which is
// closed at once, then taken back. Without this the client would wait for a timeout.
bool HttpListener::ShedPendingConnection() {
  if (!spare_.valid()) return false;
  spare_.Reset();
  net::Accepted accepted = net::Accept(fd_.get());
  bool shed = accepted.kind == net::Accepted::Kind::kConnection;
  if (shed) context_->resources->Count(Rejection::kOutOfDescriptors);
  accepted.fd.Reset();
  spare_ = net::OpenSpareDescriptor();
  return shed;
}

}  // namespace hammer::http
