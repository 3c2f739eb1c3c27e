#include "hammer/http/h2_server_session.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>

#include "hammer/base/strings.h"
#include "hammer/http/grpc_wire.h"

namespace hammer::http {

namespace {

// RFC 9113 §8.2.2: fields HTTP/2 forbids; content-length is set here from the body.
bool LeftOutOfResponse(std::string_view name) {
  return EqualsIgnoreCase(name, "connection") || EqualsIgnoreCase(name, "keep-alive") ||
         EqualsIgnoreCase(name, "proxy-connection") ||
         EqualsIgnoreCase(name, "transfer-encoding") || EqualsIgnoreCase(name, "upgrade") ||
         EqualsIgnoreCase(name, "content-length");
}

constexpr size_t kMaxContinuations = 8;     // nghttp2's default since CVE-2024-28182
constexpr uint64_t kResetRateBurst = 1000;  // nghttp2's defaults (CVE-2023-44487)
constexpr uint64_t kResetRatePerSecond = 33;
constexpr int32_t kConnectionWindowBytes = 1024 * 1024;

}  // namespace

// The consumer of one streamed answer's body: its wake-ups resume the stream's DATA.
class H2ServerSession::StreamedAnswer final : public BodyStream::Consumer {
 public:
  StreamedAnswer(H2ServerSession* session, int32_t stream_id, std::shared_ptr<BodyStream> body)
      : session_(session), stream_id_(stream_id), body_(std::move(body)) {
    body_->SetConsumer(this);
    ++session_->streamed_answers_;
  }
  // The stream is over: a body not wholly sent is cancelled, so that its producer stops.
  ~StreamedAnswer() override {
    body_->SetConsumer(nullptr);
    if (!body_->finished()) body_->Cancel();
    --session_->streamed_answers_;
  }
  void OnBodyStreamReady() override { session_->OnStreamedAnswerReady(this); }

  int32_t stream_id() const { return stream_id_; }
  BodyStream& body() { return *body_; }
  bool deferred = false;  // nghttp2 waits for nghttp2_session_resume_data

 private:
  H2ServerSession* session_;
  int32_t stream_id_;
  std::shared_ptr<BodyStream> body_;
};

H2ServerSession::Stream::~Stream() = default;

struct H2ServerCallbacks {
  using Stream = H2ServerSession::Stream;
  static H2ServerSession* Self(void* user_data) { return static_cast<H2ServerSession*>(user_data); }

  // A client's HEADERS on a stream id below one it already used must open no stream (RFC 9113
  // §5.1.1: a connection error). nghttp2 ignores such a block rather than guess whether it is a
  // late trailer on a stream it reset; here the streams that closed while the client might
  // still send on them are remembered (ResetStreams), so what is left is the error.
  static int OnBeginFrame(nghttp2_session*, const nghttp2_frame_hd* hd, void* user_data) {
    if (hd->type != NGHTTP2_HEADERS || hd->stream_id % 2 == 0) return 0;
    H2ServerSession* self = Self(user_data);
    if (hd->stream_id > self->highest_stream_) {
      self->highest_stream_ = hd->stream_id;
      return 0;
    }
    if (self->Find(hd->stream_id) != nullptr || self->WasResetEarly(hd->stream_id)) return 0;
    return NGHTTP2_ERR_CALLBACK_FAILURE;  // Receive fails: the owner closes the connection
  }

  static int OnBeginHeaders(nghttp2_session* session, const nghttp2_frame* frame, void* user_data) {
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    H2ServerSession* self = Self(user_data);
    auto stream = std::make_unique<Stream>();
    stream->id = frame->hd.stream_id;
    stream->head.Begin();
    nghttp2_session_set_stream_user_data(session, stream->id, stream.get());
    self->head_stream_ = stream->id;
    ++self->receiving_;
    self->streams_[stream->id] = std::move(stream);
    ++self->streams_opened_;
    return 0;
  }

  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t name_size, const uint8_t* value, size_t value_size, uint8_t,
                      void* user_data) {
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    H2ServerSession* self = Self(user_data);
    Stream* stream = self->Find(frame->hd.stream_id);
    if (stream == nullptr) return 0;
    // The request's head, or its trailers (nghttp2 refuses pseudo-header fields in them),
    // bounded alike.
    const bool trailers = frame->headers.cat != NGHTTP2_HCAT_REQUEST;
    if (trailers && stream->refused) return 0;
    H2HeadBuilder& block = trailers ? stream->trailers : stream->head;
    bool& too_large = trailers ? stream->trailers_too_large : stream->head_too_large;
    if (too_large) return 0;
    if (!block.Add(std::string_view(reinterpret_cast<const char*>(name), name_size),
                   std::string_view(reinterpret_cast<const char*>(value), value_size),
                   self->settings_.max_head_bytes, self->settings_.max_headers)) {
      too_large = true;
      block.Begin();  // what was kept so far is dropped
    }
    return 0;
  }

  static int OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
    H2ServerSession* self = Self(user_data);
    Stream* stream = self->Find(frame->hd.stream_id);
    if (stream == nullptr) return 0;
    bool end_stream = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    switch (frame->hd.type) {
      case NGHTTP2_HEADERS:
        if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
          if (self->head_stream_ == stream->id) self->head_stream_ = 0;
          if (stream->head_too_large) {
            self->Refuse(stream, H2Refusal::kHeadTooLarge, 431);
            return 0;
          }
          self->Charge(stream, stream->head.size());
          if (self->buffered_bytes_ > self->settings_.max_buffered_bytes) {
            self->Refuse(stream, H2Refusal::kBufferFull, 0);
            return 0;
          }
          const BufferBudget* budget = self->settings_.budget;
          if (budget != nullptr && budget->exhausted()) {
            self->Refuse(stream, H2Refusal::kOverBudget, 503);
            return 0;
          }
          // Streaming: a body announced over the cap is refused now, not once it is handed
          // over; one announced over the threshold is handed over now.
          const uint64_t threshold = self->settings_.stream_body_above;
          std::optional<uint64_t> length;
          if (threshold != 0 && !end_stream) length = stream->head.ContentLength();
          if (length && *length > self->settings_.max_body_bytes) {
            self->Refuse(stream, H2Refusal::kBodyTooLarge, 413);
            return 0;
          }
          if (length && *length > threshold) {
            self->StreamBody(stream, length);
            return 0;
          }
          // A tunnel (RFC 8441) is handed over at once: no byte may come before its answer.
          if (self->settings_.extended_connect && !end_stream && stream->head.IsExtendedConnect()) {
            stream->tunnel = true;
            self->StreamBody(stream, std::nullopt);
            return 0;
          }
          // A gRPC call's request may stay open as long as the call (client and
          // bidirectional streaming): its messages are passed on as they come.
          if (threshold != 0 && !end_stream && IsGrpc(stream->head.headers())) {
            self->StreamBody(stream, length);
            return 0;
          }
        } else if (!stream->refused) {  // trailers
          if (stream->trailers_too_large) {
            self->RefuseTrailers(stream);
            return 0;
          }
          self->Charge(stream, stream->trailers.size());
        }
        if (end_stream && !stream->refused) self->EndOfRequest(stream);
        return 0;
      case NGHTTP2_DATA:
        if (end_stream && !stream->refused) self->EndOfRequest(stream);
        return 0;
      case NGHTTP2_RST_STREAM:
        self->OnClientReset(stream);
        return 0;
      default:
        return 0;
    }
  }

  // Automatic WINDOW_UPDATE is off: the connection window is reopened here, and so is the
  // stream's, except for a streamed body's (H2RequestStream reopens it as its consumer takes
  // the bytes).
  static int OnDataChunk(nghttp2_session* session, uint8_t, int32_t stream_id, const uint8_t* data,
                         size_t size, void* user_data) {
    H2ServerSession* self = Self(user_data);
    nghttp2_session_consume_connection(session, size);
    Stream* stream = self->Find(stream_id);
    if (stream != nullptr && stream->streamed_request != nullptr && !stream->refused) {
      self->AppendStreamed(stream, std::string_view(reinterpret_cast<const char*>(data), size));
      return 0;
    }
    nghttp2_session_consume_stream(session, stream_id, size);
    if (stream == nullptr || stream->refused) return 0;
    if (stream->body.size() + size > self->settings_.max_body_bytes) {
      self->Refuse(stream, H2Refusal::kBodyTooLarge, 413);
      return 0;
    }
    if (self->buffered_bytes_ + size > self->settings_.max_buffered_bytes) {
      self->Refuse(stream, H2Refusal::kBufferFull, 0);
      return 0;
    }
    const BufferBudget* budget = self->settings_.budget;
    if (budget != nullptr && budget->exhausted()) {
      self->Refuse(stream, H2Refusal::kOverBudget, 503);
      return 0;
    }
    stream->body.append(reinterpret_cast<const char*>(data), size);
    self->Charge(stream, size);
    // A body of unknown length grew past the threshold: passed on from here.
    const uint64_t threshold = self->settings_.stream_body_above;
    if (threshold != 0 && stream->body.size() > threshold) self->StreamBody(stream, std::nullopt);
    return 0;
  }

  static int OnStreamClose(nghttp2_session*, int32_t stream_id, uint32_t, void* user_data) {
    H2ServerSession* self = Self(user_data);
    auto it = self->streams_.find(stream_id);
    if (it == self->streams_.end()) return 0;
    Stream* stream = it->second.get();
    if (self->head_stream_ == stream_id) self->head_stream_ = 0;
    if (stream->receiving || stream->refused) self->RememberResetEarly(stream_id);
    self->StopReceiving(stream);
    if (stream->dispatched && !stream->answered) {
      stream->answered = true;
      --self->awaiting_;
      self->visitor_->OnRequestCancelled(stream_id);
    }
    self->buffered_bytes_ -= stream->charged;
    self->streams_.erase(it);
    return 0;
  }

  static int OnFrameSend(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
    H2ServerSession* self = Self(user_data);
    // A stream nghttp2 refused itself (over the concurrent streams) never reached OnBeginHeaders.
    if (frame->hd.type == NGHTTP2_RST_STREAM) self->RememberResetEarly(frame->hd.stream_id);
    if (frame->hd.type == NGHTTP2_GOAWAY && frame->goaway.error_code != NGHTTP2_NO_ERROR &&
        !self->calmed_) {
      self->visitor_->OnRefused(H2Refusal::kProtocolError);
    }
    return 0;
  }

  static ssize_t ReadAnswer(nghttp2_session*, int32_t, uint8_t* buf, size_t length,
                            uint32_t* data_flags, nghttp2_data_source* source, void*) {
    auto* stream = static_cast<Stream*>(source->ptr);
    size_t n = std::min(length, stream->answer.size() - stream->answer_sent);
    std::memcpy(buf, stream->answer.data() + stream->answer_sent, n);
    stream->answer_sent += n;
    if (stream->answer_sent == stream->answer.size()) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  // A streamed answer: what the body has, up to what the flow-control windows allow. An empty
  // body not yet ended defers the stream (its producer's next Append resumes it); a failed
  // one makes nghttp2 reset the stream with INTERNAL_ERROR.
  static ssize_t ReadStreamedAnswer(nghttp2_session* session, int32_t stream_id, uint8_t* buf,
                                    size_t length, uint32_t* data_flags,
                                    nghttp2_data_source* source, void* user_data) {
    auto* answer = static_cast<H2ServerSession::StreamedAnswer*>(source->ptr);
    BodyStream& body = answer->body();
    if (body.failed()) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    std::string_view available = body.available();
    size_t n = std::min(length, available.size());
    if (n > 0) std::memcpy(buf, available.data(), n);
    body.Consume(n);
    if (body.finished()) {
      *data_flags |= NGHTTP2_DATA_FLAG_EOF;
      if (!body.trailers().empty() && SubmitTrailerFields(session, stream_id, body.trailers())) {
        *data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;  // the trailers end the stream
      }
      // The answer is whole: a request body still arriving is not wanted any more.
      Stream* stream = Self(user_data)->Find(stream_id);
      if (stream != nullptr && stream->streamed_request) stream->streamed_request->Discard();
      return static_cast<ssize_t>(n);
    }
    if (n == 0) {
      answer->deferred = true;
      return NGHTTP2_ERR_DEFERRED;
    }
    return static_cast<ssize_t>(n);
  }
};

Result<std::unique_ptr<H2ServerSession>> H2ServerSession::Create(Visitor* visitor,
                                                                 const Settings& settings) {
  std::unique_ptr<H2ServerSession> session(new H2ServerSession(visitor, settings));
  if (Status s = session->Init(); !s.ok()) return s;
  return session;
}

H2ServerSession::~H2ServerSession() {
  CancelStreamedAnswers();
}

void H2ServerSession::CancelStreamedAnswers() {
  for (auto& [id, stream] : streams_)
    stream->streamed.reset();
}

void H2ServerSession::OnStreamedAnswerReady(StreamedAnswer* answer) {
  if (answer->deferred) {
    answer->deferred = false;
    nghttp2_session_resume_data(session_, answer->stream_id());
  }
  visitor_->OnAnswerReady();
}

bool H2ServerSession::RespondStream(int32_t stream_id, int status, std::span<const Header> headers,
                                    std::shared_ptr<BodyStream> body) {
  Stream* stream = Find(stream_id);
  if (stream == nullptr || !stream->dispatched || stream->answered) {
    body->Cancel();
    return false;
  }
  stream->answered = true;
  --awaiting_;
  std::vector<Header> tunnel_fields;
  if (stream->tunnel && status == 101) {
    // The tunnel is open (RFC 8441 §5): 200, without the HTTP/1.1 handshake's own fields.
    status = 200;
    for (const Header& h : headers) {
      if (!EqualsIgnoreCase(h.name, "sec-websocket-accept")) tunnel_fields.push_back(h);
    }
    headers = tunnel_fields;
  }
  BuildFields(*stream, status, headers, {}, stream->tunnel ? std::nullopt : body->length());
  if (stream->head_request) {
    body->Cancel();
    return nghttp2_submit_response(session_, stream->id, response_fields_.data(),
                                   response_fields_.size(), nullptr) == 0;
  }
  stream->streamed = std::make_unique<StreamedAnswer>(this, stream_id, std::move(body));
  nghttp2_data_provider provider;
  provider.source.ptr = stream->streamed.get();
  provider.read_callback = H2ServerCallbacks::ReadStreamedAnswer;
  if (nghttp2_submit_response(session_, stream->id, response_fields_.data(),
                              response_fields_.size(), &provider) != 0) {
    stream->streamed.reset();
    return false;
  }
  return true;
}

Status H2ServerSession::Init() {
  nghttp2_session_callbacks* callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&callbacks) != 0) return Status::Error("HTTP/2: out of memory");
  nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks, H2ServerCallbacks::OnBeginFrame);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks,
                                                          H2ServerCallbacks::OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, H2ServerCallbacks::OnHeader);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, H2ServerCallbacks::OnFrameRecv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks,
                                                            H2ServerCallbacks::OnDataChunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks,
                                                         H2ServerCallbacks::OnStreamClose);
  nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, H2ServerCallbacks::OnFrameSend);
  nghttp2_option* option = nullptr;
  if (nghttp2_option_new(&option) != 0) {
    nghttp2_session_callbacks_del(callbacks);
    return Status::Error("HTTP/2: out of memory");
  }
  nghttp2_option_set_max_continuations(option, kMaxContinuations);
  nghttp2_option_set_no_auto_window_update(option, 1);
  nghttp2_option_set_stream_reset_rate_limit(option, kResetRateBurst, kResetRatePerSecond);
  int rv = nghttp2_session_server_new2(&session_, callbacks, this, option);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(callbacks);
  if (rv != 0) return Status::Error(std::string("HTTP/2: ") + nghttp2_strerror(rv));
  const nghttp2_settings_entry entries[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, settings_.max_concurrent_streams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<uint32_t>(settings_.window_bytes)},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<uint32_t>(settings_.max_head_bytes)},
      {NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL, 1},
  };
  const size_t announced = std::size(entries) - (settings_.extended_connect ? 0 : 1);
  rv = nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, entries, announced);
  if (rv == 0) {
    rv = nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0,
                                               kConnectionWindowBytes);
  }
  if (rv != 0) return Status::Error(std::string("HTTP/2: ") + nghttp2_strerror(rv));
  return Status::Ok();
}

bool H2ServerSession::IsHeadRequest(int32_t stream_id) const {
  auto it = streams_.find(stream_id);
  return it != streams_.end() && it->second->head_request;
}

H2ServerSession::Stream* H2ServerSession::Find(int32_t id) {
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second.get();
}

void H2ServerSession::Charge(Stream* stream, uint64_t bytes) {
  stream->charged += bytes;
  buffered_bytes_ += bytes;
}

void H2ServerSession::RememberResetEarly(int32_t stream_id) {
  if (std::find(reset_early_.begin(), reset_early_.end(), stream_id) != reset_early_.end()) return;
  if (reset_early_.size() == kResetEarlyRemembered) reset_early_.pop_front();
  reset_early_.push_back(stream_id);
}

bool H2ServerSession::WasResetEarly(int32_t stream_id) const {
  return std::find(reset_early_.begin(), reset_early_.end(), stream_id) != reset_early_.end();
}

void H2ServerSession::StopReceiving(Stream* stream) {
  if (!stream->receiving) return;
  stream->receiving = false;
  --receiving_;
}

void H2ServerSession::Dispatch(Stream* stream) {
  StopReceiving(stream);
  stream->dispatched = true;
  ++awaiting_;
  RequestHead head = stream->head.MakeRequestHead(stream->body.size());
  stream->head_request = head.method == "HEAD";
  visitor_->OnRequest(stream->id, head, stream->body, stream->trailers.headers());
}

void H2ServerSession::EndOfRequest(Stream* stream) {
  if (stream->streamed_request != nullptr) {
    stream->streamed_request->End(stream->trailers.headers());
  } else {
    Dispatch(stream);
  }
}

// The request goes to the visitor now, its body (what arrived so far, then the rest) through a
// BodyStream whose window is half the stream's (see H2RequestStream).
void H2ServerSession::StreamBody(Stream* stream, std::optional<uint64_t> length) {
  auto body = std::make_shared<BodyStream>(
      settings_.loop, length, static_cast<size_t>(settings_.window_bytes) / 2, settings_.budget);
  buffered_bytes_ -= stream->body.size();  // charged to the budget by the BodyStream now
  stream->charged -= stream->body.size();
  stream->streamed_request = std::make_unique<H2RequestStream>(
      session_, stream->id, body, stream->body, [this] { visitor_->OnAnswerReady(); });
  std::string().swap(stream->body);
  StopReceiving(stream);
  stream->dispatched = true;
  ++awaiting_;
  RequestHead head = stream->head.MakeRequestHead(0);
  // A tunnel's bytes, and a gRPC call's messages, are a conversation rather than an upload:
  // streamed, they cost the stream's window whatever their total, and a long-lived call must
  // not be cut after max_body_bytes (Envoy bounds neither; message sizes are the upstream's
  // business).
  stream->uncapped = stream->tunnel || IsGrpc(head.headers);
  head.framing = length ? BodyFraming::kContentLength : BodyFraming::kChunked;
  head.content_length = length.value_or(0);
  stream->head_request = head.method == "HEAD";
  visitor_->OnStreamedRequest(stream->id, head, std::move(body), stream->tunnel);
}

void H2ServerSession::AppendStreamed(Stream* stream, std::string_view data) {
  H2RequestStream& request = *stream->streamed_request;
  if (stream->uncapped || request.received() + data.size() <= settings_.max_body_bytes) {
    request.Append(data);
    return;
  }
  // Over the cap (a body of unknown length): its handler has the request already, so the
  // stream is reset rather than answered 413, and the body fails.
  nghttp2_session_consume_stream(session_, stream->id, data.size());
  request.Fail();
  stream->refused = true;
  visitor_->OnRefused(H2Refusal::kBodyTooLarge);
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream->id, NGHTTP2_CANCEL);
}

void H2ServerSession::Refuse(Stream* stream, H2Refusal refusal, int status) {
  StopReceiving(stream);
  stream->refused = true;
  buffered_bytes_ -= stream->charged;
  stream->charged = 0;
  stream->body.clear();
  stream->body.shrink_to_fit();
  visitor_->OnRefused(refusal);
  if (status == 0) {
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream->id, NGHTTP2_REFUSED_STREAM);
    return;
  }
  stream->answered = true;
  std::string_view text = refusal == H2Refusal::kHeadTooLarge   ? "head too large\n"
                          : refusal == H2Refusal::kBodyTooLarge ? "body too large\n"
                                                                : "over capacity\n";
  Submit(stream, status, {}, text, "text/plain");
}

// Trailers over the head's limits: a request not handed over yet is answered 431 like a head
// too large; a streamed one has its handler already, so its body fails and the stream is reset.
void H2ServerSession::RefuseTrailers(Stream* stream) {
  if (!stream->dispatched) {
    Refuse(stream, H2Refusal::kHeadTooLarge, 431);
    return;
  }
  stream->refused = true;
  if (stream->streamed_request != nullptr) stream->streamed_request->Fail();
  visitor_->OnRefused(H2Refusal::kHeadTooLarge);
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream->id, NGHTTP2_CANCEL);
}

void H2ServerSession::OnClientReset(Stream* stream) {
  if (stream->answered) return;
  ++early_resets_;
  if (!calmed_ && early_resets_ >= settings_.min_resets_to_judge &&
      early_resets_ * 2 >= streams_opened_) {
    calmed_ = true;
    visitor_->OnRefused(H2Refusal::kRapidReset);
    Terminate(NGHTTP2_ENHANCE_YOUR_CALM);
  }
}

bool H2ServerSession::Respond(int32_t stream_id, int status, std::span<const Header> headers,
                              std::string_view body) {
  Stream* stream = Find(stream_id);
  if (stream == nullptr || !stream->dispatched || stream->answered) return false;
  stream->answered = true;
  --awaiting_;
  if (stream->streamed_request) stream->streamed_request->Discard();
  return Submit(stream, status, headers, body);
}

bool H2ServerSession::RespondInterim(int32_t stream_id, int status,
                                     std::span<const Header> headers) {
  Stream* stream = Find(stream_id);
  if (stream == nullptr || !stream->dispatched || stream->answered) return false;
  if (status < 102 || status > 199) return false;
  BuildFields(*stream, status, headers, "", std::nullopt);
  return nghttp2_submit_headers(session_, NGHTTP2_FLAG_NONE, stream->id, nullptr,
                                response_fields_.data(), response_fields_.size(), nullptr) >= 0;
}

bool H2ServerSession::Submit(Stream* stream, int status, std::span<const Header> headers,
                             std::string_view body, std::string_view content_type) {
  BuildFields(*stream, status, headers, content_type, body.size());
  bool with_body = !body.empty() && !stream->head_request;
  nghttp2_data_provider provider;
  if (with_body) {
    stream->answer.assign(body);
    stream->answer_sent = 0;
    Charge(stream, body.size());
    provider.source.ptr = stream;
    provider.read_callback = H2ServerCallbacks::ReadAnswer;
  }
  int rv = nghttp2_submit_response(session_, stream->id, response_fields_.data(),
                                   response_fields_.size(), with_body ? &provider : nullptr);
  return rv == 0;
}

void H2ServerSession::BuildFields(const Stream& stream, int status, std::span<const Header> headers,
                                  std::string_view content_type,
                                  std::optional<uint64_t> body_length) {
  // One block holds every name and value, sized first so that the pointers stay put.
  std::optional<std::string_view> head_length;
  size_t total = 64 + content_type.size();  // the pseudo and added fields, digits
  for (const Header& h : headers) {
    total += h.name.size() + h.value.size();
    if (stream.head_request && EqualsIgnoreCase(h.name, "content-length")) head_length = h.value;
  }
  response_bytes_.clear();
  response_bytes_.reserve(total);
  response_fields_.clear();
  auto add = [this](std::string_view name, std::string_view value, bool lower) {
    size_t name_at = response_bytes_.size();
    for (char c : name)
      response_bytes_.push_back(lower ? AsciiToLower(c) : c);
    size_t value_at = response_bytes_.size();
    response_bytes_.append(value);
    nghttp2_nv nv;
    nv.name = reinterpret_cast<uint8_t*>(response_bytes_.data() + name_at);
    nv.namelen = name.size();
    nv.value = reinterpret_cast<uint8_t*>(response_bytes_.data() + value_at);
    nv.valuelen = value.size();
    nv.flags = NGHTTP2_NV_FLAG_NONE;
    response_fields_.push_back(nv);
  };
  char status_text[4];
  std::to_chars(status_text, status_text + 3, std::clamp(status, 100, 999));
  add(":status", std::string_view(status_text, 3), false);
  if (!content_type.empty()) add("content-type", content_type, false);
  for (const Header& h : headers) {
    if (!LeftOutOfResponse(h.name)) add(h.name, h.value, true);
  }
  char length_text[24];
  std::string_view length;
  if (head_length) {
    length = *head_length;
  } else if (body_length) {
    length = std::string_view(
        length_text,
        std::to_chars(length_text, length_text + sizeof(length_text), *body_length).ptr -
            length_text);
  }
  if (!length.empty() && !(status == 204 || status == 304 || (status < 200))) {
    add("content-length", length, false);
  }
}

void H2ServerSession::ResetStream(int32_t stream_id, uint32_t error_code) {
  if (Stream* stream = Find(stream_id)) {
    if (stream->dispatched && !stream->answered) {
      stream->answered = true;
      --awaiting_;
    }
  }
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream_id, error_code);
}

}  // namespace hammer::http
