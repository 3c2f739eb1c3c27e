#include "hammer/http/h2_server_connection.h"

#include <sys/epoll.h>

#include <algorithm>
#include <utility>

#include "hammer/http/owned_headers.h"
#include "hammer/http/response_parser.h"
#include "hammer/http/server_connection.h"

namespace hammer::http {

namespace {

// The HTTP/2 connection preface (RFC 9113 §3.4); its first line is no HTTP/1.1 request.
constexpr std::string_view kHttp2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
// Reads per readiness event before the connection yields to the others on its loop (1 MiB).
constexpr int kReadsPerEvent = 16;

// A serialized HTTP/1.1 response read back into its parts (RespondRaw on an HTTP/2 stream).
class RawResponse final : public ResponseParser::Visitor {
 public:
  void OnHead(const ResponseHead& head) override {
    status = head.status;
    headers.Assign(head.headers);
  }
  void OnBody(std::string_view data) override { body.append(data); }

  int status = 0;
  OwnedHeaders headers;
  std::string body;
};

Rejection AsRejection(H2Refusal refusal) {
  switch (refusal) {
    case H2Refusal::kHeadTooLarge:
      return Rejection::kHeadTooLarge;
    case H2Refusal::kBodyTooLarge:
      return Rejection::kBodyTooLarge;
    case H2Refusal::kBufferFull:
    case H2Refusal::kOverBudget:
      return Rejection::kOverBudget;
    case H2Refusal::kRapidReset:
      return Rejection::kRapidReset;
    case H2Refusal::kProtocolError:
      return Rejection::kProtocolError;
  }
  return Rejection::kProtocolError;
}

}  // namespace

// --- ServerConnection's hand-over (server_connection.h, kHttp2) -----------------------------

// The connection stays in the queue of waiting connections until its first stream opens (the
// H2ServerConnection keeps that queue from here on) and keeps its slot and registration.
void ServerConnection::StartHttp2(std::string_view received) {
  phase_ = Phase::kHttp2;
  may_be_preface_ = false;
  timer_.Cancel();
  http2_ = std::make_unique<H2ServerConnection>(this);
  http2_->Start(received);
}

// Whether `input` (the connection's first bytes) is the HTTP/2 preface; while it may still
// become one, *need_more.
bool ServerConnection::IsHttp2Preface(std::string_view input, bool* need_more) const {
  size_t n = std::min(input.size(), kHttp2Preface.size());
  *need_more = input.substr(0, n) == kHttp2Preface.substr(0, n) && n < kHttp2Preface.size();
  return n == kHttp2Preface.size() && input.substr(0, n) == kHttp2Preface;
}

bool ServerConnection::SpeaksNeitherProtocol(ParseError error) const {
  return head_clock_.first_request && listener_->options_.http2.enabled &&
         listener_->options_.tls == nullptr &&
         (error == ParseError::kBadStartLine || error == ParseError::kBadVersion);
}

// --- H2ServerConnection ---------------------------------------------------------------------

H2ServerConnection::H2ServerConnection(ServerConnection* owner)
    : owner_(owner),
      listener_(owner->listener_),
      loop_(owner->loop_),
      timer_(owner->loop_, [this] { OnTimer(); }) {}

H2ServerConnection::~H2ServerConnection() = default;

void H2ServerConnection::Start(std::string_view received) {
  const ServerOptions& options = listener_->options_;
  H2ServerSession::Settings settings;
  settings.max_concurrent_streams = options.http2.max_concurrent_streams;
  settings.max_head_bytes = options.limits.max_head_bytes;
  settings.max_headers = options.limits.max_headers;
  settings.max_body_bytes = options.limits.max_body_bytes;
  settings.max_buffered_bytes = options.limits.max_head_bytes + options.limits.max_body_bytes;
  settings.budget = &owner_->resources_->budget();
  settings.stream_body_above = options.stream_body_above;
  settings.loop = loop_;
  Result<std::unique_ptr<H2ServerSession>> session = H2ServerSession::Create(this, settings);
  if (!session.ok()) {
    Close();
    return;
  }
  session_ = std::move(*session);
  if (listener_->draining_) session_->GoAway();
  // `received` was just read: a body's idle deadline runs from here (a request whose HEADERS
  // came in that first read, and its DATA later, would otherwise time out at once).
  last_read_ = loop_->now();
  deferring_ = true;
  bool ok = received.empty() || Receive(received);
  deferring_ = false;
  if (!ok) return;
  // Bytes may wait in the socket or in the TLS buffer with no new edge to report them.
  ReadAndReceive();
}

void H2ServerConnection::Stop() {
  closed_ = true;
  timer_.Cancel();
  if (session_) session_->CancelStreamedAnswers();  // their producers stop
}

void H2ServerConnection::Drain() {
  if (closed_) return;
  session_->GoAway();
  AfterChange();
}

size_t H2ServerConnection::buffered_bytes() const {
  return out_.capacity() + (session_ ? session_->buffered_bytes() : 0);
}

void H2ServerConnection::OnIoEvents(uint32_t events) {
  if (closed_) return;
  if (events & EPOLLOUT) {
    if (Flush()) Pump();
  }
  if (closed_) return;
  if (events & (EPOLLHUP | EPOLLERR)) {
    Close();
    return;
  }
  if (reading_paused_) {
    // Input is not watched, so this is the peer closing its side: it is gone.
    if (events & EPOLLRDHUP) Close();
    return;
  }
  if (events & (EPOLLIN | EPOLLRDHUP)) ReadAndReceive();
}

void H2ServerConnection::ReadAndReceive() {
  std::string& buffer = listener_->read_buffer_;
  net::Transport* transport = owner_->transport_.get();
  deferring_ = true;
  for (int reads = 0;; ++reads) {
    if (closed_) return;
    if (out_.size() - out_sent_ > kOutputHighWater) {
      // The client is not reading our answers: what it sends waits in its TCP window.
      reading_paused_ = true;
      owner_->Watch(ServerConnection::kWatchOutputOnly);
      break;
    }
    if (reads == kReadsPerEvent) {
      ReadSoon();  // yield to the other connections of this loop
      break;
    }
    net::IoResult r = transport->Read(buffer.data(), buffer.size());
    if (r.kind == net::IoResult::Kind::kWantRead || r.kind == net::IoResult::Kind::kWantWrite) {
      break;
    }
    if (r.kind != net::IoResult::Kind::kOk) {
      deferring_ = false;
      Close();  // the client is gone (or half-closed): nothing more can be answered
      return;
    }
    last_read_ = loop_->now();
    if (!Receive(std::string_view(buffer.data(), r.bytes))) return;
    if (r.bytes < buffer.size() && transport->short_read_drains()) break;
  }
  deferring_ = false;
  if (!closed_) Pump();
}

// Input is watched again, and read in this loop iteration's deferred work: re-arming epoll
// reports what waits in the socket, but not what TLS has already taken from it into its own
// buffer (read-ahead), which only another read finds.
void H2ServerConnection::ReadSoon() {
  owner_->Watch(ServerConnection::kWatchInput);
  loop_->Defer([this, alive = std::weak_ptr<bool>(owner_->alive_)] {
    std::shared_ptr<bool> live = alive.lock();
    if (live && *live && !closed_ && !reading_paused_) ReadAndReceive();
  });
}

// False when the connection closed.
bool H2ServerConnection::Receive(std::string_view bytes) {
  if (Status s = session_->Receive(bytes); !s.ok()) {
    // A connection error nghttp2 could not even answer with GOAWAY (a bad preface, a flood).
    owner_->resources_->Count(Rejection::kProtocolError);
    deferring_ = false;
    Close();
    return false;
  }
  return !closed_;
}

void H2ServerConnection::OnRequest(int32_t stream_id, const RequestHead& head,
                                   std::string_view body) {
  ++listener_->requests_;
  IncomingRequest request{head, body, owner_->client_ip_};
  listener_->handler_->OnRequest(
      request, Responder(owner_, owner_->alive_, static_cast<uint64_t>(stream_id)));
}

void H2ServerConnection::OnStreamedRequest(int32_t stream_id, const RequestHead& head,
                                           std::shared_ptr<BodyStream> body) {
  ++listener_->requests_;
  IncomingRequest request{head, {}, owner_->client_ip_, std::move(body)};
  listener_->handler_->OnRequest(
      request, Responder(owner_, owner_->alive_, static_cast<uint64_t>(stream_id)));
}

void H2ServerConnection::OnRefused(H2Refusal refusal) {
  owner_->resources_->Count(AsRejection(refusal));
}

void H2ServerConnection::Respond(int32_t stream_id, int status, std::string_view content_type,
                                 std::string_view body, std::span<const Header> extra) {
  if (closed_) return;
  fields_.clear();
  if (!content_type.empty()) fields_.push_back({"content-type", content_type});
  fields_.insert(fields_.end(), extra.begin(), extra.end());
  session_->Respond(stream_id, status, fields_, body);
  AfterChange();
}

void H2ServerConnection::RespondRaw(int32_t stream_id, std::string_view bytes) {
  if (closed_) return;
  ResponseParser parser(listener_->options_.limits);
  parser.Reset(session_->IsHeadRequest(stream_id));
  RawResponse raw;
  Progress p = parser.Feed(bytes, raw);
  if (p.state == Progress::State::kNeedMore) p = parser.FinishAtEof(raw);
  if (p.state == Progress::State::kComplete) {
    session_->Respond(stream_id, raw.status, raw.headers.headers(), raw.body);
  } else {
    session_->ResetStream(stream_id, NGHTTP2_INTERNAL_ERROR);  // not one whole response
  }
  AfterChange();
}

void H2ServerConnection::RespondStream(int32_t stream_id, std::string_view head,
                                       std::shared_ptr<BodyStream> body) {
  if (closed_) {
    body->Cancel();
    return;
  }
  // Parsed as the head of an answer to HEAD: complete at its blank line, whatever it frames.
  ResponseParser parser(listener_->options_.limits);
  parser.Reset(/*head_request=*/true);
  RawResponse raw;
  if (parser.Feed(head, raw).state == Progress::State::kComplete) {
    if (session_->streamed_answers() == 0) last_write_ = loop_->now();  // its clock starts
    session_->RespondStream(stream_id, raw.status, raw.headers.headers(), std::move(body));
  } else {
    body->Cancel();
    session_->ResetStream(stream_id, NGHTTP2_INTERNAL_ERROR);
  }
  AfterChange();
}

void H2ServerConnection::OnAnswerReady() {
  AfterChange();
  if (!closed_) owner_->UpdateCharge();
}

void H2ServerConnection::Reset(int32_t stream_id) {
  if (closed_) return;
  session_->ResetStream(stream_id, NGHTTP2_INTERNAL_ERROR);
  AfterChange();
}

void H2ServerConnection::AfterChange() {
  if (!deferring_ && !closed_) Pump();
}

void H2ServerConnection::Pump() {
  while (!closed_) {
    if (out_sent_ == out_.size()) {
      out_.clear();
      out_sent_ = 0;
    }
    size_t before = out_.size();
    if (Status s = session_->Produce(out_, kOutputHighWater); !s.ok()) {
      Close();
      return;
    }
    if (!Flush()) return;  // the socket is full: EPOLLOUT continues
    if (out_.size() == before) break;
  }
  if (closed_) return;
  if (out_.empty() && out_.capacity() > kOutputHighWater) std::string().swap(out_);
  if (reading_paused_ && out_sent_ == out_.size()) {
    reading_paused_ = false;
    ReadSoon();
  }
  CloseIfDone();
  if (!closed_) UpdateDeadline();
}

// True when everything was written.
bool H2ServerConnection::Flush() {
  net::Transport* transport = owner_->transport_.get();
  while (!closed_ && out_sent_ < out_.size()) {
    iovec iov{out_.data() + out_sent_, out_.size() - out_sent_};
    net::IoResult r = transport->Write(&iov, 1);
    if (r.kind == net::IoResult::Kind::kWantWrite || r.kind == net::IoResult::Kind::kWantRead) {
      return false;
    }
    if (r.kind != net::IoResult::Kind::kOk) {
      Close();
      return false;
    }
    out_sent_ += r.bytes;
    if (r.bytes > 0) last_write_ = loop_->now();
  }
  return !closed_;
}

// Which deadline runs now (see the header): a head arriving has header_timeout from its first
// frame; a connection with no stream open waits for the first request until header_timeout
// after the accept, later for idle_timeout; bodies arriving with nothing being served have
// idle_timeout between reads; a streamed answer being sent has idle_timeout since bytes last
// went out; a connection serving its client otherwise has none (a slow handler is not the
// client's fault).
void H2ServerConnection::UpdateDeadline() {
  const ServerOptions& options = listener_->options_;
  const MonoNanos now = loop_->now();
  const size_t open = session_->open_streams();
  if (open == 0 && open_streams_ > 0) {
    idle_since_ = now;
    owner_->waiting_since_ = now;
    listener_->connections_->StartWaiting(owner_);
  } else if (open > 0 && open_streams_ == 0) {
    listener_->connections_->StopWaiting(owner_);
  }
  open_streams_ = open;
  if (!session_->receiving_head()) {
    head_started_ = 0;
  } else if (head_started_ == 0) {
    head_started_ = now;
  }
  if (head_started_ != 0) {
    timer_.ArmAt(head_started_ + options.header_timeout);
  } else if (open == 0) {
    timer_.ArmAt(idle_since_ == 0 ? owner_->head_clock_.accepted + options.header_timeout
                                  : idle_since_ + options.idle_timeout);
  } else if (session_->streamed_answers() > 0) {
    timer_.ArmAt(last_write_ + options.idle_timeout);
  } else if (session_->receiving_streams() > 0 && session_->awaiting_answers() == 0) {
    timer_.ArmAt(last_read_ + options.idle_timeout);
  } else {
    timer_.Cancel();
  }
}

void H2ServerConnection::OnTimer() {
  if (closed_) return;
  if (session_->streamed_answers() > 0 &&
      loop_->now() < last_write_ + listener_->options_.idle_timeout) {
    UpdateDeadline();  // bytes went out since it was armed (a write that did not end in Pump)
    return;
  }
  if (head_started_ != 0) {
    owner_->resources_->Count(Rejection::kHeaderTimeout);
  } else if (open_streams_ == 0) {
    // The first request never came: counted as HTTP/1.1 counts it; an idle connection is not.
    if (idle_since_ == 0) owner_->resources_->Count(Rejection::kHeaderTimeout);
  } else if (session_->streamed_answers() > 0) {
    // The client stopped taking a streamed answer: each one's producer counts its own loss.
  } else {
    owner_->resources_->Count(Rejection::kBodyTimeout);
  }
  session_->GoAway();
  deferring_ = false;
  Pump();  // best effort: the client may not be reading
  Close();
}

// Both sides are done and everything is written: a lingering close, as HTTP/1.1 refusals get,
// so that frames the client sent meanwhile (a PING after its GOAWAY) are read and dropped
// rather than make the close a reset that could destroy what it has not read yet.
void H2ServerConnection::CloseIfDone() {
  if (closed_ || out_sent_ != out_.size() || !session_->finished()) return;
  Stop();
  owner_->StartLingering();
}

void H2ServerConnection::Close() {
  if (closed_) return;
  Stop();
  owner_->Close();
}

}  // namespace hammer::http
