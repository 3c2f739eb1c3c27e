#include "hammer/http/server.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

#include "hammer/http/owned_headers.h"

namespace hammer::http {

namespace {

constexpr uint32_t kEpollEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
constexpr Nanos kLingerTime = 5 * kSecond;  // how long a refused client may keep sending

void AppendNumber(std::string& out, uint64_t n) {
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof(buf), n).ptr;
  out.append(buf, end);
}

}  // namespace

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
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

// One accepted connection. States: the TLS handshake (TLS only) -> reading a request ->
// waiting for the handler's answer -> writing it -> reading the next; closing once the output
// drains when keep-alive ends.
class ServerConnection final : public net::IoHandler,
                               public net::Deletable,
                               private RequestParser::Visitor {
 public:
  ServerConnection(HttpListener* listener, std::unique_ptr<net::Transport> transport)
      : listener_(listener),
        loop_(listener->loop_),
        transport_(std::move(transport)),
        handshaking_(listener->options_.tls != nullptr),
        parser_(listener->options_.limits),
        idle_timer_(listener->loop_, [this] { OnIdleTimeout(); }) {
    Result<net::SocketAddress> peer = net::PeerAddress(transport_->fd());
    if (peer.ok()) client_ip_ = peer->Ip();
  }

  ~ServerConnection() override { *alive_ = false; }

  Status Register() {
    idle_timer_.ArmAfter(handshaking_ ? listener_->options_.tls->options().handshake_timeout
                                      : listener_->options_.idle_timeout);
    return loop_->Add(transport_->fd(), kEpollEvents, this);
  }

  void OnIoEvents(uint32_t events) override {
    if (closed_) return;
    if (handshaking_) {
      ContinueHandshake();
      if (handshaking_ || closed_) return;
      // The request may have come with the handshake's last flight: read it now, since the
      // edge that brought it has been consumed.
      events |= EPOLLIN;
    }
    if (lingering_) {
      DrainLingering();
      return;
    }
    if (events & EPOLLOUT) Flush();
    if (!closed_ && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
      ReadAndServe(/*peer_closing=*/(events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
    }
  }

  bool KeepsAlive() const { return request_keep_alive_ && !listener_->draining_; }

  // Draining: an idle connection closes now; a busy one after its current response.
  void Drain() {
    if (closed_) return;
    if (!awaiting_response_ && !parser_.started() && in_end_ == in_start_ &&
        out_sent_ == out_.size()) {
      Close();
    }
  }

  void Respond(uint64_t sequence, int status, std::string_view content_type, std::string_view body,
               std::span<const Header> extra) {
    if (closed_ || sequence != sequence_ || !awaiting_response_) return;
    bool keep_alive = KeepsAlive();
    out_.append("HTTP/1.1 ");
    AppendNumber(out_, static_cast<uint64_t>(status));
    out_.append(" ").append(ReasonPhrase(status)).append("\r\n");
    if (!content_type.empty()) out_.append("Content-Type: ").append(content_type).append("\r\n");
    for (const Header& h : extra)
      out_.append(h.name).append(": ").append(h.value).append("\r\n");
    out_.append("Content-Length: ");
    AppendNumber(out_, body.size());
    out_.append(keep_alive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n");
    if (!request_was_head_) out_.append(body);
    Answered(keep_alive);
  }

  void RespondRaw(uint64_t sequence, std::string_view bytes, bool keep_alive) {
    if (closed_ || sequence != sequence_ || !awaiting_response_) return;
    out_.append(bytes);
    Answered(keep_alive && KeepsAlive());
  }

  void RespondRawThenReset(uint64_t sequence, std::string_view bytes) {
    if (closed_ || sequence != sequence_ || !awaiting_response_) return;
    out_.append(bytes);
    awaiting_response_ = false;
    Flush();
    if (closed_) return;
    linger reset{1, 0};  // close() with a zero linger sends RST instead of FIN
    setsockopt(transport_->fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    Close();
  }

 private:
  void ContinueHandshake() {
    net::IoResult r = transport_->Handshake();
    switch (r.kind) {
      case net::IoResult::Kind::kOk:
        handshaking_ = false;
        idle_timer_.ArmAfter(listener_->options_.idle_timeout);
        return;
      case net::IoResult::Kind::kWantRead:
      case net::IoResult::Kind::kWantWrite:
        return;  // edge-triggered registration covers both directions
      case net::IoResult::Kind::kEof:
      case net::IoResult::Kind::kError:
        Close();  // counted by the TLS context
        return;
    }
  }

  // Idle means no request in progress: a handler slower than the idle timeout is not cut off,
  // and the idle time counts from its answer.
  void OnIdleTimeout() {
    if (handshaking_) {
      listener_->options_.tls->CountHandshakeTimeout();
      Close();
      return;
    }
    if (awaiting_response_ && !lingering_) {
      idle_timer_.ArmAfter(listener_->options_.idle_timeout);
      return;
    }
    Close();
  }

  void Answered(bool keep_alive) {
    awaiting_response_ = false;
    idle_timer_.ArmAfter(listener_->options_.idle_timeout);
    if (!keep_alive) close_after_flush_ = true;
    Flush();
    // Requests that arrived pipelined behind this one are served now (unless this answer came
    // synchronously from inside ServeBuffered, whose loop continues by itself).
    if (!serving_ && !closed_ && !close_after_flush_ && in_end_ > in_start_) ServeBuffered();
  }

  void ReadAndServe(bool peer_closing) {
    while (!closed_) {
      if (in_end_ == in_.size()) {
        if (in_start_ > 0) {
          std::copy(in_.begin() + static_cast<std::ptrdiff_t>(in_start_),
                    in_.begin() + static_cast<std::ptrdiff_t>(in_end_), in_.begin());
          in_end_ -= in_start_;
          in_start_ = 0;
        } else {
          in_.resize(std::max<size_t>(16 * 1024, in_.size() * 2));
        }
      }
      const size_t room = in_.size() - in_end_;
      net::IoResult r = transport_->Read(in_.data() + in_end_, room);
      if (r.kind == net::IoResult::Kind::kWantRead) break;
      if (r.kind == net::IoResult::Kind::kEof || r.kind == net::IoResult::Kind::kError) {
        // The client is gone (or half-closed); nothing more can be answered usefully.
        Close();
        return;
      }
      in_end_ += r.bytes;
      idle_timer_.ArmAfter(listener_->options_.idle_timeout);
      if (!awaiting_response_) ServeBuffered();
      // A short read drained the socket; the next edge brings whatever comes next (a close
      // already announced by this event would not come again: read on until EOF then).
      if (r.bytes < room && !peer_closing && transport_->short_read_drains()) break;
    }
  }

  void ServeBuffered() {
    serving_ = true;
    ServeBufferedLoop();
    serving_ = false;
  }

  void ServeBufferedLoop() {
    while (!closed_ && !awaiting_response_ && !close_after_flush_ && in_end_ > in_start_) {
      Progress p =
          parser_.Feed(std::string_view(in_.data() + in_start_, in_end_ - in_start_), *this);
      in_start_ += p.consumed;
      if (in_start_ == in_end_) in_start_ = in_end_ = 0;
      if (p.state == Progress::State::kError) {
        RejectMalformed(p.error);
        return;
      }
      if (p.state == Progress::State::kNeedMore) return;
      // kComplete: OnHead/OnBody have collected (copied) the request; hand it over.
      parser_.Reset();
      Dispatch();
    }
  }

  void OnHead(const RequestHead& head) override {
    head_ = head;
    body_.clear();
    if (head.expect_continue) {
      out_.append("HTTP/1.1 100 Continue\r\n\r\n");
      Flush();
    }
    // The views point into in_, which is compacted when a body spans several reads: copy.
    CopyHead(head);
  }

  void OnBody(std::string_view data) override { body_.append(data); }

  void CopyHead(const RequestHead& head) {
    const std::string_view extra[] = {head.method, head.target};
    head_copy_.Assign(head.headers, extra);
    head_.method = head_copy_.Extra(0);
    head_.target = head_copy_.Extra(1);
    head_.headers = head_copy_.headers();
  }

  void Dispatch() {
    ++listener_->counters_.requests;
    ++sequence_;
    awaiting_response_ = true;
    request_keep_alive_ = head_.keep_alive;
    request_was_head_ = head_.method == "HEAD";
    IncomingRequest request{head_, body_, client_ip_};
    listener_->handler_->OnRequest(request, Responder(this, alive_, sequence_));
  }

  void RejectMalformed(ParseError error) {
    ++listener_->counters_.bad_requests;
    int status = 400;
    if (error == ParseError::kHeadTooLarge || error == ParseError::kTooManyHeaders) status = 431;
    if (error == ParseError::kBodyTooLarge) status = 413;
    if (error == ParseError::kUnsupportedTransferCoding) status = 501;
    ++sequence_;
    awaiting_response_ = true;
    request_keep_alive_ = false;
    request_was_head_ = false;
    std::string body(ParseErrorName(error));
    body.append("\n");
    // The client may still be sending what we refused: read and drop it before closing, or
    // the close would reset the connection and the client might never see this answer.
    linger_after_flush_ = true;
    Respond(sequence_, status, "text/plain", body, {});
  }

  // Lingering close (as nginx does): stop writing, drain input for a while, then close.
  void StartLingering() {
    lingering_ = true;
    shutdown(transport_->fd(), SHUT_WR);
    idle_timer_.ArmAfter(kLingerTime);
    DrainLingering();
  }

  void DrainLingering() {
    char scratch[16 * 1024];
    while (true) {
      net::IoResult r = transport_->Read(scratch, sizeof(scratch));
      if (r.kind == net::IoResult::Kind::kWantRead) return;
      if (r.kind != net::IoResult::Kind::kOk) {
        Close();
        return;
      }
    }
  }

  void Flush() {
    while (out_sent_ < out_.size()) {
      iovec iov{out_.data() + out_sent_, out_.size() - out_sent_};
      net::IoResult r = transport_->Write(&iov, 1);
      if (r.kind == net::IoResult::Kind::kWantWrite) return;
      if (r.kind != net::IoResult::Kind::kOk) {
        Close();
        return;
      }
      out_sent_ += r.bytes;
    }
    out_.clear();
    out_sent_ = 0;
    if (close_after_flush_ && linger_after_flush_ && !lingering_) {
      StartLingering();
    } else if (close_after_flush_) {
      Close();
    }
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    idle_timer_.Cancel();
    loop_->Remove(transport_->fd());
    auto it = listener_->connections_.find(this);
    if (it != listener_->connections_.end()) {
      std::unique_ptr<ServerConnection> self = std::move(it->second);
      listener_->connections_.erase(it);
      listener_->open_connections_.fetch_sub(1, std::memory_order_relaxed);
      loop_->DeleteLater(std::move(self));
    }
  }

  HttpListener* listener_;
  net::EventLoop* loop_;
  std::unique_ptr<net::Transport> transport_;
  bool handshaking_;
  RequestParser parser_;
  net::Timer idle_timer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::string client_ip_;
  std::string in_;
  size_t in_start_ = 0;
  size_t in_end_ = 0;
  std::string out_;
  size_t out_sent_ = 0;
  RequestHead head_;
  OwnedHeaders head_copy_;
  std::string body_;
  uint64_t sequence_ = 0;
  bool awaiting_response_ = false;
  bool request_keep_alive_ = true;
  bool request_was_head_ = false;
  bool close_after_flush_ = false;
  bool closed_ = false;
  bool serving_ = false;
  bool linger_after_flush_ = false;
  bool lingering_ = false;
};

bool Responder::alive() const {
  return !alive_.expired();
}

bool Responder::keeps_alive() const {
  return !alive_.expired() && connection_->KeepsAlive();
}

void Responder::Respond(int status, std::string_view content_type, std::string_view body,
                        std::span<const Header> extra_headers) {
  if (alive_.expired()) return;
  connection_->Respond(sequence_, status, content_type, body, extra_headers);
}

void Responder::RespondRaw(std::string_view bytes, bool keep_alive) {
  if (alive_.expired()) return;
  connection_->RespondRaw(sequence_, bytes, keep_alive);
}

void Responder::RespondRawThenReset(std::string_view bytes) {
  if (alive_.expired()) return;
  connection_->RespondRawThenReset(sequence_, bytes);
}

HttpListener::HttpListener(net::EventLoop* loop, RequestHandler* handler, ServerOptions options)
    : loop_(loop), handler_(handler), options_(std::move(options)) {}

HttpListener::~HttpListener() {
  if (fd_.valid()) loop_->Remove(fd_.get());
  auto connections = std::move(connections_);
  connections_.clear();
  open_connections_.store(0, std::memory_order_relaxed);
}

void HttpListener::StartDraining() {
  if (draining_) return;
  draining_ = true;
  if (fd_.valid()) {
    loop_->Remove(fd_.get());
    fd_.Reset();
  }
  std::vector<ServerConnection*> open;
  open.reserve(connections_.size());
  for (auto& [connection, owned] : connections_)
    open.push_back(connection);
  for (ServerConnection* connection : open)
    connection->Drain();
}

Status HttpListener::Listen(const net::SocketAddress& address, bool reuse_port) {
  Result<net::Fd> fd = net::Listen(address, reuse_port);
  if (!fd.ok()) return fd.status();
  Result<net::SocketAddress> local = net::LocalAddress(fd->get());
  if (!local.ok()) return local.status();
  local_ = *local;
  fd_ = std::move(*fd);
  return loop_->Add(fd_.get(), EPOLLIN | EPOLLET, this);
}

void HttpListener::OnIoEvents(uint32_t /*events*/) {
  while (fd_.valid()) {
    Result<net::Fd> fd = net::Accept(fd_.get());
    if (!fd.ok() || !fd->valid()) return;  // EAGAIN, or out of descriptors: retry on next edge
    std::unique_ptr<net::Transport> transport =
        std::make_unique<net::PlainTransport>(std::move(*fd));
    if (options_.tls) {
      Result<std::unique_ptr<net::Transport>> wrapped = options_.tls->Wrap(std::move(transport));
      if (!wrapped.ok()) continue;  // OpenSSL out of memory: the socket closes with it
      transport = std::move(*wrapped);
    }
    auto connection = std::make_unique<ServerConnection>(this, std::move(transport));
    if (!connection->Register().ok()) continue;
    ++counters_.connections_accepted;
    ServerConnection* raw = connection.get();
    connections_.emplace(raw, std::move(connection));
    open_connections_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace hammer::http
