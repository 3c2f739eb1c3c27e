// H2RequestBody: where the DATA of one HTTP/2 request stream comes from (H2ClientSession's
// nghttp2 data provider). Either bytes held whole (`load`'s prepared bodies), or a BodyStream
// sent as it fills (the dark proxy's large uploads, ClientRequest::body_stream).
//
// nghttp2 pulls the next piece through Read only while the peer's flow-control windows (stream
// and connection, RFC 9113 §5.2) have room and the connection's output is being written, so a
// streamed body is consumed from its BodyStream no faster than the peer reads it: the stream
// fills, and its producer stops its source (back-pressure). A streamed body with nothing
// waiting defers the stream (NGHTTP2_ERR_DEFERRED) until its owner resumes it
// (H2ClientSession::ResumeBody, on BodyStream::Consumer::OnBodyStreamReady). END_STREAM goes
// with the last byte once the producer has ended the stream, or, when the stream carries
// trailers, the HEADERS frame that H2ClientSession sends after it.
//
// Errors: a body whose stream failed (its producer gave up) or was cancelled, or that was
// detached (its exchange ended first), is never ended: Read defers from then on, and the owner
// resets the stream (RST_STREAM), so the peer never takes a truncated body for a whole one.
//
// Ownership: the bytes, or the BodyStream, are the owner's and must stay valid until the
// stream closes or Detach is called; consuming from the stream is this class's only use of it
// (the owner registers as the stream's Consumer). Threading: the connection's loop thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string_view>

#include "hammer/http/body_stream.h"

namespace hammer::http {

class H2RequestBody {
 public:
  H2RequestBody() = default;
  explicit H2RequestBody(std::string_view whole) : whole_(whole) {}
  explicit H2RequestBody(BodyStream* stream) : stream_(stream) {}

  // No DATA at all: the request ends with its HEADERS.
  bool empty() const { return stream_ == nullptr && whole_.empty(); }
  bool streamed() const { return stream_ != nullptr; }

  // nghttp2's read callback: copies up to `length` bytes into `buf` and returns how many,
  // setting NGHTTP2_DATA_FLAG_EOF in `data_flags` with the last; NGHTTP2_ERR_DEFERRED when a
  // streamed body has nothing to give now (see deferred()).
  ssize_t Read(uint8_t* buf, size_t length, uint32_t* data_flags);

  // Read deferred the stream and nobody resumed it yet.
  bool deferred() const { return deferred_; }
  // The owner is resuming the stream: true if it was deferred (and no longer is).
  bool TakeDeferred() {
    bool was = deferred_;
    deferred_ = false;
    return was;
  }
  // Nothing more is read: the stream is being reset or handed elsewhere.
  void Detach() { detached_ = true; }

  // The fields to send after a streamed body (BodyStream::trailers), complete once ended().
  std::span<const Header> trailers() const {
    return stream_ != nullptr ? stream_->trailers() : std::span<const Header>();
  }
  // Bytes handed to nghttp2 so far.
  uint64_t sent() const { return sent_; }
  // The last byte (and END_STREAM) was handed to nghttp2.
  bool ended() const { return ended_; }

 private:
  std::string_view whole_;
  BodyStream* stream_ = nullptr;
  uint64_t sent_ = 0;
  bool deferred_ = false;
  bool detached_ = false;
  bool ended_ = false;
};

}  // namespace hammer::http
