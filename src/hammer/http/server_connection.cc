#include "hammer/http/server_connection.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <utility>

namespace hammer::http {

namespace {

constexpr Nanos kLingerTime = 5 * kSecond;  // how long a refused client may keep sending
// A buffer grown past this for one large message is given back once it is empty again.
constexpr size_t kKeepCapacity = 64 * 1024;
constexpr std::string_view kRequestTimeout =
    "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

void ReleaseIfLarge(std::string& buffer) {
  if (buffer.empty() && buffer.capacity() > kKeepCapacity) std::string().swap(buffer);
}

}  // namespace

ServerConnection::ServerConnection(HttpListener* listener,
                                   std::unique_ptr<net::Transport> transport)
    : listener_(listener),
      loop_(listener->loop_),
      resources_(listener->resources_.get()),
      transport_(std::move(transport)),
      parser_(listener->options_.limits),
      timer_(listener->loop_, [this] { OnTimer(); }),
      input_cap_(listener->options_.limits.max_head_bytes + kReadChunk),
      charge_(&listener->resources_->budget()),
      may_be_preface_(listener->options_.http2.enabled && listener->options_.tls == nullptr) {
  head_clock_.accepted = loop_->now();
  Result<net::SocketAddress> peer = net::PeerAddress(transport_->fd());
  if (peer.ok()) client_ip_ = peer->Ip();
}

ServerConnection::~ServerConnection() {
  *alive_ = false;
  // Destroyed with its listener, still open: give its slot back, and let go of its streams.
  if (phase_ != Phase::kClosed) {
    resources_->CloseConnection();
    ReleaseStreams();
  }
}

Status ServerConnection::Register() {
  if (Status s = loop_->Add(transport_->fd(), kWatchInput, this); !s.ok()) return s;
  if (listener_->options_.tls == nullptr) {
    EnterHead();
    return Status::Ok();
  }
  phase_ = Phase::kHandshake;
  waiting_since_ = loop_->now();
  listener_->connections_->StartWaiting(this);
  timer_.ArmAt(std::min(HandshakeDeadline(), FirstHeadDeadline()));
  return Status::Ok();
}

// The head deadline of a TLS connection counts from the accept, like a plain one's, so the
// handshake is part of the time the first head has: a slow client holds a descriptor and a
// connection slot from the accept, and would otherwise hold it for both deadlines in turn
// (handshake_timeout, then header_timeout). The handshake keeps its own, possibly shorter,
// deadline and its own counter; whichever is earlier closes the connection.
MonoNanos ServerConnection::HandshakeDeadline() const {
  return head_clock_.accepted + listener_->options_.tls->options().handshake_timeout;
}

MonoNanos ServerConnection::FirstHeadDeadline() const {
  const ServerOptions& options = listener_->options_;
  return HeadDeadline(head_clock_, options.header_timeout, options.idle_timeout);
}

// --- kHandshake ----------------------------------------------------------------------------

void ServerConnection::ContinueHandshake() {
  net::IoResult r = transport_->Handshake();
  switch (r.kind) {
    case net::IoResult::Kind::kOk:
      if (listener_->options_.http2.enabled && transport_->application_protocol() == "h2") {
        StartHttp2({});
        return;
      }
      EnterHead();
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

// --- kHead ---------------------------------------------------------------------------------

void ServerConnection::EnterHead() {
  phase_ = Phase::kHead;
  waiting_since_ = loop_->now();
  listener_->connections_->StartWaiting(this);
  const ServerOptions& options = listener_->options_;
  timer_.ArmAt(HeadDeadline(head_clock_, options.header_timeout, options.idle_timeout));
}

// The first bytes of a head are in: from now on the head deadline, not the idle timeout, runs
// (the first request's deadline already counts from the accept).
void ServerConnection::OnHeadBytes() {
  head_clock_.head_started = loop_->now();
  if (head_clock_.first_request) return;
  const ServerOptions& options = listener_->options_;
  timer_.ArmAt(HeadDeadline(head_clock_, options.header_timeout, options.idle_timeout));
}

void ServerConnection::Evict() {
  resources_->Count(Rejection::kEvicted);
  Close();
}

void ServerConnection::Drain() {
  if (phase_ == Phase::kHttp2) {
    http2_->Drain();
    return;
  }
  if (phase_ == Phase::kHandshake) {
    Close();
    return;
  }
  if (phase_ == Phase::kHead && !parser_.started() && in_end_ == in_start_ &&
      out_sent_ == out_.size()) {
    Close();
  }
}

// --- Events, parsing and dispatch (reading is in server_input.cc) -------------------------

void ServerConnection::OnIoEvents(uint32_t events) {
  if (phase_ == Phase::kClosed) return;
  if (phase_ == Phase::kHttp2) {
    http2_->OnIoEvents(events);
    if (phase_ != Phase::kClosed) UpdateCharge();
    return;
  }
  if (phase_ == Phase::kHandshake) {
    ContinueHandshake();
    if (phase_ != Phase::kHead) return;
    // The request may have come with the handshake's last flight: read it now, since the edge
    // that brought it has been consumed.
    events |= EPOLLIN;
  }
  if (phase_ == Phase::kLingering) {
    DrainLingering();
    return;
  }
  if (events & EPOLLOUT) Flush();
  if (phase_ == Phase::kClosed) return;
  const bool peer_closing = (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
  if (reading_paused_) {
    // Input is not watched, so this is the peer closing (or half-closing) its side. As when
    // it is read (EOF): the client is gone, nothing more can usefully be answered. A client
    // that half-closes after its last request still gets an answer being written.
    // A tunnel's client may half-close and still read what the other side sends.
    if ((events & (EPOLLHUP | EPOLLERR)) ||
        (peer_closing && phase_ != Phase::kClosing && !tunnel_)) {
      Close();
    }
    return;
  }
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) OnReadable(peer_closing);
  if (phase_ != Phase::kClosed) UpdateCharge();
}

void ServerConnection::ServeBuffered() {
  if (serving_ || in_end_ == in_start_) return;
  size_t used = ParseAndDispatch(std::string_view(in_.data() + in_start_, in_end_ - in_start_));
  if (phase_ == Phase::kClosed) return;
  in_start_ += used;
  if (in_start_ == in_end_ || phase_ == Phase::kClosing || phase_ == Phase::kLingering) {
    in_start_ = in_end_ = 0;
    if (phase_ != Phase::kServing) std::string().swap(in_);  // an idle connection holds none
  }
  if (phase_ == Phase::kHead && head_clock_.head_started == 0 &&
      (in_end_ > in_start_ || parser_.started())) {
    OnHeadBytes();
  }
}

bool ServerConnection::TakingRequests() const {
  return phase_ == Phase::kHead || phase_ == Phase::kBody || phase_ == Phase::kStreamingBody;
}

// Parses and dispatches requests from `input` while the connection can take one (a handler
// that answers at once lets the next pipelined request through). Returns the bytes used.
size_t ServerConnection::ParseAndDispatch(std::string_view input) {
  serving_ = true;
  size_t used = 0;
  while (used < input.size() && TakingRequests()) {
    if (may_be_preface_) {
      bool need_more = false;
      if (IsHttp2Preface(input.substr(used), &need_more)) {
        StartHttp2(input.substr(used));
        used = input.size();  // the HTTP/2 session has taken it all
        break;
      }
      if (need_more) break;  // kept unparsed until more arrives, under the head deadline
      may_be_preface_ = false;
    }
    // The answers already queued must drain before another request is taken.
    if (phase_ == Phase::kHead && !parser_.started() && OutputBacklogged()) break;
    // A streamed body waits until its stream drains (OnBodyStreamDrained); so does the client.
    if (phase_ == Phase::kStreamingBody && RequestStreamFull()) {
      PauseReading();
      break;
    }
    if (tunnel_ && phase_ == Phase::kStreamingBody) {  // raw bytes of the other protocol
      request_stream_->Append(input.substr(used));
      used = input.size();
      break;
    }
    Progress p = parser_.Feed(input.substr(used), *this);
    used += p.consumed;
    if (phase_ == Phase::kClosed) break;
    if (p.state == Progress::State::kError) {
      if (SpeaksNeitherProtocol(p.error)) {
        resources_->Count(Rejection::kBadRequest);
        Close();
        break;
      }
      if (p.error == ParseError::kHeadTooLarge || p.error == ParseError::kTooManyHeaders) {
        Refuse(Rejection::kHeadTooLarge, 431, ParseErrorName(p.error));
      } else if (p.error == ParseError::kBodyTooLarge) {
        Refuse(Rejection::kBodyTooLarge, 413, ParseErrorName(p.error));
      } else if (p.error == ParseError::kUnsupportedTransferCoding) {
        Refuse(Rejection::kUnsupportedCoding, 501, ParseErrorName(p.error));
      } else {
        Refuse(Rejection::kBadRequest, 400, ParseErrorName(p.error));
      }
      break;
    }
    if (refusal_) {
      Refuse(*refusal_, 503, "over capacity: too many bytes buffered");
      break;
    }
    if (p.state == Progress::State::kNeedMore) {
      if (dispatch_early_) {  // a streamed body: the handler takes the request now
        dispatch_early_ = false;
        Dispatch();
        if (phase_ == Phase::kClosed) break;
      }
      if (phase_ == Phase::kBody || phase_ == Phase::kStreamingBody) {
        timer_.ArmAfter(StreamIdleTimeout());
      }
      break;
    }
    // kComplete: OnHead/OnBody have collected (copied) the request; hand it over.
    parser_.Reset();
    if (tunnel_) {  // the head is whole; what follows belongs to the tunnel
      dispatch_early_ = false;
      Dispatch();
      if (phase_ == Phase::kClosed) break;
      continue;
    }
    if (request_stream_ != nullptr) {  // a streamed body ended
      request_stream_->End();
      if (dispatch_early_) {  // ... in the read that streaming began with
        dispatch_early_ = false;
        Dispatch();
        if (phase_ == Phase::kClosed) break;
      }
      if (request_stream_ != nullptr) EndRequestStream();
      continue;
    }
    Dispatch();
  }
  serving_ = false;
  return used;
}

void ServerConnection::OnHead(const RequestHead& head) {
  phase_ = Phase::kBody;
  listener_->connections_->StopWaiting(this);
  const BufferBudget& budget = resources_->budget();
  const ServerOptions& options = listener_->options_;
  uint64_t body_bytes =
      head.framing == BodyFraming::kContentLength ? head.content_length : uint64_t{0};
  const bool stream = options.stream_body_above != 0 && body_bytes > options.stream_body_above;
  if (stream) body_bytes = options.stream_window;  // what a streamed body holds at most
  if (budget.exhausted() || budget.WouldExceed(body_bytes)) {
    refusal_ = Rejection::kOverBudget;
    return;
  }
  if (head.expect_continue) {
    out_.append("HTTP/1.1 100 Continue\r\n\r\n");
    Flush();
  }
  // The views point into the input buffer, which is reused or compacted: copy.
  const std::string_view extra[] = {head.method, head.target};
  head_copy_.Assign(head.headers, extra);
  head_ = head;
  head_.method = head_copy_.Extra(0);
  head_.target = head_copy_.Extra(1);
  head_.headers = head_copy_.headers();
  body_.clear();
  if (options.upgrades && head.minor_version >= 1 && head.framing == BodyFraming::kNone &&
      FindHeader(head.headers, "Upgrade") &&
      ListHasToken(FindHeader(head.headers, "Connection").value_or(""), "upgrade")) {
    tunnel_ = true;
    StartRequestStream(std::nullopt);
    return;
  }
  if (stream) StartRequestStream(head.content_length);
}

void ServerConnection::OnBody(std::string_view data) {
  if (refusal_) return;  // answered 503 once the parser returns
  if (request_stream_ != nullptr) {
    request_stream_->Append(data);  // dropped if its consumer cancelled it
    return;
  }
  body_.append(data);
  const size_t threshold = listener_->options_.stream_body_above;
  if (threshold != 0 && body_.size() > threshold) {  // a chunked body grew past the threshold
    StartRequestStream(std::nullopt);
    request_stream_->Append(body_);
    body_.clear();
    ReleaseIfLarge(body_);
  }
}

Nanos ServerConnection::StreamIdleTimeout() const {
  return tunnel_ ? listener_->options_.tunnel_idle_timeout : listener_->options_.idle_timeout;
}

void ServerConnection::Dispatch() {
  if (request_stream_ != nullptr && !request_stream_->ended()) {
    phase_ = Phase::kStreamingBody;
    timer_.ArmAfter(StreamIdleTimeout());
  } else {
    phase_ = Phase::kServing;
    timer_.Cancel();
  }
  ++listener_->requests_;
  ++sequence_;
  request_keep_alive_ = head_.keep_alive;
  request_was_head_ = head_.method == "HEAD";
  IncomingRequest request{head_, body_, client_ip_, request_stream_, tunnel_};
  listener_->handler_->OnRequest(request, Responder(this, alive_, sequence_));
  body_.clear();  // the handler has copied what it keeps
  ReleaseIfLarge(body_);
}

// --- Refusals and timeouts -----------------------------------------------------------------

void ServerConnection::Refuse(Rejection rejection, int status, std::string_view reason) {
  resources_->Count(rejection);
  refusal_.reset();
  listener_->connections_->StopWaiting(this);
  timer_.Cancel();
  std::string body(reason);
  body.append("\n");
  request_was_head_ = false;
  AppendResponseHead(status, "text/plain", body.size(), {}, /*keep_alive=*/false);
  out_.append(body);
  // The client may still be sending what we refused: read and drop it before closing, or the
  // close would reset the connection and the client might never see this answer.
  linger_after_flush_ = true;
  phase_ = Phase::kClosing;
  PauseReading();
  Flush();
}

void ServerConnection::OnTimer() {
  switch (phase_) {
    case Phase::kHandshake:
      if (loop_->now() >= HandshakeDeadline()) {
        listener_->options_.tls->CountHandshakeTimeout();
      } else {
        resources_->Count(Rejection::kHeaderTimeout);  // no head yet: nothing to answer
      }
      Close();
      return;
    case Phase::kHead: {
      bool head_begun = head_clock_.head_started != 0 || in_end_ > in_start_;
      if (!head_begun && !head_clock_.first_request) {
        Close();  // an idle keep-alive connection: nothing was asked, nothing is refused
        return;
      }
      resources_->Count(Rejection::kHeaderTimeout);
      if (head_begun) {
        out_.append(kRequestTimeout);
        phase_ = Phase::kClosing;
        Flush();  // best effort: the client may not be reading
      }
      Close();
      return;
    }
    case Phase::kBody:
      resources_->Count(Rejection::kBodyTimeout);
      out_.append(kRequestTimeout);
      phase_ = Phase::kClosing;
      Flush();
      Close();
      return;
    case Phase::kStreamingBody:
      // The handler has it: nothing to answer. An idle tunnel is no refusal.
      if (!tunnel_) resources_->Count(Rejection::kBodyTimeout);
      Close();
      return;
    case Phase::kLingering:
      Close();
      return;
    case Phase::kServing:
      if (response_stream_ != nullptr) Close();  // the client stopped reading the response
      return;
    case Phase::kClosing:
    case Phase::kHttp2:
    case Phase::kClosed:
      return;
  }
}

// Lingering close (as nginx does): stop writing, drain input for a while, then close.
void ServerConnection::StartLingering() {
  phase_ = Phase::kLingering;
  shutdown(transport_->fd(), SHUT_WR);
  in_start_ = in_end_ = 0;
  std::string().swap(in_);
  timer_.ArmAfter(kLingerTime);
  if (reading_paused_) {
    reading_paused_ = false;
    Watch(kWatchInput);
  }
  DrainLingering();
}

// --- Output --------------------------------------------------------------------------------

void ServerConnection::Answered(bool keep_alive) {
  if (phase_ == Phase::kStreamingBody) {
    // Answered before the streamed body's end: the rest is not read (the stream is failed for
    // its consumer), and the connection closes after the answer, lingering so the client sees it.
    keep_alive = false;
    linger_after_flush_ = true;
    request_stream_->SetProducer(nullptr);
    request_stream_->Fail();
    request_stream_.reset();
  }
  if (!keep_alive) {
    phase_ = Phase::kClosing;
    PauseReading();
    Flush();  // closes once written
    return;
  }
  head_clock_.first_request = false;
  head_clock_.idle_since = loop_->now();
  head_clock_.head_started = 0;
  EnterHead();
  Flush();  // with room in the output, requests pipelined behind this one go on (OnOutputRoom)
  if (phase_ != Phase::kClosed) UpdateCharge();
}

void ServerConnection::Flush() {
  while (out_sent_ < out_.size()) {
    iovec iov{out_.data() + out_sent_, out_.size() - out_sent_};
    net::IoResult r = transport_->Write(&iov, 1);
    if (r.kind == net::IoResult::Kind::kWantWrite || r.kind == net::IoResult::Kind::kWantRead) {
      break;  // EPOLLOUT continues
    }
    if (r.kind != net::IoResult::Kind::kOk) {
      Close();
      return;
    }
    out_sent_ += r.bytes;
  }
  if (out_sent_ == out_.size()) {
    out_.clear();
    out_sent_ = 0;
    ReleaseIfLarge(out_);
  }
  if (!OutputBacklogged()) OnOutputRoom();
}

// The output is below its high-water mark (or empty): the connection may move on.
void ServerConnection::OnOutputRoom() {
  switch (phase_) {
    case Phase::kClosing:
      if (out_sent_ < out_.size()) return;
      if (linger_after_flush_) {
        StartLingering();
      } else {
        Close();
      }
      return;
    case Phase::kHead:
      // Synchronous answers inside ParseAndDispatch continue there.
      if (serving_) return;
      ServeBuffered();
      if (phase_ == Phase::kClosed) return;
      ResumeReadingIfRoom();
      return;
    case Phase::kServing:
    case Phase::kStreamingBody:
      if (response_stream_ != nullptr) PumpResponse();
      return;
    case Phase::kHandshake:
    case Phase::kBody:
    case Phase::kLingering:
    case Phase::kHttp2:
    case Phase::kClosed:
      return;
  }
}

void ServerConnection::UpdateCharge() {
  charge_.Set(in_.capacity() + out_.capacity() + body_.capacity() +
              (http2_ ? http2_->buffered_bytes() : 0));
}

void ServerConnection::Close() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  timer_.Cancel();
  if (http2_) http2_->Stop();
  if (reset_on_close_) {
    linger reset{1, 0};  // close() with a zero linger sends RST instead of FIN
    setsockopt(transport_->fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  }
  loop_->Remove(transport_->fd());
  ReleaseStreams();
  resources_->CloseConnection();
  listener_->open_connections_.fetch_sub(1, std::memory_order_relaxed);
  charge_.Set(0);
  listener_->connections_->StopWaiting(this);
  listener_->connections_->Remove(this, loop_);
}

}  // namespace hammer::http
