#include "hammer/http/h2_client_connection.h"

#include <sys/epoll.h>

#include <algorithm>
#include <utility>

#include "hammer/http/tls.h"

namespace hammer::http {

namespace {

constexpr size_t kReadBytes = 64 * 1024;

}  // namespace

H2ClientConnection::H2ClientConnection(HttpClient* client, const Origin* origin)
    : client_(client),
      loop_(client->loop()),
      origin_(origin),
      connector_(client, origin, this),
      timer_(client->loop(), [this] { OnTimer(); }) {}

H2ClientConnection::~H2ClientConnection() {
  *alive_ = false;
  for (auto& exchange : all_) {
    UnbindFlow(exchange.get());
    UnbindBody(exchange.get(), /*cancel=*/true);
  }
  CloseSocket();
}

void H2ClientConnection::Open() {
  state_ = State::kOpening;
  connector_.Start(this, origin_->tls ? AlpnWire({"h2", "http/1.1"}) : std::string());
}

bool H2ClientConnection::HasRoom() const {
  if (state_ == State::kClosed) return false;
  size_t limit = client_->options().http2.max_streams;
  if (session_) {
    if (!session_->accepts_streams()) return false;
    limit = std::min<size_t>(limit, session_->peer_max_concurrent_streams());
  }
  return exchanges_ < limit;
}

H2ClientConnection::Exchange* H2ClientConnection::NewExchange() {
  if (free_.empty()) {
    all_.push_back(std::make_unique<Exchange>());
    all_.back()->connection = this;
    return all_.back().get();
  }
  Exchange* exchange = free_.back();
  free_.pop_back();
  return exchange;
}

void H2ClientConnection::UnbindFlow(Exchange* exchange) {
  ResponseFlow* flow = std::exchange(exchange->request.flow, nullptr);
  // Forgotten even when bound elsewhere: once let go of, the flow may be destroyed at any time
  // (an abandoned exchange's owner goes), and the exchange lives on until its stream closes.
  if (flow == nullptr || flow->target_ != exchange) return;
  flow->target_ = nullptr;
  flow->paused_ = false;
}

bool H2ClientConnection::FlowPaused(const Exchange* exchange) {
  const ResponseFlow* flow = exchange->request.flow;
  return flow != nullptr && flow->target_ == exchange && flow->paused_;
}

void H2ClientConnection::UnbindBody(Exchange* exchange, bool cancel) {
  BodyStream* stream = exchange->request.body_stream;
  if (stream == nullptr) return;
  exchange->request.body_stream = nullptr;
  exchange->body.Detach();
  stream->SetConsumer(nullptr);
  if (cancel && !stream->finished()) stream->Cancel();
}

bool H2ClientConnection::BodyPartlySent(const Exchange* exchange) {
  return exchange->body.streamed() && exchange->body.sent() > 0;
}

void H2ClientConnection::Release(Exchange* exchange) {
  UnbindFlow(exchange);
  UnbindBody(exchange, /*cancel=*/true);
  *exchange = Exchange{};
  exchange->connection = this;
  free_.push_back(exchange);
}

void H2ClientConnection::Send(const ClientRequest& request, ResponseHandler* handler, bool fresh,
                              bool is_retry) {
  Exchange* exchange = NewExchange();
  exchange->request = request;
  exchange->handler = handler;
  if (BodyStream* stream = request.body_stream) {
    exchange->body = H2RequestBody(stream);
    stream->SetConsumer(exchange);
  } else {
    exchange->body = H2RequestBody(request.body);
  }
  exchange->is_retry = is_retry;
  exchange->result.reused_connection = !fresh;
  if (ResponseFlow* flow = request.flow) {
    flow->target_ = exchange;
    flow->paused_ = false;
  }
  ++exchanges_;
  if (request.deadline != 0) ArmTimer(request.deadline);
  if (state_ == State::kOpening) {
    pending_.push_back(exchange);
    return;
  }
  Submit(exchange);
  if (request.body_stream != nullptr && request.body_stream->failed()) {
    OnRequestBodyReady(exchange);  // it failed before we listened: no wake-up comes
  } else if (!deferring_) {
    AfterSession();
  }
}

void H2ClientConnection::Submit(Exchange* exchange) {
  Status s = session_->Submit(exchange, exchange->request.head);
  if (!s.ok()) {
    FailExchange(exchange, Failure::kProtocol, "cannot send over HTTP/2: " + s.message());
    return;
  }
  exchange->submitted = true;
  if (FlowPaused(exchange)) session_->Pause(exchange);
  exchange->result.bytes_sent = exchange->request.head.size() + exchange->request.body.size();
}

void H2ClientConnection::OnTransportReady(std::unique_ptr<net::Transport> transport) {
  const ConnectTimings& timings = connector_.timings();
  for (Exchange* exchange : pending_) {
    if (exchange->result.reused_connection) continue;
    exchange->result.connect_start = timings.connect_start;
    exchange->result.connect_end = timings.connect_end;
    exchange->result.handshake_end = timings.handshake_end;
  }
  if (origin_->tls && transport->application_protocol() != "h2") {
    std::string_view chosen = transport->application_protocol();
    FallBackOrRefuse(std::move(transport),
                     chosen.empty() ? "the server chose no protocol in ALPN"
                                    : "the server chose " + std::string(chosen) + " in ALPN");
    return;
  }
  transport_ = std::move(transport);
  H2ClientSession::Settings settings;
  settings.max_head_bytes = client_->options().limits.max_head_bytes;
  settings.max_headers = client_->options().limits.max_headers;
  settings.window_bytes = client_->options().http2.window_bytes;
  Result<std::unique_ptr<H2ClientSession>> session =
      H2ClientSession::Create(this, settings, origin_->tls);
  if (!session.ok()) {
    FailAll(Failure::kOther, session.status().message());
    return;
  }
  session_ = std::move(*session);
  state_ = State::kActive;
  SubmitPending();
  AfterSession();
  if (state_ == State::kActive) OnReadable();  // the server's SETTINGS may already be here
}

void H2ClientConnection::SubmitPending() {
  std::vector<Exchange*> pending = std::move(pending_);
  pending_.clear();
  for (Exchange* exchange : pending) {
    if (exchange->handler != nullptr) Submit(exchange);
  }
}

void H2ClientConnection::FallBackOrRefuse(std::unique_ptr<net::Transport> transport,
                                          std::string why) {
  if (!client_->options().http2.fallback) {
    transport.reset();
    FailAll(Failure::kProtocol, "the server does not speak HTTP/2: " + why);
    return;
  }
  client_->FallBackToHttp1(origin_);
  // The exchanges in the order they came: those still queued, or those submitted as streams
  // that an HTTP/1.1 server never processed (it read the preface as a bad request).
  std::vector<Exchange*> live = std::move(pending_);
  pending_.clear();
  if (live.empty()) {
    for (auto& exchange : all_) {
      if (exchange->handler != nullptr) live.push_back(exchange.get());
    }
    std::sort(live.begin(), live.end(),
              [](const Exchange* a, const Exchange* b) { return a->id < b->id; });
  }
  Close();
  for (Exchange* exchange : live) {
    if (exchange->handler == nullptr) continue;
    ResponseHandler* handler = exchange->handler;
    ClientRequest request = exchange->request;
    ExchangeResult opened = exchange->result;
    exchange->handler = nullptr;
    --exchanges_;
    if (BodyPartlySent(exchange)) {
      UnbindBody(exchange, /*cancel=*/true);
      opened.failure = Failure::kProtocol;
      opened.detail = "the server does not speak HTTP/2: " + why +
                      " (part of the streamed request body was already sent)";
      opened.end = loop_->now();
      client_->Complete(handler, std::move(opened));
      continue;
    }
    UnbindBody(exchange, /*cancel=*/false);  // the HTTP/1.1 exchange consumes it from here
    if (transport) {
      ConnectTimings timings{opened.connect_start, opened.connect_end, opened.handshake_end};
      client_->ContinueOnHttp1(std::move(transport), timings, request, handler);
    } else {
      client_->Send(request, handler);
    }
  }
}

void H2ClientConnection::OnConnectFailed(Failure failure, std::string detail) {
  FailAll(failure, detail);
}

void H2ClientConnection::OnIoEvents(uint32_t events) {
  if (state_ != State::kActive) return;
  if (events & EPOLLOUT) {
    Flush();
    if (state_ == State::kActive && out_sent_ == out_.size()) Pump();
  }
  if (state_ == State::kActive && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
    OnReadable();
  }
}

void H2ClientConnection::OnReadable() {
  if (in_.size() < kReadBytes) in_.resize(kReadBytes);
  bool closed_by_peer = false;
  std::string read_error;
  deferring_ = true;
  while (state_ == State::kActive) {
    net::IoResult r = transport_->Read(in_.data(), in_.size());
    if (r.kind == net::IoResult::Kind::kWantRead || r.kind == net::IoResult::Kind::kWantWrite) {
      break;
    }
    if (r.kind == net::IoResult::Kind::kEof) {
      closed_by_peer = true;
      break;
    }
    if (r.kind == net::IoResult::Kind::kError) {
      read_error = "read: " + transport_->last_error();
      break;
    }
    std::string_view bytes(in_.data(), r.bytes);
    if (!greeted_) {
      greeted_ = true;
      if (!origin_->tls && bytes.starts_with("HTTP/1.")) {
        deferring_ = false;
        FallBackOrRefuse(nullptr, "it answered the HTTP/2 preface (h2c) in HTTP/1.x");
        return;
      }
    }
    if (Status s = session_->Receive(bytes); !s.ok()) {
      read_error = "HTTP/2: " + s.message();
      break;
    }
    if (r.bytes < in_.size() && transport_->short_read_drains()) break;
  }
  deferring_ = false;
  if (!read_error.empty()) {
    FailAll(peer_went_away_ && goaway_error_ != 0 ? Failure::kGoaway : Failure::kReset, read_error);
  } else if (closed_by_peer) {
    if (peer_went_away_ && goaway_error_ != 0) {
      FailAll(Failure::kGoaway,
              "the server ended the connection: GOAWAY " + H2ErrorName(goaway_error_));
    } else {
      FailAll(Failure::kReset, "connection closed before the response ended");
    }
  }
  AfterSession();
}

void H2ClientConnection::AfterSession() {
  // Handlers sending their next request from here are submitted, and all written at once by
  // the Pump below.
  deferring_ = true;
  while (!done_.empty()) {
    std::vector<Exchange*> done = std::move(done_);
    done_.clear();
    for (Exchange* exchange : done)
      Complete(exchange);
  }
  deferring_ = false;
  Pump();
  CloseIfDone();
}

void H2ClientConnection::Pump() {
  while (state_ == State::kActive && out_sent_ == out_.size()) {
    out_.clear();
    out_sent_ = 0;
    Status s = session_->Produce(out_);
    if (!s.ok()) {
      FailAll(Failure::kOther, "HTTP/2: " + s.message());
      return;
    }
    if (out_.empty()) break;
    Flush();
  }
  // Streams refused before they were sent close inside Produce.
  if (!done_.empty()) AfterSession();
}

void H2ClientConnection::Flush() {
  while (state_ == State::kActive && out_sent_ < out_.size()) {
    iovec iov{out_.data() + out_sent_, out_.size() - out_sent_};
    net::IoResult r = transport_->Write(&iov, 1);
    if (r.kind == net::IoResult::Kind::kOk) {
      out_sent_ += r.bytes;
      continue;
    }
    if (r.kind == net::IoResult::Kind::kWantWrite || r.kind == net::IoResult::Kind::kWantRead) {
      return;
    }
    FailAll(Failure::kReset, "write: " + transport_->last_error());
    return;
  }
}

void H2ClientConnection::CloseIfDone() {
  if (state_ != State::kActive || out_sent_ != out_.size()) return;
  if (session_->finished()) {
    if (peer_went_away_ && goaway_error_ != 0) {
      FailAll(Failure::kGoaway,
              "the server ended the connection: GOAWAY " + H2ErrorName(goaway_error_));
    } else {
      FailAll(Failure::kProtocol, "HTTP/2 session ended");
    }
  } else if (peer_went_away_ && exchanges_ == 0) {
    Close();
  }
}

void H2ClientConnection::OnStreamInterim(H2ClientSession::Stream* stream,
                                         const ResponseHead& head) {
  auto* exchange = static_cast<Exchange*>(stream);
  if (exchange->handler != nullptr) exchange->handler->OnResponseInterim(head);
}

void H2ClientConnection::OnStreamHead(H2ClientSession::Stream* stream, const ResponseHead& head) {
  auto* exchange = static_cast<Exchange*>(stream);
  if (exchange->handler == nullptr) return;
  exchange->result.status = head.status;
  if (exchange->result.first_byte == 0) exchange->result.first_byte = loop_->now();
  KeepAlive(exchange);
  exchange->handler->OnResponseHead(head);
}

void H2ClientConnection::OnStreamData(H2ClientSession::Stream* stream, std::string_view data) {
  auto* exchange = static_cast<Exchange*>(stream);
  if (exchange->handler == nullptr) return;
  exchange->result.bytes_received += data.size();
  KeepAlive(exchange);
  exchange->handler->OnResponseBody(data);
}

void H2ClientConnection::OnStreamTrailers(H2ClientSession::Stream* stream,
                                          std::span<const Header> trailers) {
  auto* exchange = static_cast<Exchange*>(stream);
  if (exchange->handler != nullptr) exchange->handler->OnResponseTrailers(trailers);
}

void H2ClientConnection::OnStreamClose(H2ClientSession::Stream* stream, uint32_t error_code) {
  auto* exchange = static_cast<Exchange*>(stream);
  exchange->submitted = false;
  if (exchange->handler == nullptr) {
    Release(exchange);
    return;
  }
  if (error_code == NGHTTP2_NO_ERROR) {
    if (!exchange->final_head) {
      FailExchange(exchange, Failure::kProtocol, "HTTP/2 stream ended without a response");
      return;
    }
    exchange->result.end = loop_->now();
    done_.push_back(exchange);
    return;
  }
  std::string code = H2ErrorName(error_code);
  if (exchange->head_too_large) {
    FailExchange(exchange, Failure::kProtocol, "response head larger than the limits");
  } else if (error_code == NGHTTP2_REFUSED_STREAM && !exchange->is_retry &&
             !BodyPartlySent(exchange)) {
    // Not processed by the server (RFC 9113 §8.7): safe to send again, whatever the method.
    exchange->retry = true;
    done_.push_back(exchange);
  } else if (exchange->peer_reset) {
    FailExchange(exchange, Failure::kStreamReset, "stream reset by the server: " + code);
  } else if (error_code == NGHTTP2_REFUSED_STREAM) {
    FailExchange(exchange, Failure::kGoaway,
                 exchange->is_retry ? "the server refused the stream (GOAWAY) twice"
                                    : "the server refused the stream (GOAWAY) after part of its "
                                      "streamed request body was sent");
  } else if (peer_went_away_ && goaway_error_ != NGHTTP2_NO_ERROR) {
    FailExchange(exchange, Failure::kGoaway,
                 "the server ended the connection: GOAWAY " + H2ErrorName(goaway_error_));
  } else {
    FailExchange(exchange, Failure::kProtocol,
                 "invalid HTTP/2 response (stream error " + code + ")");
  }
}

void H2ClientConnection::OnGoaway(int32_t, uint32_t error_code) {
  peer_went_away_ = true;
  goaway_error_ = error_code;
}

void H2ClientConnection::FailExchange(Exchange* exchange, Failure failure, std::string detail) {
  if (exchange->handler == nullptr) return;
  exchange->result.failure = failure;
  exchange->result.detail = std::move(detail);
  exchange->result.end = loop_->now();
  done_.push_back(exchange);
}

void H2ClientConnection::Complete(Exchange* exchange) {
  ResponseHandler* handler = exchange->handler;
  if (handler == nullptr) return;  // abandoned meanwhile
  exchange->handler = nullptr;
  --exchanges_;
  ResponseFlow* flow = exchange->request.flow;  // a retry takes it along
  UnbindFlow(exchange);
  if (exchange->retry) {
    ClientRequest request = exchange->request;
    request.flow = flow;
    UnbindBody(exchange, /*cancel=*/false);  // the retry takes the body over
    Release(exchange);
    ++client_->counters_.stale_retries;
    client_->SendH2(request, handler, /*is_retry=*/true);
    return;
  }
  if (exchange->body.streamed()) {
    exchange->result.bytes_sent = exchange->request.head.size() + exchange->body.sent();
  }
  UnbindBody(exchange, /*cancel=*/true);
  ExchangeResult result = std::move(exchange->result);
  if (!exchange->submitted) Release(exchange);
  client_->Complete(handler, std::move(result));
}

void H2ClientConnection::FailAll(Failure failure, const std::string& detail) {
  pending_.clear();
  for (auto& exchange : all_) {
    if (exchange->handler == nullptr) continue;
    exchange->submitted = false;  // the session goes with the connection
    if (std::find(done_.begin(), done_.end(), exchange.get()) != done_.end()) continue;
    FailExchange(exchange.get(), failure, detail);
  }
  Close();
  // Nobody else will deliver them: the connection is closed.
  std::vector<Exchange*> done = std::move(done_);
  done_.clear();
  for (Exchange* exchange : done)
    Complete(exchange);
}

void H2ClientConnection::KeepAlive(Exchange* exchange) {
  // OnTimer finds the later deadline when the earlier one it was armed for comes.
  if (exchange->request.idle_timeout > 0 && exchange->request.deadline != 0) {
    exchange->request.deadline = loop_->now() + exchange->request.idle_timeout;
  }
}

void H2ClientConnection::ArmTimer(MonoNanos deadline) {
  if (!timer_.armed() || deadline < timer_.deadline()) timer_.ArmAt(deadline);
}

void H2ClientConnection::OnTimer() {
  if (state_ == State::kClosed) return;
  MonoNanos now = loop_->now();
  MonoNanos next = 0;
  for (auto& owned : all_) {
    Exchange* exchange = owned.get();
    if (exchange->handler == nullptr || exchange->request.deadline == 0) continue;
    if (FlowPaused(exchange)) continue;  // the deadline waits (ResumeStream pushes it back)
    if (exchange->request.deadline > now) {
      if (next == 0 || exchange->request.deadline < next) next = exchange->request.deadline;
      continue;
    }
    std::string detail = state_ == State::kOpening
                             ? "timeout " + std::string(connector_.phase_name())
                             : std::string("timeout waiting for the response");
    if (state_ == State::kOpening) {
      std::erase(pending_, exchange);
    } else if (exchange->submitted && session_->Cancel(exchange)) {
      exchange->submitted = false;  // it had ended while paused: no close will come
    }
    FailExchange(exchange, Failure::kTimeout, std::move(detail));
  }
  if (next != 0) timer_.ArmAt(next);
  AfterSession();
}

void H2ClientConnection::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  timer_.Cancel();
  CloseSocket();
  client_->Destroy(this);
}

size_t H2ClientConnection::Abandon() {
  size_t abandoned = exchanges_;
  for (auto& exchange : all_) {
    exchange->handler = nullptr;
    UnbindFlow(exchange.get());
    UnbindBody(exchange.get(), /*cancel=*/true);
  }
  exchanges_ = 0;
  done_.clear();
  pending_.clear();
  Close();
  return abandoned;
}

void H2ClientConnection::PauseStream(Exchange* exchange) {
  exchange->paused_at = loop_->now();
  exchange->resume_due = false;
  if (exchange->submitted) session_->Pause(exchange);
}

void H2ClientConnection::ResumeStream(Exchange* exchange) {
  if (exchange->request.deadline != 0) {
    exchange->request.deadline += loop_->now() - exchange->paused_at;
    ArmTimer(exchange->request.deadline);
  }
  exchange->resume_due = true;
  if (resumes_scheduled_) return;
  resumes_scheduled_ = true;
  std::weak_ptr<bool> alive = alive_;
  loop_->Defer([this, alive] {
    if (alive.expired() || !*alive.lock()) return;
    resumes_scheduled_ = false;
    DeliverResumes();
  });
}

// What paused streams held reaches their handlers from here, never from inside Resume.
void H2ClientConnection::DeliverResumes() {
  if (state_ != State::kActive) return;
  deferring_ = true;
  for (auto& owned : all_) {
    Exchange* exchange = owned.get();
    if (!exchange->resume_due) continue;
    exchange->resume_due = false;
    if (exchange->submitted && !FlowPaused(exchange)) session_->Resume(exchange);
  }
  deferring_ = false;
  AfterSession();
}

void H2ClientConnection::AbortStream(Exchange* exchange) {
  UnbindFlow(exchange);
  UnbindBody(exchange, /*cancel=*/true);
  if (exchange->handler == nullptr) return;
  exchange->handler = nullptr;
  --exchanges_;
  std::erase(pending_, exchange);
  std::erase(done_, exchange);
  if (exchange->submitted && session_->Cancel(exchange)) exchange->submitted = false;
  // A submitted stream is released at its close; the others now.
  if (!exchange->submitted) Release(exchange);
  if (!deferring_) AfterSession();
}

void H2ClientConnection::OnRequestBodyReady(Exchange* exchange) {
  if (exchange->handler == nullptr || state_ == State::kClosed) return;
  if (exchange->request.body_stream->failed()) {
    std::erase(pending_, exchange);
    // Only this stream is reset; the connection's other streams go on.
    if (exchange->submitted && session_->Cancel(exchange)) exchange->submitted = false;
    FailExchange(exchange, Failure::kOther, "request body abandoned by its source");
  } else if (exchange->submitted) {
    KeepAlive(exchange);  // request bytes move
    session_->ResumeBody(exchange);
  }
  if (!deferring_) AfterSession();
}

void H2ClientConnection::CloseSocket() {
  connector_.Cancel();
  if (transport_) {
    loop_->Remove(transport_->fd());
    transport_.reset();
  }
}

}  // namespace hammer::http
