#include "hammer/http/h2_server_codec.h"

#include <utility>

#include "hammer/http/owned_headers.h"
#include "hammer/http/response_parser.h"

namespace hammer::http {

namespace {

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

int32_t StreamId(uint64_t sequence) {
  return static_cast<int32_t>(sequence);
}

}  // namespace

std::unique_ptr<H2ServerCodec> H2ServerCodec::Create(Host* host, const Context& context) {
  std::unique_ptr<H2ServerCodec> codec(new H2ServerCodec(host, context));
  const ServerOptions& options = *context.options;
  H2ServerSession::Settings settings;
  settings.max_concurrent_streams = options.http2.max_concurrent_streams;
  settings.max_head_bytes = options.limits.max_head_bytes;
  settings.max_headers = options.limits.max_headers;
  settings.max_body_bytes = options.limits.max_body_bytes;
  settings.max_buffered_bytes = options.limits.max_head_bytes + options.limits.max_body_bytes;
  settings.budget = &context.resources->budget();
  settings.stream_body_above = options.stream_body_above;
  settings.loop = context.loop;
  settings.extended_connect = options.upgrades;
  Result<std::unique_ptr<H2ServerSession>> session = H2ServerSession::Create(codec.get(), settings);
  if (!session.ok()) return nullptr;
  codec->session_ = std::move(*session);
  return codec;
}

// The first bytes were just read: a body's idle deadline runs from here (a request whose HEADERS
// came in that first read, and its DATA later, would otherwise time out at once).
H2ServerCodec::H2ServerCodec(Host* host, const Context& context)
    : host_(host),
      options_(*context.options),
      resources_(context.resources),
      loop_(context.loop),
      accepted_(context.accepted),
      last_read_(context.loop->now()) {}

H2ServerCodec::~H2ServerCodec() = default;

// --- Input and output ----------------------------------------------------------------------

// The client is not reading the answers: what it sends waits in its TCP window.
ServerCodec::Intake H2ServerCodec::intake() const {
  return host_->output_pending() > kOutputHighWater ? Intake::kNone : Intake::kTake;
}

size_t H2ServerCodec::Receive(std::string_view input) {
  last_read_ = loop_->now();
  if (Status s = session_->Receive(input); !s.ok()) {
    // A connection error nghttp2 could not even answer with GOAWAY (a bad preface, a flood).
    resources_->Count(Rejection::kProtocolError);
    host_->End(Ending::kAbort);
  }
  return input.size();
}

// Once both sides are done, what is left is written and the close lingers, so that frames the
// client sent meanwhile (a PING after its GOAWAY) are read and dropped rather than make the
// close a reset that could destroy what it has not read yet.
void H2ServerCodec::Produce(std::string& out, size_t limit) {
  const size_t before = out.size();
  if (Status s = session_->Produce(out, limit); !s.ok()) {
    host_->End(Ending::kAbort);
    return;
  }
  if (out.size() != before) last_write_ = loop_->now();
  if (session_->finished()) host_->End(Ending::kLinger);
}

void H2ServerCodec::Drain() {
  session_->GoAway();
}

void H2ServerCodec::Stop() {
  session_->CancelStreamedAnswers();  // their producers stop
  watchers_.clear();
}

void H2ServerCodec::RespondInterim(uint64_t sequence, int status, std::span<const Header> fields) {
  session_->RespondInterim(StreamId(sequence), status, fields);
}

void H2ServerCodec::OnClientGone() {
  std::unordered_map<int32_t, RequestWatcher*> watchers = std::move(watchers_);
  watchers_.clear();
  for (const auto& [stream_id, watcher] : watchers)
    watcher->OnRequestAbandoned();
}

void H2ServerCodec::Watch(uint64_t sequence, RequestWatcher* watcher) {
  if (watcher == nullptr) {
    watchers_.erase(StreamId(sequence));
  } else {
    watchers_[StreamId(sequence)] = watcher;
  }
}

RequestWatcher* H2ServerCodec::Unwatch(int32_t stream_id) {
  auto it = watchers_.find(stream_id);
  if (it == watchers_.end()) return nullptr;
  RequestWatcher* watcher = it->second;
  watchers_.erase(it);
  return watcher;
}

void H2ServerCodec::OnRequestCancelled(int32_t stream_id) {
  if (RequestWatcher* watcher = Unwatch(stream_id)) watcher->OnRequestAbandoned();
}

// --- Deadlines -----------------------------------------------------------------------------

// Which deadline runs now (see the header): a head arriving has header_timeout from its first
// frame; a connection with no stream open waits for the first request until header_timeout
// after the accept, later for idle_timeout; bodies arriving with nothing being served have
// idle_timeout between reads; a streamed answer being sent has idle_timeout since bytes last
// went out; a connection serving its client otherwise has none (a slow handler is not the
// client's fault).
ServerCodec::Outlook H2ServerCodec::Look() {
  const MonoNanos now = loop_->now();
  const size_t open = session_->open_streams();
  if (open == 0 && open_streams_ > 0) idle_since_ = now;
  open_streams_ = open;
  if (!session_->receiving_head()) {
    head_started_ = 0;
  } else if (head_started_ == 0) {
    head_started_ = now;
  }
  Outlook outlook;
  if (open == 0) {
    outlook.waiting = Waiting::kIdle;
    outlook.waiting_since = idle_since_ == 0 ? accepted_ : idle_since_;
  }
  if (head_started_ != 0) {
    outlook.deadline = head_started_ + options_.header_timeout;
  } else if (open == 0) {
    outlook.deadline = idle_since_ == 0 ? accepted_ + options_.header_timeout
                                        : idle_since_ + options_.idle_timeout;
  } else if (session_->streamed_answers() > 0) {
    outlook.deadline = last_write_ + options_.idle_timeout;
  } else if (session_->receiving_streams() > 0 && session_->awaiting_answers() == 0) {
    outlook.deadline = last_read_ + options_.idle_timeout;
  }
  return outlook;
}

void H2ServerCodec::OnDeadline() {
  if (head_started_ != 0) {
    resources_->Count(Rejection::kHeaderTimeout);
  } else if (open_streams_ == 0) {
    // The first request never came: counted as HTTP/1.1 counts it; an idle connection is not.
    if (idle_since_ == 0) resources_->Count(Rejection::kHeaderTimeout);
  } else if (session_->streamed_answers() > 0) {
    // The client stopped taking a streamed answer: each one's producer counts its own loss.
  } else {
    resources_->Count(Rejection::kBodyTimeout);
  }
  // GOAWAY, written if the socket takes it now: the client may not be reading.
  session_->GoAway();
  std::string& out = host_->OutputFor(kOutputHighWater);
  if (session_->Produce(out, out.size() + kOutputHighWater).ok()) last_write_ = loop_->now();
  host_->End(Ending::kBestEffort);
}

// --- Requests ------------------------------------------------------------------------------

void H2ServerCodec::OnRequest(int32_t stream_id, const RequestHead& head, std::string_view body,
                              std::span<const Header> trailers) {
  IncomingRequest request{head, body};
  request.trailers = trailers;
  host_->Dispatch(request, static_cast<uint64_t>(stream_id));
}

void H2ServerCodec::OnStreamedRequest(int32_t stream_id, const RequestHead& head,
                                      std::shared_ptr<BodyStream> body, bool tunnel) {
  IncomingRequest request{head, {}, {}, std::move(body), tunnel};
  host_->Dispatch(request, static_cast<uint64_t>(stream_id));
}

void H2ServerCodec::OnRefused(H2Refusal refusal) {
  resources_->Count(AsRejection(refusal));
}

void H2ServerCodec::OnAnswerReady() {
  host_->Wake();
}

// --- Answers -------------------------------------------------------------------------------

void H2ServerCodec::Respond(uint64_t sequence, int status, std::string_view content_type,
                            std::string_view body, std::span<const Header> extra) {
  Unwatch(StreamId(sequence));
  fields_.clear();
  if (!content_type.empty()) fields_.push_back({"content-type", content_type});
  fields_.insert(fields_.end(), extra.begin(), extra.end());
  session_->Respond(StreamId(sequence), status, fields_, body);
}

void H2ServerCodec::RespondRaw(uint64_t sequence, std::string_view bytes, bool /*keep_alive*/) {
  const int32_t stream_id = StreamId(sequence);
  Unwatch(stream_id);
  ResponseParser parser(options_.limits);
  parser.Reset(session_->IsHeadRequest(stream_id));
  RawResponse raw;
  Progress p = parser.Feed(bytes, raw);
  if (p.state == Progress::State::kNeedMore) p = parser.FinishAtEof(raw);
  if (p.state == Progress::State::kComplete) {
    session_->Respond(stream_id, raw.status, raw.headers.headers(), raw.body);
  } else {
    session_->ResetStream(stream_id, NGHTTP2_INTERNAL_ERROR);  // not one whole response
  }
}

void H2ServerCodec::RespondRawThenReset(uint64_t sequence, std::string_view /*bytes*/) {
  Unwatch(StreamId(sequence));
  session_->ResetStream(StreamId(sequence), NGHTTP2_INTERNAL_ERROR);
}

void H2ServerCodec::RespondStream(uint64_t sequence, std::string_view head,
                                  std::shared_ptr<BodyStream> body, bool /*keep_alive*/) {
  const int32_t stream_id = StreamId(sequence);
  Unwatch(stream_id);  // from here the stream tells the producer (BodyStream::Cancel)
  // Parsed as the head of an answer to HEAD: complete at its blank line, whatever it frames.
  ResponseParser parser(options_.limits);
  parser.Reset(/*head_request=*/true);
  RawResponse raw;
  if (parser.Feed(head, raw).state == Progress::State::kComplete) {
    if (session_->streamed_answers() == 0) last_write_ = loop_->now();  // its clock starts
    session_->RespondStream(stream_id, raw.status, raw.headers.headers(), std::move(body));
  } else {
    body->Cancel();
    session_->ResetStream(stream_id, NGHTTP2_INTERNAL_ERROR);
  }
}

}  // namespace hammer::http
