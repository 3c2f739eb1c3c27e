#include "hammer/http/h2_client_session.h"

#include <limits>

namespace hammer::http {

// nghttp2's callbacks, with access to the session's private state.
struct H2ClientCallbacks {
  static H2ClientSession* Self(void* user_data) { return static_cast<H2ClientSession*>(user_data); }

  static H2ClientSession::Stream* StreamOf(nghttp2_session* session, int32_t id) {
    return static_cast<H2ClientSession::Stream*>(nghttp2_session_get_stream_user_data(session, id));
  }

  static int OnBeginHeaders(nghttp2_session*, const nghttp2_frame*, void* user_data) {
    Self(user_data)->head_.Begin();
    return 0;
  }

  static int OnHeader(nghttp2_session* session, const nghttp2_frame* frame, const uint8_t* name,
                      size_t name_size, const uint8_t* value, size_t value_size, uint8_t,
                      void* user_data) {
    H2ClientSession* self = Self(user_data);
    H2ClientSession::Stream* stream = StreamOf(session, frame->hd.stream_id);
    if (stream == nullptr) return 0;
    bool ok = self->head_.Add(std::string_view(reinterpret_cast<const char*>(name), name_size),
                              std::string_view(reinterpret_cast<const char*>(value), value_size),
                              self->settings_.max_head_bytes, self->settings_.max_headers);
    if (ok) return 0;
    stream->head_too_large = true;
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // nghttp2 resets the stream
  }

  // The server's answer ended while the request body was still being sent: the rest is not
  // sent. RFC 9113 §8.1 lets a server answer before the whole request; the answer is whole,
  // so the client resets a stream it no longer needs (as HTTP/1.1 closes the connection).
  static void StopBodyIfAnswered(nghttp2_session* session, const nghttp2_frame* frame) {
    if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) return;
    H2ClientSession::Stream* stream = StreamOf(session, frame->hd.stream_id);
    if (stream == nullptr || !stream->body.streamed() || stream->body.ended()) return;
    stream->body.Detach();
    stream->answered_before_body_ended = true;
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_CANCEL);
  }

  static int OnFrameRecv(nghttp2_session* session, const nghttp2_frame* frame, void* user_data) {
    H2ClientSession* self = Self(user_data);
    if (frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) {
      StopBodyIfAnswered(session, frame);
    }
    switch (frame->hd.type) {
      case NGHTTP2_HEADERS: {
        H2ClientSession::Stream* stream = StreamOf(session, frame->hd.stream_id);
        if (stream == nullptr) return 0;
        int status = self->head_.status();
        if (!stream->final_head && status >= 100 && status < 200) {  // informational
          if (status != 100) {
            self->visitor_->OnStreamInterim(stream,
                                            self->head_.MakeResponseHead(stream->head_request));
          }
          return 0;
        }
        if (!stream->final_head && status != 0) {
          stream->final_head = true;
          self->visitor_->OnStreamHead(stream, self->head_.MakeResponseHead(stream->head_request));
        } else if (stream->paused) {
          stream->held.has_trailers = true;
          for (const Header& h : self->head_.headers())
            stream->held.trailers.emplace_back(std::string(h.name), std::string(h.value));
        } else {
          self->visitor_->OnStreamTrailers(stream, self->head_.headers());
        }
        return 0;
      }
      case NGHTTP2_RST_STREAM:
        if (H2ClientSession::Stream* stream = StreamOf(session, frame->hd.stream_id)) {
          stream->peer_reset = true;
        }
        return 0;
      case NGHTTP2_GOAWAY:
        self->goaway_received_ = true;
        self->visitor_->OnGoaway(frame->goaway.last_stream_id, frame->goaway.error_code);
        return 0;
      default:
        return 0;
    }
  }

  // Automatic WINDOW_UPDATE is off: the connection window is reopened here, the stream's
  // once its visitor has the data (held data is bounded by the stream window).
  static int OnDataChunk(nghttp2_session* session, uint8_t, int32_t stream_id, const uint8_t* data,
                         size_t size, void* user_data) {
    nghttp2_session_consume_connection(session, size);
    std::string_view piece(reinterpret_cast<const char*>(data), size);
    H2ClientSession::Stream* stream = StreamOf(session, stream_id);
    if (stream == nullptr) {
      nghttp2_session_consume_stream(session, stream_id, size);
    } else if (stream->paused) {
      stream->held.data.append(piece);
    } else {
      nghttp2_session_consume_stream(session, stream_id, size);
      Self(user_data)->visitor_->OnStreamData(stream, piece);
    }
    return 0;
  }

  static int OnStreamClose(nghttp2_session* session, int32_t stream_id, uint32_t error_code,
                           void* user_data) {
    H2ClientSession::Stream* stream = StreamOf(session, stream_id);
    if (stream == nullptr) return 0;
    H2ClientSession* self = Self(user_data);
    if (stream->answered_before_body_ended) error_code = NGHTTP2_NO_ERROR;  // our own reset
    if (stream->paused) {
      stream->held.closed = true;
      stream->held.close_code = error_code;
      return 0;
    }
    --self->open_streams_;
    self->visitor_->OnStreamClose(stream, error_code);
    return 0;
  }

  // The request's DATA; a streamed body's trailers (a proxied request's) end the stream
  // in a HEADERS frame of their own after the last DATA.
  static ssize_t ReadBody(nghttp2_session* session, int32_t stream_id, uint8_t* buf, size_t length,
                          uint32_t* data_flags, nghttp2_data_source* source, void*) {
    H2RequestBody& body = static_cast<H2ClientSession::Stream*>(source->ptr)->body;
    ssize_t n = body.Read(buf, length, data_flags);
    if (n >= 0 && (*data_flags & NGHTTP2_DATA_FLAG_EOF) != 0 && !body.trailers().empty() &&
        SubmitTrailerFields(session, stream_id, body.trailers())) {
      *data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
    }
    return n;
  }
};

Result<std::unique_ptr<H2ClientSession>> H2ClientSession::Create(Visitor* visitor,
                                                                 const Settings& settings,
                                                                 bool tls) {
  std::unique_ptr<H2ClientSession> session(new H2ClientSession(visitor, settings, tls));
  if (Status s = session->Init(); !s.ok()) return s;
  return session;
}

H2ClientSession::~H2ClientSession() = default;

Status H2ClientSession::Init() {
  nghttp2_session_callbacks* callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&callbacks) != 0) return Status::Error("HTTP/2: out of memory");
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks,
                                                          H2ClientCallbacks::OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, H2ClientCallbacks::OnHeader);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, H2ClientCallbacks::OnFrameRecv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks,
                                                            H2ClientCallbacks::OnDataChunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks,
                                                         H2ClientCallbacks::OnStreamClose);
  nghttp2_option* option = nullptr;
  if (nghttp2_option_new(&option) != 0) {
    nghttp2_session_callbacks_del(callbacks);
    return Status::Error("HTTP/2: out of memory");
  }
  nghttp2_option_set_max_send_header_block_length(option, settings_.max_send_head_bytes);
  nghttp2_option_set_no_auto_window_update(option, 1);
  int rv = nghttp2_session_client_new2(&session_, callbacks, this, option);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(callbacks);
  if (rv != 0) return Status::Error(std::string("HTTP/2: ") + nghttp2_strerror(rv));
  const nghttp2_settings_entry entries[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<uint32_t>(settings_.window_bytes)},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<uint32_t>(settings_.max_head_bytes)},
  };
  rv = nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, entries, std::size(entries));
  if (rv == 0) {
    // The connection window is reopened as DATA arrives (paused streams are bounded by their
    // own windows), so it may be as large as HTTP/2 allows whatever the stream window is.
    rv = nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0,
                                               std::numeric_limits<int32_t>::max());
  }
  if (rv != 0) return Status::Error(std::string("HTTP/2: ") + nghttp2_strerror(rv));
  return Status::Ok();
}

Status H2ClientSession::Submit(Stream* stream, std::string_view head) {
  if (Status s = fields_.Assign(head, tls_); !s.ok()) return s;
  stream->head_request = fields_.method() == "HEAD";
  nghttp2_data_provider body;
  body.source.ptr = stream;
  body.read_callback = H2ClientCallbacks::ReadBody;
  std::span<const nghttp2_nv> fields = fields_.fields();
  int32_t id = nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(),
                                      stream->body.empty() ? nullptr : &body, stream);
  if (id < 0) return Status::Error(std::string("HTTP/2: ") + nghttp2_strerror(id));
  stream->id = id;
  ++open_streams_;
  return Status::Ok();
}

void H2ClientSession::ResumeBody(Stream* stream) {
  // A closed stream has nothing to resume (nghttp2 then refuses the call, harmlessly).
  if (stream->body.TakeDeferred()) nghttp2_session_resume_data(session_, stream->id);
}

bool H2ClientSession::Cancel(Stream* stream) {
  stream->body.Detach();
  bool ended = stream->held.closed;
  stream->paused = false;
  stream->held = Stream::Held{};
  if (ended) {
    --open_streams_;
    return true;
  }
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream->id, NGHTTP2_CANCEL);
  return false;
}

void H2ClientSession::Pause(Stream* stream) {
  stream->paused = true;
}

void H2ClientSession::Resume(Stream* stream) {
  if (!stream->paused) return;
  stream->paused = false;
  DeliverHeld(stream);
}

void H2ClientSession::DeliverHeld(Stream* stream) {
  if (!stream->held.data.empty()) {
    std::string data = std::move(stream->held.data);
    stream->held.data.clear();
    // A closed stream has no window left to reopen (nghttp2 then refuses the call, harmlessly).
    nghttp2_session_consume_stream(session_, stream->id, data.size());
    visitor_->OnStreamData(stream, data);
    if (stream->paused) return;
  }
  if (stream->held.has_trailers) {
    std::vector<std::pair<std::string, std::string>> owned = std::move(stream->held.trailers);
    stream->held.trailers.clear();
    stream->held.has_trailers = false;
    std::vector<Header> trailers;
    trailers.reserve(owned.size());
    for (const auto& [name, value] : owned)
      trailers.push_back({name, value});
    visitor_->OnStreamTrailers(stream, trailers);
    if (stream->paused) return;
  }
  if (stream->held.closed) {
    stream->held.closed = false;
    --open_streams_;
    visitor_->OnStreamClose(stream, stream->held.close_code);  // the visitor may free `stream`
  }
}

uint32_t H2ClientSession::peer_max_concurrent_streams() const {
  return nghttp2_session_get_remote_settings(session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
}

bool H2ClientSession::accepts_streams() const {
  return !goaway_received_ && nghttp2_session_get_next_stream_id(session_) <
                                  static_cast<uint32_t>(std::numeric_limits<int32_t>::max());
}

}  // namespace hammer::http
