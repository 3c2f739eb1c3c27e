#include "hammer/http/connector.h"

#include <sys/epoll.h>

#include <cstdio>
#include <utility>

#include "hammer/http/client.h"
#include "hammer/http/tls.h"

namespace hammer::http {

namespace {

constexpr uint32_t kEpollEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;

std::string FormatSeconds(Nanos d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3gs", static_cast<double>(d) / kSecond);
  return buf;
}

}  // namespace

Connector::Connector(HttpClient* client, const Origin* origin, Owner* owner)
    : client_(client),
      loop_(client->loop()),
      origin_(origin),
      owner_(owner),
      timer_(client->loop(), [this] { OnConnectTimeout(); }) {}

Connector::~Connector() {
  *alive_ = false;
  CloseSocket();
}

std::string_view Connector::phase_name() const {
  switch (phase_) {
    case Phase::kResolving:
      return "while resolving";
    case Phase::kConnecting:
      return "while connecting";
    case Phase::kHandshaking:
      return "during the TLS handshake";
    case Phase::kIdle:
    case Phase::kDone:
      break;
  }
  return "after connecting";
}

void Connector::Start(net::IoHandler* handler, std::string alpn) {
  Cancel();
  handler_ = handler;
  alpn_ = std::move(alpn);
  errors_.clear();
  timings_ = ConnectTimings{};
  phase_ = Phase::kResolving;
  if (origin_->address) {
    OnResolved(net::AddressList{*origin_->address});
    return;
  }
  if (const Result<net::AddressList>* known = client_->hosts_.Find(origin_->host)) {
    OnResolved(*known);
    return;
  }
  // A later Start (or Cancel) replaces alive_, so an answer to this lookup finds it expired.
  std::weak_ptr<bool> alive = alive_;
  client_->hosts_.Fetch(origin_->host, [this, alive](const Result<net::AddressList>& addresses) {
    if (alive.expired() || phase_ != Phase::kResolving) return;
    OnResolved(addresses);
  });
}

void Connector::Cancel() {
  if (phase_ == Phase::kResolving) {
    *alive_ = false;
    alive_ = std::make_shared<bool>(true);
  }
  timer_.Cancel();
  CloseSocket();
  phase_ = Phase::kIdle;
}

void Connector::OnResolved(const Result<net::AddressList>& addresses) {
  if (!addresses.ok()) {
    Fail(Failure::kDns, addresses.status().message());
    return;
  }
  addresses_ = *addresses;
  next_address_ = 0;
  timings_.connect_start = loop_->now();
  phase_ = Phase::kConnecting;
  ConnectNext();
}

void Connector::AddError(const std::string& error) {
  errors_ += (errors_.empty() ? "" : "; ") + error;
}

void Connector::ConnectNext() {
  while (next_address_ < addresses_.size()) {
    net::SocketAddress address = addresses_[next_address_++];
    address.set_port(origin_->port);
    Result<net::Fd> fd = net::StartConnect(address);
    if (!fd.ok()) {
      AddError(fd.status().message());
      continue;
    }
    int raw = fd->get();
    if (Status s = loop_->Add(raw, kEpollEvents, this); !s.ok()) {
      AddError(s.message());
      continue;
    }
    transport_ = std::make_unique<net::PlainTransport>(std::move(*fd));
    ++client_->counters_.connections_opened;
    timer_.ArmAfter(client_->options().connect_timeout);
    return;
  }
  Fail(Failure::kConnect, errors_.empty() ? "no address to connect to" : errors_);
}

void Connector::OnIoEvents(uint32_t events) {
  if (phase_ == Phase::kConnecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
    OnConnectReady();
  } else if (phase_ == Phase::kHandshaking) {
    ContinueHandshake();
  }
}

void Connector::OnConnectReady() {
  int error = net::TakeSocketError(transport_->fd());
  if (error != 0) {
    net::SocketAddress failed = addresses_[next_address_ - 1];
    failed.set_port(origin_->port);
    AddError(Status::FromErrno("connect " + failed.ToString(), error).message());
    timer_.Cancel();
    CloseSocket();
    ConnectNext();
    return;
  }
  timer_.Cancel();
  timings_.connect_end = loop_->now();
  if (!origin_->tls) {
    Succeed();
    return;
  }
  Result<TlsClientContext*> tls = client_->Tls();
  if (!tls.ok()) {
    Fail(Failure::kTls, tls.status().message());
    return;
  }
  Result<std::unique_ptr<net::Transport>> wrapped =
      (*tls)->Wrap(std::move(transport_), origin_->host, origin_->port, alpn_);
  if (!wrapped.ok()) {
    Fail(Failure::kTls, wrapped.status().message());
    return;
  }
  transport_ = std::move(*wrapped);
  phase_ = Phase::kHandshaking;
  ContinueHandshake();
}

void Connector::ContinueHandshake() {
  net::IoResult r = transport_->Handshake();
  switch (r.kind) {
    case net::IoResult::Kind::kOk:
      timings_.handshake_end = loop_->now();
      Succeed();
      return;
    case net::IoResult::Kind::kWantRead:
    case net::IoResult::Kind::kWantWrite:
      return;  // edge-triggered registration covers both directions
    case net::IoResult::Kind::kEof:
      Fail(Failure::kTls, "connection closed during TLS handshake");
      return;
    case net::IoResult::Kind::kError:
      Fail(Failure::kTls, transport_->last_error());
      return;
  }
}

void Connector::OnConnectTimeout() {
  if (phase_ != Phase::kConnecting) return;
  net::SocketAddress failed = addresses_[next_address_ - 1];
  failed.set_port(origin_->port);
  AddError("connect " + failed.ToString() + ": timed out after " +
           FormatSeconds(client_->options().connect_timeout));
  CloseSocket();
  ConnectNext();
}

void Connector::Succeed() {
  phase_ = Phase::kDone;
  if (Status s = loop_->Modify(transport_->fd(), kEpollEvents, handler_); !s.ok()) {
    Fail(Failure::kOther, s.message());
    return;
  }
  owner_->OnTransportReady(std::move(transport_));
}

void Connector::Fail(Failure failure, std::string detail) {
  timer_.Cancel();
  CloseSocket();
  phase_ = Phase::kIdle;
  owner_->OnConnectFailed(failure, std::move(detail));
}

void Connector::CloseSocket() {
  if (transport_) {
    loop_->Remove(transport_->fd());
    transport_.reset();
  }
}

}  // namespace hammer::http
