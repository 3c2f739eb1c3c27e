#include "hammer/http/client_connection.h"

#include <sys/epoll.h>

#include <algorithm>
#include <utility>

namespace hammer::http {

namespace {

// The largest chunk taken from a streamed body of unknown length at once.
constexpr size_t kMaxChunk = 64 * 1024;
// Reads of one event before the loop's other work gets a turn (deferred wake-ups, the other
// connections): the rest is read from a later pass. A proxy then passes a fast upstream's long
// answer on as it comes (its first bytes reach the client after about 64 KiB, not after the
// whole answer), and one busy connection cannot hold the loop.
constexpr int kReadsPerEvent = 4;

}  // namespace

ClientConnection::ClientConnection(HttpClient* client, const Origin* origin)
    : client_(client),
      loop_(client->loop()),
      origin_(origin),
      connector_(client, origin, this),
      timer_(client->loop(), [this] { OnTimer(); }),
      parser_(client->options().limits) {}

ClientConnection::~ClientConnection() {
  *alive_ = false;
  if (request_.flow != nullptr) request_.flow->target_ = nullptr;
  CloseSocket();
}

void ClientConnection::StartFresh(const ClientRequest& request, ResponseHandler* handler,
                                  bool is_retry) {
  BeginExchange(request, handler);
  is_retry_ = is_retry;
  state_ = State::kOpening;
  ArmTimer();
  connector_.Start(this);
}

void ClientConnection::StartReused(const ClientRequest& request, ResponseHandler* handler) {
  BeginExchange(request, handler);
  result_.reused_connection = true;
  state_ = State::kActive;
  ArmTimer();
  OnWritable();
}

void ClientConnection::StartOnTransport(std::unique_ptr<net::Transport> transport,
                                        const ConnectTimings& timings, const ClientRequest& request,
                                        ResponseHandler* handler) {
  BeginExchange(request, handler);
  transport_ = std::move(transport);
  result_.connect_start = timings.connect_start;
  result_.connect_end = timings.connect_end;
  result_.handshake_end = timings.handshake_end;
  OnConnected();
}

void ClientConnection::BeginExchange(const ClientRequest& request, ResponseHandler* handler) {
  request_ = request;
  handler_ = handler;
  result_ = ExchangeResult{};
  is_retry_ = false;
  write_offset_ = 0;
  response_keep_alive_ = true;
  trailers_.clear();
  parser_.Reset(request.head_method, request.upgrade);
  read_start_ = read_end_ = 0;
  reading_paused_ = false;
  if (request.flow != nullptr) {
    request.flow->target_ = this;
    request.flow->paused_ = false;
  }
  if (request.body_stream != nullptr) {
    request.body_stream->SetConsumer(this);
    chunk_.clear();
    chunk_sent_ = 0;
    last_chunk_queued_ = false;
  }
}

// The exchange is over for this connection: the stream and the flow are let go. A body not
// wholly sent is cancelled, so that its producer stops reading it.
void ClientConnection::Unbind() {
  if (BodyStream* stream = request_.body_stream) {
    stream->SetConsumer(nullptr);
    if (!stream->finished()) stream->Cancel();
    request_.body_stream = nullptr;
  }
  if (ResponseFlow* flow = request_.flow) {
    flow->target_ = nullptr;
    flow->paused_ = false;
    request_.flow = nullptr;
  }
  reading_paused_ = false;
}

void ClientConnection::OnTransportReady(std::unique_ptr<net::Transport> transport) {
  transport_ = std::move(transport);
  const ConnectTimings& timings = connector_.timings();
  result_.connect_start = timings.connect_start;
  result_.connect_end = timings.connect_end;
  result_.handshake_end = timings.handshake_end;
  OnConnected();
}

void ClientConnection::OnConnectFailed(Failure failure, std::string detail) {
  Fail(failure, std::move(detail));
}

void ClientConnection::OnIoEvents(uint32_t events) {
  switch (state_) {
    case State::kActive:
      if (events & EPOLLOUT) OnWritable();
      if (state_ == State::kActive && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
        OnReadable(/*peer_closing=*/(events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
      }
      return;
    case State::kIdle:
      // An idle connection that turns readable was closed by the server (or sent bytes it
      // should not have): either way it cannot be reused.
      if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        client_->RemoveFromPool(this);
        Close();
      }
      return;
    case State::kOpening:
    case State::kClosed:
      return;
  }
}

void ClientConnection::OnConnected() {
  state_ = State::kActive;
  ArmTimer();
  OnWritable();
  if (state_ == State::kActive) OnReadable(/*peer_closing=*/true);
}

void ClientConnection::OnWritable() {
  if (request_.body_stream != nullptr) {
    WriteStreamedBody();
    return;
  }
  const size_t head_size = request_.head.size();
  const size_t total = head_size + request_.body.size();
  while (write_offset_ < total) {
    iovec iov[2];
    int count = 0;
    if (write_offset_ < head_size) {
      iov[count++] = {const_cast<char*>(request_.head.data() + write_offset_),
                      head_size - write_offset_};
      if (!request_.body.empty()) {
        iov[count++] = {const_cast<char*>(request_.body.data()), request_.body.size()};
      }
    } else {
      size_t body_offset = write_offset_ - head_size;
      iov[count++] = {const_cast<char*>(request_.body.data() + body_offset),
                      request_.body.size() - body_offset};
    }
    net::IoResult r = transport_->Write(iov, count);
    if (r.kind == net::IoResult::Kind::kOk) {
      write_offset_ += r.bytes;
      result_.bytes_sent += r.bytes;
      continue;
    }
    if (r.kind == net::IoResult::Kind::kWantWrite || r.kind == net::IoResult::Kind::kWantRead) {
      return;
    }
    // A reused connection the server already closed fails here with EPIPE/ECONNRESET.
    if (TryStaleRetry()) return;
    Fail(Failure::kReset, "write: " + transport_->last_error());
    return;
  }
}

// The next bytes of a streamed body to write: the stream's own bytes when its length is known;
// else the current chunk, framed from what the stream has (moved out of it), then the last
// chunk, with the stream's trailers, once it ended. Empty: nothing to write until the stream wakes
// us, or all was written.
std::string_view ClientConnection::NextStreamedPiece() {
  BodyStream* stream = request_.body_stream;
  // Before the 101, bytes that follow an upgrade's head are not the server's to read: an
  // answer that does not switch would make them a request the proxy never saw (smuggling).
  if (request_.upgrade) return result_.status == 101 ? stream->available() : std::string_view();
  if (stream->length()) return stream->available();
  if (chunk_sent_ == chunk_.size()) {
    chunk_.clear();
    chunk_sent_ = 0;
    std::string_view available = stream->available().substr(0, kMaxChunk);
    if (!available.empty()) {
      AppendChunk(chunk_, available);
      stream->Consume(available.size());
    } else if (stream->finished() && !last_chunk_queued_) {
      AppendLastChunk(chunk_, stream->trailers());
      last_chunk_queued_ = true;
    }
  }
  return std::string_view(chunk_).substr(chunk_sent_);
}

void ClientConnection::WriteStreamedBody() {
  BodyStream* stream = request_.body_stream;
  const size_t head_size = request_.head.size();
  while (state_ == State::kActive) {
    if (stream->failed()) {
      Fail(Failure::kOther, "request body abandoned by its source");
      return;
    }
    std::string_view piece = NextStreamedPiece();
    iovec iov[2];
    int count = 0;
    if (write_offset_ < head_size) {
      iov[count++] = {const_cast<char*>(request_.head.data() + write_offset_),
                      head_size - write_offset_};
    }
    if (!piece.empty()) iov[count++] = {const_cast<char*>(piece.data()), piece.size()};
    if (count == 0) return;  // OnBodyStreamReady brings more, or the body is all written
    net::IoResult r = transport_->Write(iov, count);
    if (r.kind == net::IoResult::Kind::kWantWrite || r.kind == net::IoResult::Kind::kWantRead) {
      return;
    }
    if (r.kind != net::IoResult::Kind::kOk) {
      Fail(Failure::kReset, "write: " + transport_->last_error());
      return;
    }
    size_t written = r.bytes;
    result_.bytes_sent += written;
    if (request_.idle_timeout > 0 && request_.deadline != 0) {
      request_.deadline = loop_->now() + request_.idle_timeout;
    }
    if (write_offset_ < head_size) {
      size_t of_head = std::min(written, head_size - write_offset_);
      write_offset_ += of_head;
      written -= of_head;
    }
    if (stream->length() || request_.upgrade) {
      stream->Consume(written);
    } else {
      chunk_sent_ += written;
    }
  }
}

// Every byte of the streamed body is on the wire, framing included.
bool ClientConnection::StreamedBodyWritten() const {
  const BodyStream* stream = request_.body_stream;
  if (write_offset_ < request_.head.size()) return false;
  if (stream->length() || request_.upgrade) return stream->finished();
  return last_chunk_queued_ && chunk_sent_ == chunk_.size();
}

void ClientConnection::OnBodyStreamReady() {
  BodyStream* stream = request_.body_stream;
  if (stream == nullptr) return;
  if (stream->failed() && state_ != State::kIdle && state_ != State::kClosed) {
    Fail(Failure::kOther, "request body abandoned by its source");
    return;
  }
  if (state_ == State::kActive) WriteStreamedBody();
}

void ClientConnection::PauseReading() {
  if (reading_paused_ || state_ != State::kActive) return;
  reading_paused_ = true;
  paused_at_ = loop_->now();
}

void ClientConnection::ResumeReading() {
  if (!reading_paused_) return;
  reading_paused_ = false;
  if (request_.deadline != 0) request_.deadline += loop_->now() - paused_at_;
  ArmTimer();
  // Input left in the socket raised no new edge: read it from a later iteration (never from
  // inside the caller, which may be this exchange's own handler).
  ReadLater();
}

void ClientConnection::ReadLater() {
  std::weak_ptr<bool> alive = alive_;
  loop_->Defer([this, alive] {
    if (alive.expired() || state_ != State::kActive || reading_paused_) return;
    OnReadable(/*peer_closing=*/true);
  });
}

void ClientConnection::OnReadable(bool peer_closing) {
  for (int reads = 0; state_ == State::kActive && !reading_paused_; ++reads) {
    if (reads == kReadsPerEvent) {
      ReadLater();  // the socket's edge is consumed: no event would bring the rest
      return;
    }
    if (read_end_ == read_buffer_.size()) {
      if (read_start_ > 0) {
        std::copy(read_buffer_.begin() + static_cast<std::ptrdiff_t>(read_start_),
                  read_buffer_.begin() + static_cast<std::ptrdiff_t>(read_end_),
                  read_buffer_.begin());
        read_end_ -= read_start_;
        read_start_ = 0;
      } else {
        read_buffer_.resize(
            std::max(client_->options().read_buffer_bytes, read_buffer_.size() * 2));
      }
    }
    const size_t room = read_buffer_.size() - read_end_;
    net::IoResult r = transport_->Read(read_buffer_.data() + read_end_, room);
    if (r.kind == net::IoResult::Kind::kWantRead || r.kind == net::IoResult::Kind::kWantWrite) {
      return;
    }
    if (r.kind == net::IoResult::Kind::kEof) {
      HandleEof();
      return;
    }
    if (r.kind == net::IoResult::Kind::kError) {
      if (TryStaleRetry()) return;
      Fail(Failure::kReset, "read: " + transport_->last_error());
      return;
    }
    if (result_.first_byte == 0) result_.first_byte = loop_->now();
    result_.bytes_received += r.bytes;
    read_end_ += r.bytes;
    Progress p = parser_.Feed(
        std::string_view(read_buffer_.data() + read_start_, read_end_ - read_start_), *this);
    if (state_ != State::kActive) return;  // a visitor callback failed the exchange
    read_start_ += p.consumed;
    if (read_start_ == read_end_) read_start_ = read_end_ = 0;
    if (p.state == Progress::State::kError) {
      Fail(Failure::kProtocol,
           std::string("invalid response: ") + std::string(ParseErrorName(p.error)));
      return;
    }
    if (p.state == Progress::State::kComplete) {
      // A streamed body not wholly sent (the server answered early): the connection is out
      // of step.
      if (request_.body_stream != nullptr && !StreamedBodyWritten()) response_keep_alive_ = false;
      // Bytes after a complete response, with no request outstanding, mean the connection is
      // out of step: do not reuse it.
      if (read_end_ > read_start_) response_keep_alive_ = false;
      Finish();
      return;
    }
    // A short read drained the socket; the rest of the response comes with the next edge
    // (unless this event already announced the peer's close, which no later edge repeats).
    if (r.bytes < room && !peer_closing && transport_->short_read_drains()) return;
  }
}

void ClientConnection::HandleEof() {
  Progress p = parser_.FinishAtEof(*this);
  if (state_ != State::kActive) return;
  if (p.state == Progress::State::kComplete) {
    response_keep_alive_ = false;
    Finish();
    return;
  }
  if (TryStaleRetry()) return;
  Fail(Failure::kReset, parser_.started() ? "connection closed before the response ended"
                                          : "connection closed before any response");
}

bool ClientConnection::TryStaleRetry() {
  if (!result_.reused_connection || is_retry_ || parser_.started() || !request_.idempotent ||
      request_.body_stream != nullptr) {
    return false;
  }
  ClientRequest request = request_;
  ResponseHandler* handler = handler_;
  handler_ = nullptr;
  ++client_->counters_.stale_retries;
  Close();
  client_->StartOnNewConnection(request, handler, /*retry=*/true);
  return true;
}

void ClientConnection::OnHead(const ResponseHead& head) {
  if (handler_ == nullptr) return;  // aborted from inside a callback (ResponseFlow::Abort)
  result_.status = head.status;
  response_keep_alive_ = head.keep_alive;
  if (request_.idle_timeout > 0) {
    request_.deadline = loop_->now() + request_.idle_timeout;  // OnTimer re-arms it lazily
  }
  if (request_.upgrade && head.status == 101) {
    request_.deadline = 0;  // a tunnel lasts as long as its two sides keep it open
    ArmTimer();
    // What the client sent after its head may go now, from the loop (not from inside the
    // parser's callback).
    loop_->Defer([this, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired() && state_ == State::kActive) WriteStreamedBody();
    });
  }
  handler_->OnResponseHead(head);
}

void ClientConnection::OnBody(std::string_view data) {
  if (handler_ == nullptr) return;  // aborted from inside a callback (ResponseFlow::Abort)
  if (request_.idle_timeout > 0) request_.deadline = loop_->now() + request_.idle_timeout;
  handler_->OnResponseBody(data);
}

void ClientConnection::OnInterim(const ResponseHead& head) {
  if (handler_ != nullptr && head.status != 100) handler_->OnResponseInterim(head);
}

void ClientConnection::OnTrailer(const Header& trailer) {
  constexpr size_t kMaxTrailers = 64;
  if (handler_ != nullptr && trailers_.size() < kMaxTrailers) {
    trailers_.emplace_back(trailer.name, trailer.value);
  }
}

void ClientConnection::ArmTimer() {
  if (request_.deadline == 0) {
    timer_.Cancel();
  } else if (!timer_.armed() || timer_.deadline() != request_.deadline) {
    timer_.ArmAt(request_.deadline);
  }
}

void ClientConnection::OnTimer() {
  if (state_ == State::kIdle || state_ == State::kClosed) return;
  if (reading_paused_) return;  // the deadline waits; ResumeReading re-arms it
  if (request_.deadline == 0 || loop_->now() < request_.deadline) {
    ArmTimer();
    return;
  }
  Fail(Failure::kTimeout,
       "timeout " + std::string(state_ == State::kOpening ? connector_.phase_name()
                                                          : "waiting for the response"));
}

void ClientConnection::Finish() {
  timer_.Cancel();
  result_.end = loop_->now();
  if (!trailers_.empty() && handler_ != nullptr) {
    std::vector<Header> trailers;
    trailers.reserve(trailers_.size());
    for (const auto& [name, value] : trailers_)
      trailers.push_back({name, value});
    handler_->OnResponseTrailers(trailers);
    trailers_.clear();
  }
  ResponseHandler* handler = handler_;
  handler_ = nullptr;
  ExchangeResult result = std::move(result_);
  Unbind();
  if (response_keep_alive_) {
    state_ = State::kIdle;
    client_->ReturnToPool(this);
  } else {
    Close();
  }
  // Last: the handler may start its next exchange, possibly on this very connection.
  client_->Complete(handler, std::move(result));
}

void ClientConnection::Fail(Failure failure, std::string detail) {
  ResponseHandler* handler = handler_;
  handler_ = nullptr;
  ExchangeResult result = std::move(result_);
  result.failure = failure;
  result.detail = std::move(detail);
  result.end = loop_->now();
  Unbind();
  Close();
  if (handler != nullptr) client_->Complete(handler, std::move(result));
}

void ClientConnection::Close() {
  if (state_ == State::kClosed && !transport_) return;
  state_ = State::kClosed;
  timer_.Cancel();
  Unbind();
  CloseSocket();
  client_->Destroy(this);
}

bool ClientConnection::Abandon() {
  bool had_exchange = handler_ != nullptr;
  handler_ = nullptr;
  Close();
  return had_exchange;
}

void ClientConnection::CloseSocket() {
  connector_.Cancel();
  if (transport_) {
    loop_->Remove(transport_->fd());
    transport_.reset();
  }
}

ResponseFlow::~ResponseFlow() {
  Abort();
}

void ResponseFlow::Pause() {
  if (target_ == nullptr) return;
  paused_ = true;
  target_->PauseFlow();
}

void ResponseFlow::Resume() {
  if (target_ == nullptr) return;
  paused_ = false;
  target_->ResumeFlow();
}

bool ResponseFlow::Abort() {
  if (target_ == nullptr) return false;
  target_->AbortFlow();  // unbinds this flow
  return true;
}

}  // namespace hammer::http
