// ServerConnection's answers and streamed bodies (server_connection.h): what a handler's
// Responder appends to the output, a request body read into a BodyStream while the handler
// already has the request, and a response body written from one. Kept apart from
// server_connection.cc, which holds the connection's input state machine and its output buffer.
#include <algorithm>
#include <charconv>
#include <utility>

#include "hammer/http/server_connection.h"

namespace hammer::http {

namespace {

void AppendNumber(std::string& out, uint64_t n) {
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof(buf), n).ptr;
  out.append(buf, end);
}

}  // namespace

// Before an answer is appended: bytes already written are dropped from the front of the output
// rather than let the buffer grow past what is still unsent (a client reading slowly would
// otherwise make it grow without end).
void ServerConnection::MakeOutputRoom(size_t more) {
  if (out_sent_ > 0 && out_.size() + more > out_.capacity()) {
    out_.erase(0, out_sent_);
    out_sent_ = 0;
  }
}

void ServerConnection::Respond(uint64_t sequence, int status, std::string_view content_type,
                               std::string_view body, std::span<const Header> extra) {
  if (phase_ == Phase::kHttp2) {
    http2_->Respond(static_cast<int32_t>(sequence), status, content_type, body, extra);
    if (phase_ != Phase::kClosed) UpdateCharge();
    return;
  }
  if (sequence != sequence_ || !Answerable()) return;
  MakeOutputRoom(256 + body.size());
  bool keep_alive = KeepsAlive();
  AppendResponseHead(status, content_type, body.size(), extra, keep_alive);
  if (!request_was_head_) out_.append(body);
  Answered(keep_alive);
}

void ServerConnection::RespondRaw(uint64_t sequence, std::string_view bytes, bool keep_alive) {
  if (phase_ == Phase::kHttp2) {
    http2_->RespondRaw(static_cast<int32_t>(sequence), bytes);
    if (phase_ != Phase::kClosed) UpdateCharge();
    return;
  }
  if (sequence != sequence_ || !Answerable()) return;
  MakeOutputRoom(bytes.size());
  out_.append(bytes);
  Answered(keep_alive && KeepsAlive());
}

void ServerConnection::RespondRawThenReset(uint64_t sequence, std::string_view bytes) {
  if (phase_ == Phase::kHttp2) {
    http2_->Reset(static_cast<int32_t>(sequence));
    return;
  }
  if (sequence != sequence_ || !Answerable()) return;
  MakeOutputRoom(bytes.size());
  out_.append(bytes);
  reset_on_close_ = true;
  phase_ = Phase::kClosing;
  PauseReading();
  Flush();  // closes once written
}

void ServerConnection::AppendResponseHead(int status, std::string_view content_type,
                                          size_t body_size, std::span<const Header> extra,
                                          bool keep_alive) {
  out_.append("HTTP/1.1 ");
  AppendNumber(out_, static_cast<uint64_t>(status));
  out_.append(" ").append(ReasonPhrase(status)).append("\r\n");
  if (!content_type.empty()) out_.append("Content-Type: ").append(content_type).append("\r\n");
  for (const Header& h : extra)
    out_.append(h.name).append(": ").append(h.value).append("\r\n");
  out_.append("Content-Length: ");
  AppendNumber(out_, body_size);
  out_.append(keep_alive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n");
}

void ServerConnection::StartRequestStream(std::optional<uint64_t> length) {
  request_stream_ = std::make_shared<BodyStream>(loop_, length, listener_->options_.stream_window,
                                                 &resources_->budget());
  request_stream_->SetProducer(this);
  dispatch_early_ = true;
}

bool ServerConnection::RequestStreamFull() const {
  return request_stream_ != nullptr && request_stream_->full();
}

// The parser has the body's last byte: the stream ends, and the connection serves the request
// like any other (answers given while the body still came are in Answered).
void ServerConnection::EndRequestStream() {
  request_stream_->End();
  request_stream_->SetProducer(nullptr);
  request_stream_.reset();
  if (phase_ == Phase::kStreamingBody) phase_ = Phase::kServing;
}

// The request stream has room again (or its consumer cancelled it, and what comes is dropped):
// parse what waits in the buffer, then read the client again.
void ServerConnection::OnBodyStreamDrained() {
  if (phase_ != Phase::kStreamingBody) return;
  ServeBuffered();
  if (phase_ == Phase::kClosed) return;
  ResumeReadingIfRoom();
  UpdateCharge();
}

void ServerConnection::RespondStream(uint64_t sequence, std::string_view head,
                                     std::shared_ptr<BodyStream> body, bool keep_alive) {
  if (phase_ == Phase::kHttp2) {
    http2_->RespondStream(static_cast<int32_t>(sequence), head, std::move(body));
    if (phase_ != Phase::kClosed) UpdateCharge();
    return;
  }
  if (sequence != sequence_ || !Answerable() || response_stream_ != nullptr) {
    body->Cancel();
    return;
  }
  MakeOutputRoom(head.size());
  out_.append(head);
  response_keep_alive_ = keep_alive;
  response_stream_ = std::move(body);
  response_stream_->SetConsumer(this);
  Flush();  // the head goes now, whatever the body does; with room, OnOutputRoom pumps
  if (phase_ != Phase::kClosed) PumpResponse();
}

void ServerConnection::OnBodyStreamReady() {
  if (response_stream_ != nullptr && Answerable()) PumpResponse();
}

// Moves what the response stream has into the output while the output is under its high-water
// mark, so a client that reads slowly leaves the bytes in the stream, whose producer then
// stops its source. Re-entered from Flush (OnOutputRoom) only through the loop below.
void ServerConnection::PumpResponse() {
  if (pumping_) return;
  pumping_ = true;
  bool moved = false;
  while (response_stream_ != nullptr && !OutputBacklogged()) {
    BodyStream& stream = *response_stream_;
    if (stream.failed()) {
      // The producer broke mid-body (the upstream reset): the client has a status line already
      // and nothing can say so but closing, once what it was sent so far is written.
      pumping_ = false;
      response_stream_->SetConsumer(nullptr);
      response_stream_.reset();
      phase_ = Phase::kClosing;
      PauseReading();
      Flush();  // closes once written
      return;
    }
    std::string_view piece = stream.available().substr(0, kOutputHighWater);
    if (!piece.empty()) {
      MakeOutputRoom(piece.size() + 32);
      if (stream.length() || tunnel_) {
        out_.append(piece);
      } else {
        AppendChunk(out_, piece);
      }
      stream.Consume(piece.size());
      moved = true;
      Flush();
      if (phase_ == Phase::kClosed) {
        pumping_ = false;
        return;
      }
      continue;
    }
    if (stream.finished()) {
      if (!stream.length() && !tunnel_) AppendLastChunk(out_, stream.trailers());
      pumping_ = false;
      FinishResponseStream();
      return;
    }
    break;  // OnBodyStreamReady brings more
  }
  pumping_ = false;
  if (moved) timer_.ArmAfter(StreamIdleTimeout());  // since bytes last moved
  if (phase_ != Phase::kClosed) UpdateCharge();
}

void ServerConnection::FinishResponseStream() {
  response_stream_->SetConsumer(nullptr);
  response_stream_.reset();
  if (phase_ == Phase::kServing) timer_.Cancel();
  Answered(response_keep_alive_ && KeepsAlive());
}

// The connection is closing: a request body still coming fails for its consumer, and a
// response still going is cancelled for its producer.
void ServerConnection::ReleaseStreams() {
  if (request_stream_ != nullptr) {
    request_stream_->SetProducer(nullptr);
    request_stream_->Fail();
    request_stream_.reset();
  }
  if (response_stream_ != nullptr) {
    response_stream_->SetConsumer(nullptr);
    response_stream_->Cancel();
    response_stream_.reset();
  }
}

}  // namespace hammer::http
