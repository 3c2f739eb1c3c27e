#include "hammer/http/http1_server_codec.h"

#include <charconv>
#include <utility>

namespace hammer::http {

namespace {

// A buffer grown past this for one large message is given back once it is empty again.
constexpr size_t kKeepCapacity = 64 * 1024;
constexpr std::string_view kRequestTimeout =
    "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

void ReleaseIfLarge(std::string& buffer) {
  if (buffer.empty() && buffer.capacity() > kKeepCapacity) std::string().swap(buffer);
}

void AppendNumber(std::string& out, uint64_t n) {
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof(buf), n).ptr;
  out.append(buf, end);
}

}  // namespace

Http1ServerCodec::Http1ServerCodec(Host* host, const Context& context, bool http2_port)
    : host_(host),
      options_(*context.options),
      resources_(context.resources),
      loop_(context.loop),
      http2_port_(http2_port),
      parser_(context.options->limits) {
  head_clock_.accepted = context.accepted;
  EnterHead();
}

Http1ServerCodec::~Http1ServerCodec() {
  Stop();
}

// --- Input ---------------------------------------------------------------------------------

ServerCodec::Intake Http1ServerCodec::intake() const {
  switch (state_) {
    case State::kHead:
    case State::kBody:
      return Intake::kTake;
    case State::kStreamingBody:
    case State::kTunnel:
      // A streamed body waits until its stream drains (OnBodyStreamDrained); so does the client.
      return request_stream_->full() ? Intake::kNone : Intake::kTake;
    case State::kServing:
      return Intake::kHold;
    case State::kTunnelOut:
    case State::kDone:
      return Intake::kNone;
  }
  return Intake::kNone;
}

// Parses and dispatches requests from `input` while the codec takes one (a handler that answers
// at once lets the next pipelined request through).
size_t Http1ServerCodec::Receive(std::string_view input) {
  size_t used = 0;
  while (used < input.size() && TakingRequests()) {
    // The answers already queued must drain before another request is taken.
    if (state_ == State::kHead && !parser_.started() &&
        host_->output_pending() > kOutputHighWater) {
      break;
    }
    if (intake() == Intake::kNone) break;  // a streamed body's stream is full
    if (state_ == State::kTunnel) {        // raw bytes of the other protocol
      request_stream_->Append(input.substr(used));
      used = input.size();
      break;
    }
    Progress p = parser_.Feed(input.substr(used), *this);
    used += p.consumed;
    if (p.state == Progress::State::kError) {
      Refuse(p.error);
      break;
    }
    if (refusal_) {
      Refuse(*refusal_, 503, "over capacity: too many bytes buffered");
      break;
    }
    if (p.state == Progress::State::kNeedMore) {
      if (state_ == State::kBody && request_stream_ != nullptr) Dispatch();  // streamed: now
      break;
    }
    // kComplete: OnHead/OnBody have collected (copied) the request; hand it over.
    parser_.Reset();
    if (request_stream_ == nullptr) {
      Dispatch();
      continue;
    }
    if (state_ == State::kBody && IsUpgrade(head_)) {  // what follows the head is the tunnel's
      Dispatch();
      continue;
    }
    // A streamed body ended, perhaps in the read that streaming began with.
    request_stream_->SetTrailers(TakeTrailers());
    request_stream_->End();
    if (state_ == State::kBody) Dispatch();
    if (request_stream_ != nullptr) EndRequestStream();
  }
  if (state_ == State::kBody || state_ == State::kStreamingBody || state_ == State::kTunnel) {
    last_moved_ = loop_->now();
  }
  // The first bytes of a head are in: from now on the head deadline, not the idle timeout, runs
  // (the first request's deadline already counts from the accept).
  if (state_ == State::kHead && head_clock_.head_started == 0 &&
      (used < input.size() || parser_.started())) {
    head_clock_.head_started = loop_->now();
  }
  return used;
}

void Http1ServerCodec::OnHead(const RequestHead& head) {
  state_ = State::kBody;
  const BufferBudget& budget = resources_->budget();
  uint64_t body_bytes =
      head.framing == BodyFraming::kContentLength ? head.content_length : uint64_t{0};
  const bool stream = options_.stream_body_above != 0 && body_bytes > options_.stream_body_above;
  if (stream) body_bytes = options_.stream_window;  // what a streamed body holds at most
  if (budget.exhausted() || budget.WouldExceed(body_bytes)) {
    refusal_ = Rejection::kOverBudget;
    return;
  }
  if (head.expect_continue) host_->OutputFor(kContinue.size()).append(kContinue);
  // The views point into the input buffer, which is reused or compacted: copy.
  const std::string_view extra[] = {head.method, head.target};
  head_copy_.Assign(head.headers, extra);
  head_ = head;
  head_.method = head_copy_.Extra(0);
  head_.target = head_copy_.Extra(1);
  head_.headers = head_copy_.headers();
  body_.clear();
  trailer_copy_.clear();
  if (IsUpgrade(head)) {
    StartRequestStream(std::nullopt);
    return;
  }
  if (stream) StartRequestStream(head.content_length);
}

void Http1ServerCodec::OnBody(std::string_view data) {
  if (refusal_) return;  // answered 503 once the parser returns
  if (request_stream_ != nullptr) {
    request_stream_->Append(data);  // dropped if its consumer cancelled it
    return;
  }
  body_.append(data);
  const size_t threshold = options_.stream_body_above;
  if (threshold != 0 && body_.size() > threshold) {  // a chunked body grew past the threshold
    StartRequestStream(std::nullopt);
    request_stream_->Append(body_);
    body_.clear();
    ReleaseIfLarge(body_);
  }
}

void Http1ServerCodec::OnTrailer(const Header& trailer) {
  trailer_copy_.emplace_back(trailer.name, trailer.value);
}

// Views of the trailer fields collected for the request that just ended.
std::span<const Header> Http1ServerCodec::TakeTrailers() {
  trailers_.clear();
  for (const auto& [name, value] : trailer_copy_)
    trailers_.push_back({name, value});
  return trailers_;
}

// An upgrade to h2c is never a tunnel: past the proxy the client would speak HTTP/2 straight to
// the upstream, every later request out of the proxy's sight and rules ("h2c smuggling", as
// Envoy refuses it). Such a request is an ordinary one, its Upgrade dropped as hop-by-hop.
bool Http1ServerCodec::IsUpgrade(const RequestHead& head) const {
  const std::optional<std::string_view> upgrade = FindHeader(head.headers, "Upgrade");
  return options_.upgrades && head.minor_version >= 1 && head.framing == BodyFraming::kNone &&
         upgrade && !ListHasToken(*upgrade, "h2c") &&
         ListHasToken(FindHeader(head.headers, "Connection").value_or(""), "upgrade");
}

void Http1ServerCodec::Dispatch() {
  const bool upgrade = request_stream_ != nullptr && IsUpgrade(head_);
  if (upgrade) {
    state_ = State::kTunnel;
    last_moved_ = loop_->now();
  } else if (request_stream_ != nullptr && !request_stream_->ended()) {
    state_ = State::kStreamingBody;
    last_moved_ = loop_->now();
  } else {
    state_ = State::kServing;
    last_moved_ = 0;
  }
  ++sequence_;
  IncomingRequest request{head_, body_, {}, request_stream_, upgrade};
  if (state_ == State::kServing && request_stream_ == nullptr) request.trailers = TakeTrailers();
  host_->Dispatch(request, sequence_);
  body_.clear();  // the handler has copied what it keeps
  ReleaseIfLarge(body_);
}

void Http1ServerCodec::OnInputEnd() {
  if (state_ != State::kTunnel) return;
  request_stream_->End();
  request_stream_->SetProducer(nullptr);
  request_stream_.reset();
  state_ = State::kTunnelOut;
}

void Http1ServerCodec::EnterHead() {
  state_ = State::kHead;
  waiting_since_ = loop_->now();
}

// --- Refusals and deadlines ----------------------------------------------------------------

void Http1ServerCodec::Refuse(ParseError error) {
  if (head_clock_.first_request && http2_port_ &&
      (error == ParseError::kBadStartLine || error == ParseError::kBadVersion)) {
    resources_->Count(Rejection::kBadRequest);  // neither HTTP/1.x nor HTTP/2: no answer
    Finish(Ending::kAbort);
    return;
  }
  if (error == ParseError::kHeadTooLarge || error == ParseError::kTooManyHeaders) {
    Refuse(Rejection::kHeadTooLarge, 431, ParseErrorName(error));
  } else if (error == ParseError::kBodyTooLarge) {
    Refuse(Rejection::kBodyTooLarge, 413, ParseErrorName(error));
  } else if (error == ParseError::kUnsupportedTransferCoding) {
    Refuse(Rejection::kUnsupportedCoding, 501, ParseErrorName(error));
  } else {
    Refuse(Rejection::kBadRequest, 400, ParseErrorName(error));
  }
}

// The client may still be sending what was refused: the connection reads and drops it before
// closing (kLinger), or the close would reset the connection and the client might never see the
// answer.
void Http1ServerCodec::Refuse(Rejection rejection, int status, std::string_view reason) {
  resources_->Count(rejection);
  refusal_.reset();
  std::string& out = host_->OutputFor(256 + reason.size());
  AppendResponseHead(out, status, "text/plain", reason.size() + 1, {}, /*keep_alive=*/false);
  out.append(reason).append("\n");
  Finish(Ending::kLinger);
}

ServerCodec::Outlook Http1ServerCodec::Look() {
  Outlook outlook;
  switch (state_) {
    case State::kHead: {
      outlook.deadline = HeadDeadline(head_clock_, options_.header_timeout, options_.idle_timeout);
      // A connection is idle between requests; before its first one it waits for a head.
      const bool head_begun = head_clock_.first_request || head_clock_.head_started != 0 ||
                              parser_.started() || host_->input_buffered() > 0;
      outlook.waiting = head_begun ? Waiting::kHead : Waiting::kIdle;
      outlook.waiting_since = waiting_since_;
      break;
    }
    case State::kBody:
    case State::kStreamingBody:
    case State::kTunnel:
      outlook.deadline = last_moved_ + StreamIdleTimeout();
      break;
    case State::kServing:
    case State::kTunnelOut:
      if (response_ && last_moved_ != 0) outlook.deadline = last_moved_ + StreamIdleTimeout();
      break;
    case State::kDone:
      break;
  }
  return outlook;
}

void Http1ServerCodec::OnDeadline() {
  switch (state_) {
    case State::kHead: {
      const bool head_begun = head_clock_.head_started != 0 || host_->input_buffered() > 0;
      if (!head_begun && !head_clock_.first_request) {
        Finish(Ending::kAbort);  // an idle keep-alive connection: nothing was asked or refused
        return;
      }
      resources_->Count(Rejection::kHeaderTimeout);
      if (!head_begun) {
        Finish(Ending::kAbort);
        return;
      }
      host_->OutputFor(kRequestTimeout.size()).append(kRequestTimeout);
      Finish(Ending::kBestEffort);  // the client may not be reading
      return;
    }
    case State::kBody:
      resources_->Count(Rejection::kBodyTimeout);
      host_->OutputFor(kRequestTimeout.size()).append(kRequestTimeout);
      Finish(Ending::kBestEffort);
      return;
    case State::kStreamingBody:
      resources_->Count(Rejection::kBodyTimeout);  // the handler has it: nothing to answer
      Finish(Ending::kAbort);
      return;
    case State::kTunnel:
      Finish(Ending::kAbort);  // an idle tunnel is no refusal
      return;
    case State::kServing:
    case State::kTunnelOut:
      if (response_) Finish(Ending::kAbort);  // the client stopped reading the answer
      return;
    case State::kDone:
      return;
  }
}

Nanos Http1ServerCodec::StreamIdleTimeout() const {
  return state_ == State::kTunnel || state_ == State::kTunnelOut ? options_.tunnel_idle_timeout
                                                                 : options_.idle_timeout;
}

void Http1ServerCodec::Drain() {
  if (state_ == State::kHead && !parser_.started() && host_->input_buffered() == 0 &&
      host_->output_pending() == 0) {
    Finish(Ending::kAbort);
  }
}

void Http1ServerCodec::Finish(Ending ending) {
  state_ = State::kDone;
  host_->End(ending);
}

void Http1ServerCodec::Watch(uint64_t sequence, RequestWatcher* watcher) {
  if (sequence == sequence_ && Answerable() && !response_) watcher_ = watcher;
}

void Http1ServerCodec::RespondInterim(uint64_t sequence, int status,
                                      std::span<const Header> fields) {
  if (sequence != sequence_ || !Answerable() || response_ || status < 102 || status > 199) return;
  if (head_.minor_version < 1 || state_ == State::kTunnel || state_ == State::kTunnelOut) return;
  std::string& out = host_->OutputFor(64);
  out.append("HTTP/1.1 ");
  AppendNumber(out, static_cast<uint64_t>(status));
  out.append(" ").append(ReasonPhrase(status)).append("\r\n");
  for (const Header& h : fields)
    out.append(h.name).append(": ").append(h.value).append("\r\n");
  out.append("\r\n");
}

void Http1ServerCodec::OnClientGone() {
  if (watcher_ != nullptr) std::exchange(watcher_, nullptr)->OnRequestAbandoned();
}

void Http1ServerCodec::Stop() {
  state_ = State::kDone;
  watcher_ = nullptr;
  if (request_stream_ != nullptr) FailRequestStream();
  if (response_) {
    response_->body->SetConsumer(nullptr);
    response_->body->Cancel();
    response_.reset();
  }
}

// --- Answers -------------------------------------------------------------------------------

bool Http1ServerCodec::KeepsAlive() const {
  return head_.keep_alive && !host_->draining() && state_ != State::kStreamingBody &&
         state_ != State::kTunnel && state_ != State::kTunnelOut;
}

void Http1ServerCodec::Respond(uint64_t sequence, int status, std::string_view content_type,
                               std::string_view body, std::span<const Header> extra) {
  if (sequence != sequence_ || !Answerable()) return;
  watcher_ = nullptr;
  const bool keep_alive = KeepsAlive();
  std::string& out = host_->OutputFor(256 + body.size());
  AppendResponseHead(out, status, content_type, body.size(), extra, keep_alive);
  if (head_.method != "HEAD") out.append(body);
  Answered(keep_alive);
}

void Http1ServerCodec::RespondRaw(uint64_t sequence, std::string_view bytes, bool keep_alive) {
  if (sequence != sequence_ || !Answerable()) return;
  watcher_ = nullptr;
  host_->OutputFor(bytes.size()).append(bytes);
  Answered(keep_alive && KeepsAlive());
}

void Http1ServerCodec::RespondRawThenReset(uint64_t sequence, std::string_view bytes) {
  if (sequence != sequence_ || !Answerable()) return;
  watcher_ = nullptr;
  host_->OutputFor(bytes.size()).append(bytes);
  Finish(Ending::kReset);
}

void Http1ServerCodec::RespondStream(uint64_t sequence, std::string_view head,
                                     std::shared_ptr<BodyStream> body, bool keep_alive) {
  if (sequence != sequence_ || !Answerable() || response_) {
    body->Cancel();
    return;
  }
  watcher_ = nullptr;  // from here the stream tells the producer (BodyStream::Cancel)
  host_->OutputFor(head.size()).append(head);  // the head goes now, whatever the body does
  response_ = ResponseStream{std::move(body), keep_alive};
  response_->body->SetConsumer(this);
}

void Http1ServerCodec::AppendResponseHead(std::string& out, int status,
                                          std::string_view content_type, size_t body_size,
                                          std::span<const Header> extra, bool keep_alive) {
  out.append("HTTP/1.1 ");
  AppendNumber(out, static_cast<uint64_t>(status));
  out.append(" ").append(ReasonPhrase(status)).append("\r\n");
  if (!content_type.empty()) out.append("Content-Type: ").append(content_type).append("\r\n");
  for (const Header& h : extra)
    out.append(h.name).append(": ").append(h.value).append("\r\n");
  out.append("Content-Length: ");
  AppendNumber(out, body_size);
  out.append(keep_alive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n");
}

void Http1ServerCodec::Answered(bool keep_alive) {
  if (state_ == State::kStreamingBody || state_ == State::kTunnel) {
    // Answered before the streamed body's end: the rest is not read (the stream fails for its
    // consumer), and the connection closes after the answer, lingering so the client sees it.
    FailRequestStream();
    Finish(Ending::kLinger);
    return;
  }
  if (!keep_alive) {
    Finish(Ending::kClose);
    return;
  }
  head_clock_.first_request = false;
  head_clock_.idle_since = loop_->now();
  head_clock_.head_started = 0;
  EnterHead();  // requests pipelined behind this one go on once the output has room
}

// --- Streams -------------------------------------------------------------------------------

void Http1ServerCodec::StartRequestStream(std::optional<uint64_t> length) {
  request_stream_ =
      std::make_shared<BodyStream>(loop_, length, options_.stream_window, &resources_->budget());
  request_stream_->SetProducer(this);
}

// The parser has the body's last byte: the stream ends, and the request is served like any
// other (answers given while the body still came are in Answered). A streamed answer already
// going keeps its idle clock; any other has none until its first byte moves.
void Http1ServerCodec::EndRequestStream() {
  request_stream_->End();
  request_stream_->SetProducer(nullptr);
  request_stream_.reset();
  if (state_ == State::kStreamingBody) {
    state_ = State::kServing;
    if (!response_) last_moved_ = 0;
  }
}

void Http1ServerCodec::FailRequestStream() {
  request_stream_->SetProducer(nullptr);
  request_stream_->Fail();
  request_stream_.reset();
}

// The request stream has room again (or its consumer cancelled it, and what comes is dropped):
// the connection feeds what waits in its buffer, then reads the client again.
void Http1ServerCodec::OnBodyStreamDrained() {
  if (state_ == State::kStreamingBody || state_ == State::kTunnel) host_->Wake();
}

void Http1ServerCodec::OnBodyStreamReady() {
  if (response_ && Answerable()) host_->Wake();
}

// One piece of the streamed answer per call, at most kOutputHighWater bytes: a client that
// reads slowly leaves the bytes in the stream, whose producer then stops its source.
void Http1ServerCodec::Produce(std::string& out, size_t limit) {
  if (!response_ || out.size() >= limit) return;
  BodyStream& stream = *response_->body;
  if (stream.failed()) {
    // The producer broke mid-body (the upstream reset): the client has a status line already
    // and nothing can say so but closing, once what it was sent so far is written.
    stream.SetConsumer(nullptr);
    response_.reset();
    Finish(Ending::kClose);
    return;
  }
  // A tunnel's bytes, and a body of known length, go as they are; any other body is chunked.
  const bool raw =
      stream.length().has_value() || state_ == State::kTunnel || state_ == State::kTunnelOut;
  std::string_view piece = stream.available().substr(0, kOutputHighWater);
  if (!piece.empty()) {
    if (raw) {
      out.append(piece);
    } else {
      AppendChunk(out, piece);
    }
    stream.Consume(piece.size());
    last_moved_ = loop_->now();
    return;
  }
  if (!stream.finished()) return;  // OnBodyStreamReady brings more
  if (!raw) AppendLastChunk(out, stream.trailers());
  FinishResponseStream();
}

void Http1ServerCodec::FinishResponseStream() {
  response_->body->SetConsumer(nullptr);
  const bool keep_alive = response_->keep_alive;
  response_.reset();
  Answered(keep_alive && KeepsAlive());
}

}  // namespace hammer::http
