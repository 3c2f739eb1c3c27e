#include "hammer/http/server_connection.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "hammer/http/h2_server_codec.h"
#include "hammer/http/http1_server_codec.h"
#include "hammer/http/listener_context.h"

namespace hammer::http {

namespace {

constexpr Nanos kLingerTime = 5 * kSecond;  // how long a client may keep sending after the end
// A buffer grown past this for one large message is given back once it is empty again.
constexpr size_t kKeepCapacity = 64 * 1024;
// The first size of a connection's own input buffer; it doubles up to its cap as needed.
constexpr size_t kOwnBufferStart = 16 * 1024;
// Reads per readiness event before the connection yields to the others on its loop (1 MiB of
// plain TCP, 256 KiB of TLS records).
constexpr int kReadsPerEvent = 16;

// The HTTP/2 connection preface (RFC 9113 §3.4); its first line is no HTTP/1.1 request.
constexpr std::string_view kHttp2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

enum class Preface : uint8_t { kYes, kMaybe, kNo };

// Whether `input`, the connection's first bytes, is the HTTP/2 preface (kMaybe: it may still
// become one).
Preface DetectPreface(std::string_view input) {
  const size_t n = std::min(input.size(), kHttp2Preface.size());
  if (input.substr(0, n) != kHttp2Preface.substr(0, n)) return Preface::kNo;
  return n == kHttp2Preface.size() ? Preface::kYes : Preface::kMaybe;
}

// Grows `buffer` to exactly `size` bytes of capacity, keeping its bytes: std::string's own
// growth at least doubles the capacity, past the bound the buffer budget counts on.
void GrowTo(std::string& buffer, size_t size) {
  std::string grown(size, '\0');
  std::memcpy(grown.data(), buffer.data(), std::min(buffer.size(), size));
  buffer.swap(grown);
}

void ReleaseIfLarge(std::string& buffer) {
  if (buffer.empty() && buffer.capacity() > kKeepCapacity) std::string().swap(buffer);
}

}  // namespace

ServerConnection::ServerConnection(ListenerContext* listener,
                                   std::unique_ptr<net::Transport> transport)
    : listener_(listener),
      loop_(listener->loop),
      transport_(std::move(transport)),
      timer_(listener->loop, [this] { OnTimer(); }),
      accepted_(listener->loop->now()),
      input_cap_(listener->options.limits.max_head_bytes + kReadChunk),
      charge_(&listener->resources->budget()) {
  Result<net::SocketAddress> peer = net::PeerAddress(transport_->fd());
  if (peer.ok()) client_ip_ = peer->Ip();
}

std::atomic<uint64_t> ServerConnection::next_id_{1};

// Destroyed with its listener, still open: its slot goes back; its codec lets go of its streams.
ServerConnection::~ServerConnection() {
  if (state_ != State::kClosed) listener_->resources->CloseConnection();
}

Status ServerConnection::Register() {
  if (Status s = loop_->Add(transport_->fd(), kWatchInput, this); !s.ok()) return s;
  const ServerOptions& options = listener_->options;
  if (options.tls == nullptr) {
    UseHttp1(/*detect_http2=*/options.http2.enabled);
    Observe();
    return Status::Ok();
  }
  state_ = State::kHandshake;
  listener_->connections.StartWaiting(this, /*for_head=*/true, accepted_);
  const MonoNanos first_head =
      HeadDeadline(HeadClock{.accepted = accepted_}, options.header_timeout, options.idle_timeout);
  timer_.ArmAt(std::min(HandshakeDeadline(), first_head));
  return Status::Ok();
}

// --- kHandshake and the choice of codec ----------------------------------------------------

// The head deadline of a TLS connection counts from the accept, like a plain one's, so the
// handshake is part of the time the first head has: a slow client holds a descriptor and a
// connection slot from the accept, and would otherwise hold it for both deadlines in turn
// (handshake_timeout, then header_timeout). The handshake keeps its own, possibly shorter,
// deadline and its own counter; whichever is earlier closes the connection.
MonoNanos ServerConnection::HandshakeDeadline() const {
  return accepted_ + listener_->options.tls->options().handshake_timeout;
}

void ServerConnection::ContinueHandshake() {
  net::IoResult r = transport_->Handshake();
  switch (r.kind) {
    case net::IoResult::Kind::kOk:
      if (listener_->options.http2.enabled && transport_->application_protocol() == "h2") {
        UseHttp2();
      } else {
        UseHttp1(/*detect_http2=*/false);
      }
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

ServerCodec::Context ServerConnection::CodecContext() const {
  return {&listener_->options, listener_->resources.get(), loop_, accepted_};
}

void ServerConnection::UseHttp1(bool detect_http2) {
  Host* host = this;
  codec_ = std::make_unique<Http1ServerCodec>(host, CodecContext(), detect_http2);
  state_ = detect_http2 ? State::kDetecting : State::kOpen;
}

// The connection keeps its slot, its registration and its place in the waiting queue (until the
// first stream opens). False when the connection closed (no memory for a session).
bool ServerConnection::UseHttp2() {
  codec_ = H2ServerCodec::Create(this, CodecContext());
  if (codec_ == nullptr) {
    Close();
    return false;
  }
  state_ = State::kOpen;
  if (listener_->draining) codec_->Drain();
  return true;
}

// --- Events --------------------------------------------------------------------------------

void ServerConnection::OnIoEvents(uint32_t events) {
  switch (state_) {
    case State::kClosed:
      return;
    case State::kLingering:
      DrainLingering();
      return;
    case State::kHandshake:
      ContinueHandshake();
      if (!Exchanging()) return;
      // The request may have come with the handshake's last flight: read it now, since the edge
      // that brought it has been consumed.
      events |= EPOLLIN;
      break;
    default:
      break;
  }
  if (events & (EPOLLHUP | EPOLLERR)) {
    ClientGone();  // nothing more can be answered
    return;
  }
  if ((events & EPOLLOUT) && out_sent_ < out_.size() && !Flush()) return;
  const bool peer_closing = (events & EPOLLRDHUP) != 0;
  if (state_ == State::kPaused) {
    // Input is not watched, so this is the peer closing (or half-closing) its side. As when it
    // is read (EOF): the client is gone, nothing more can usefully be answered. A tunnel's
    // client may half-close and still read what the other side sends.
    if (peer_closing && !codec_->half_close_allowed()) {
      ClientGone();
      return;
    }
  } else if (state_ == State::kDetecting || state_ == State::kOpen) {
    if (events & (EPOLLIN | EPOLLRDHUP)) OnReadable(peer_closing);
  }
  Advance();
}

void ServerConnection::Evict() {
  listener_->resources->Count(Rejection::kEvicted);
  Close();
}

void ServerConnection::Drain() {
  if (state_ == State::kHandshake) {
    Close();
    return;
  }
  if (!Exchanging()) return;
  codec_->Drain();
  Advance();
}

// --- Answers -------------------------------------------------------------------------------

void ServerConnection::Respond(uint64_t sequence, int status, std::string_view content_type,
                               std::string_view body, std::span<const Header> extra) {
  if (!Exchanging()) return;
  codec_->Respond(sequence, status, content_type, body, extra);
  Advance();
}

void ServerConnection::RespondRaw(uint64_t sequence, std::string_view bytes, bool keep_alive) {
  if (!Exchanging()) return;
  codec_->RespondRaw(sequence, bytes, keep_alive);
  Advance();
}

void ServerConnection::RespondRawThenReset(uint64_t sequence, std::string_view bytes) {
  if (!Exchanging()) return;
  codec_->RespondRawThenReset(sequence, bytes);
  Advance();
}

void ServerConnection::RespondStream(uint64_t sequence, std::string_view head,
                                     std::shared_ptr<BodyStream> body, bool keep_alive) {
  if (!Exchanging()) {
    body->Cancel();  // nobody will ever read it
    return;
  }
  codec_->RespondStream(sequence, head, std::move(body), keep_alive);
  Advance();
}

void ServerConnection::RespondInterim(uint64_t sequence, int status,
                                      std::span<const Header> fields) {
  if (!Exchanging()) return;
  codec_->RespondInterim(sequence, status, fields);
  Advance();
}

void ServerConnection::Watch(uint64_t sequence, RequestWatcher* watcher) {
  if (Exchanging()) codec_->Watch(sequence, watcher);
}

bool ServerConnection::KeepsAlive() const {
  return codec_ != nullptr && codec_->KeepsAlive();
}

// --- ServerCodec::Host ---------------------------------------------------------------------

void ServerConnection::Dispatch(IncomingRequest& request, uint64_t sequence) {
  ++listener_->requests;
  request.client_ip = client_ip_;
  request.connection = id_;
  listener_->handler->OnRequest(request, Responder(this, alive_, sequence));
}

// Bytes already written are dropped from the front of the output rather than let the buffer
// grow past what is still unsent (a client reading slowly would otherwise make it grow without
// end).
std::string& ServerConnection::OutputFor(size_t more) {
  if (out_sent_ > 0 && out_.size() + more > out_.capacity()) {
    out_.erase(0, out_sent_);
    out_sent_ = 0;
  }
  return out_;
}

bool ServerConnection::draining() const {
  return listener_->draining;
}

void ServerConnection::End(ServerCodec::Ending ending) {
  if (!Exchanging()) return;
  const bool watching_input = state_ != State::kPaused;
  switch (ending) {
    case ServerCodec::Ending::kAbort:
      Close();
      return;
    case ServerCodec::Ending::kBestEffort:
      if (Flush()) Close();
      return;
    case ServerCodec::Ending::kClose:
      state_ = State::kClosing;
      break;
    case ServerCodec::Ending::kLinger:
      state_ = State::kClosingToLinger;
      break;
    case ServerCodec::Ending::kReset:
      state_ = State::kClosingWithReset;
      break;
  }
  if (watching_input) Watch(kWatchOutputOnly);  // input is no longer read
}

// --- Input ---------------------------------------------------------------------------------

void ServerConnection::OnReadable(bool peer_closing) {
  for (int reads = 0;; ++reads) {
    if (state_ != State::kDetecting && state_ != State::kOpen) return;
    if (reads == kReadsPerEvent) {
      ReadLater();  // yield to the other connections of this loop
      return;
    }
    const ServerCodec::Intake intake =
        state_ == State::kDetecting ? ServerCodec::Intake::kTake : codec_->intake();
    if (intake == ServerCodec::Intake::kNone) {
      Pause();
      return;
    }
    const bool take = intake == ServerCodec::Intake::kTake;
    const bool again = in_start_ == in_end_ && take ? ReadIntoSharedBuffer(peer_closing)
                                                    : ReadIntoOwnBuffer(peer_closing, take);
    if (!again) return;
  }
}

// Nothing is buffered: read into the loop's shared buffer, hand it over at once, keep only the
// rest. True when the socket may hold more.
bool ServerConnection::ReadIntoSharedBuffer(bool peer_closing) {
  std::string& buffer = listener_->read_buffer;
  net::IoResult r = transport_->Read(buffer.data(), buffer.size());
  if (r.kind != net::IoResult::Kind::kOk) {
    OnReadStopped(r);
    return false;
  }
  std::string_view input(buffer.data(), r.bytes);
  const size_t used = Feed(input);
  if (state_ == State::kClosed) return false;
  KeepUnparsed(input.substr(used));
  if (!Flush()) return false;  // answers given at once go before the next read finds an EOF
  // A short read drained the socket; the next edge brings whatever comes next (a close already
  // announced by this event would not come again: read on until EOF then).
  return r.bytes == buffer.size() || peer_closing || !transport_->short_read_drains();
}

// Bytes are held: read behind them, into the connection's own buffer; `take`: hand the buffer
// over. True when the socket may hold more.
bool ServerConnection::ReadIntoOwnBuffer(bool peer_closing, bool take) {
  if (in_start_ == in_end_) in_start_ = in_end_ = 0;
  if (in_end_ == in_.size() && in_start_ > 0) {
    std::memmove(in_.data(), in_.data() + in_start_, in_end_ - in_start_);
    in_end_ -= in_start_;
    in_start_ = 0;
  }
  if (in_end_ == in_.size() && in_.size() < input_cap_) {
    GrowTo(in_, std::min(input_cap_, std::max(kOwnBufferStart, in_.size() * 2)));
  }
  const size_t room = in_.size() - in_end_;
  if (room == 0) {
    // Full: what the client sends now waits in its TCP window until the buffer drains.
    Pause();
    return false;
  }
  net::IoResult r = transport_->Read(in_.data() + in_end_, room);
  if (r.kind != net::IoResult::Kind::kOk) {
    OnReadStopped(r);
    return false;
  }
  in_end_ += r.bytes;
  if (take) {
    FeedBuffered();
    if (state_ == State::kClosed || !Flush()) return false;
  }
  return r.bytes == room || peer_closing || !transport_->short_read_drains();
}

// A read that brought no bytes: kWantRead waits for the next edge. The client's EOF ends the
// connection, or only its own direction where the codec allows it (a tunnel, once what it sent
// is taken); an error ends it.
void ServerConnection::OnReadStopped(const net::IoResult& result) {
  if (result.kind == net::IoResult::Kind::kWantRead ||
      result.kind == net::IoResult::Kind::kWantWrite) {
    return;
  }
  if (result.kind == net::IoResult::Kind::kEof && codec_->half_close_allowed() &&
      in_start_ == in_end_) {
    codec_->OnInputEnd();
    Pause();
    return;
  }
  ClientGone();
}

void ServerConnection::ClientGone() {
  if (codec_ != nullptr && Exchanging()) codec_->OnClientGone();
  Close();
}

// Hands input to the codec; returns the bytes it took. The first bytes on a port that also
// speaks h2c choose the codec first: held while they may be the HTTP/2 preface.
size_t ServerConnection::Feed(std::string_view input) {
  if (state_ == State::kDetecting) {
    switch (DetectPreface(input)) {
      case Preface::kMaybe:
        return 0;  // kept until more arrives, under the first head's deadline
      case Preface::kYes:
        if (!UseHttp2()) return 0;
        break;
      case Preface::kNo:
        state_ = State::kOpen;
        break;
    }
  }
  receiving_ = true;
  const size_t used = codec_->Receive(input);
  receiving_ = false;
  return used;
}

void ServerConnection::FeedBuffered() {
  const size_t used = Feed(std::string_view(in_.data() + in_start_, in_end_ - in_start_));
  if (state_ == State::kClosed) return;
  in_start_ += used;
  if (in_start_ == in_end_ || !Exchanging()) {
    in_start_ = in_end_ = 0;
    // An idle connection holds none; one reading ahead keeps its buffer.
    if (!Exchanging() || codec_->intake() != ServerCodec::Intake::kHold) std::string().swap(in_);
  }
}

// Bytes of the shared buffer the codec did not take (a partial head, pipelined requests) move
// into the connection's own buffer, which was empty.
void ServerConnection::KeepUnparsed(std::string_view rest) {
  if (rest.empty() || !Exchanging()) return;  // a connection ending takes no more
  if (in_.size() < rest.size()) GrowTo(in_, std::max(kOwnBufferStart, rest.size()));
  std::memcpy(in_.data(), rest.data(), rest.size());
  in_start_ = 0;
  in_end_ = rest.size();
}

// Changes what epoll reports for the socket. Re-arming input makes epoll report what arrived
// while it was not watched. Fails only without kernel memory: the connection is closed.
void ServerConnection::Watch(uint32_t events) {
  if (!loop_->Modify(transport_->fd(), events, this).ok()) Close();
}

void ServerConnection::Pause() {
  if (state_ != State::kOpen) return;
  state_ = State::kPaused;
  Watch(kWatchOutputOnly);
}

void ServerConnection::ResumeIfWanted() {
  if (state_ != State::kPaused || in_end_ - in_start_ >= input_cap_ ||
      codec_->intake() == ServerCodec::Intake::kNone) {
    return;
  }
  state_ = State::kOpen;
  Watch(kWatchInput);
  // Input the transport took off the socket before the pause (TLS) raises no event.
  if (state_ == State::kOpen && transport_->holds_input()) ReadLater();
}

// What is left to read may never raise an event: the socket's edge was consumed by the read
// that stopped at the budget, and TLS may hold records already taken off the socket. So the
// next read comes from the loop itself, after the other connections' events of this
// iteration; reading until kWantRead (as if the peer were closing) leaves nothing behind.
void ServerConnection::ReadLater() {
  if (read_queued_) return;  // one deferred read at a time
  read_queued_ = true;
  loop_->Defer([this, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return;
    read_queued_ = false;
    if (state_ == State::kLingering) {
      DrainLingering();
      return;
    }
    OnReadable(/*peer_closing=*/true);
    Advance();
  });
}

// --- Output and progress -------------------------------------------------------------------

// Writes the output as the socket takes it (EPOLLOUT continues). False when the connection
// closed (a write error: the client is gone).
bool ServerConnection::Flush() {
  while (out_sent_ < out_.size()) {
    iovec iov{out_.data() + out_sent_, out_.size() - out_sent_};
    net::IoResult r = transport_->Write(&iov, 1);
    if (r.kind == net::IoResult::Kind::kWantWrite || r.kind == net::IoResult::Kind::kWantRead) {
      break;
    }
    if (r.kind != net::IoResult::Kind::kOk) {
      Close();
      return false;
    }
    out_sent_ += r.bytes;
  }
  if (out_sent_ == out_.size()) {
    out_.clear();
    out_sent_ = 0;
    ReleaseIfLarge(out_);
  }
  return true;
}

// Writes, and pulls what the codec has ready while less than kOutputHighWater bytes wait.
void ServerConnection::WriteOut() {
  while (Flush() && Exchanging() && output_pending() <= kOutputHighWater) {
    std::string& out = OutputFor(kOutputHighWater);
    const size_t before = out.size();
    codec_->Produce(out, out_sent_ + kOutputHighWater);
    if (out_.size() == before) return;
  }
}

void ServerConnection::Advance() {
  if (receiving_) return;  // Feed's caller advances once the codec returns
  for (;;) {
    if (!Exchanging() && !Closing()) return;
    WriteOut();
    if (Closing()) {
      if (out_sent_ == out_.size()) FinishClosing();
      break;
    }
    if (!Exchanging()) return;
    // Input the codec left (pipelined requests, a streamed body's rest) goes once it takes it.
    const size_t held = in_end_ - in_start_;
    if (held == 0) break;
    if (state_ != State::kDetecting && codec_->intake() != ServerCodec::Intake::kTake) break;
    FeedBuffered();
    if (in_end_ - in_start_ == held && Exchanging()) break;  // nothing taken
  }
  ResumeIfWanted();
  Observe();
}

void ServerConnection::Observe() {
  ServerCodec::Outlook outlook;
  if (Exchanging()) {
    outlook = codec_->Look();
  } else if (!Closing()) {
    return;  // kHandshake and kLingering keep their own deadline; kClosed has none
  }
  if (outlook.deadline == 0) {
    timer_.Cancel();
  } else if (!timer_.armed() || timer_.deadline() != outlook.deadline) {
    timer_.ArmAt(outlook.deadline);
  }
  if (outlook.waiting == ServerCodec::Waiting::kNo) {
    listener_->connections.StopWaiting(this);
  } else {
    listener_->connections.StartWaiting(this, outlook.waiting == ServerCodec::Waiting::kHead,
                                        outlook.waiting_since);
  }
  UpdateCharge();
}

void ServerConnection::UpdateCharge() {
  charge_.Set(in_.capacity() + out_.capacity() + (codec_ ? codec_->buffered_bytes() : 0));
}

void ServerConnection::OnTimer() {
  switch (state_) {
    case State::kHandshake:
      if (loop_->now() >= HandshakeDeadline()) {
        listener_->options.tls->CountHandshakeTimeout();
      } else {
        listener_->resources->Count(Rejection::kHeaderTimeout);  // no head yet: nothing to answer
      }
      Close();
      return;
    case State::kLingering:
      Close();
      return;
    case State::kDetecting:
    case State::kOpen:
    case State::kPaused: {
      const MonoNanos deadline = codec_->Look().deadline;
      if (deadline != 0 && loop_->now() >= deadline) codec_->OnDeadline();
      Advance();  // re-arms a deadline that moved since the timer was armed
      return;
    }
    case State::kClosing:
    case State::kClosingToLinger:
    case State::kClosingWithReset:
    case State::kClosed:
      return;
  }
}

// --- The end -------------------------------------------------------------------------------

void ServerConnection::FinishClosing() {
  if (state_ == State::kClosingToLinger) {
    StartLingering();
  } else {
    Close();
  }
}

// Lingering close (as nginx does): stop writing, drain input for a while, then close.
void ServerConnection::StartLingering() {
  state_ = State::kLingering;
  codec_->Stop();
  listener_->connections.StopWaiting(this);
  shutdown(transport_->fd(), SHUT_WR);
  in_start_ = in_end_ = 0;
  std::string().swap(in_);
  timer_.ArmAfter(kLingerTime);
  Watch(kWatchInput);
  UpdateCharge();
  if (state_ == State::kLingering) DrainLingering();
}

void ServerConnection::DrainLingering() {
  std::string& scratch = listener_->read_buffer;
  for (int reads = 0; reads < kReadsPerEvent; ++reads) {
    net::IoResult r = transport_->Read(scratch.data(), scratch.size());
    if (r.kind == net::IoResult::Kind::kWantRead) return;
    if (r.kind != net::IoResult::Kind::kOk) {
      Close();
      return;
    }
  }
  ReadLater();  // yield to the other connections of this loop
}

void ServerConnection::Close() {
  if (state_ == State::kClosed) return;
  if (state_ == State::kClosingWithReset) {
    linger reset{1, 0};  // close() with a zero linger sends RST instead of FIN
    setsockopt(transport_->fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  }
  state_ = State::kClosed;
  timer_.Cancel();
  if (codec_ != nullptr) codec_->Stop();
  loop_->Remove(transport_->fd());
  listener_->resources->CloseConnection();
  listener_->open_connections.fetch_sub(1, std::memory_order_relaxed);
  charge_.Set(0);
  listener_->connections.Remove(this, loop_);
}

}  // namespace hammer::http
