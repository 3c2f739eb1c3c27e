// H2ClientSession: the client side of one HTTP/2 connection (libnghttp2), without I/O (see
// H2Session). The connection submits requests as the engine's serialized HTTP/1.1 heads
// (H2RequestFields translates them) and hears about each stream through a Visitor: the final
// response head (1xx heads are skipped), body pieces, trailers, and the stream's end.
//
// A stream is identified by the caller's Stream object, which the caller owns and keeps alive
// until OnStreamClose has been called for it or the session is destroyed (nghttp2 holds a
// pointer to it; a stream that never started, such as one queued behind the server's
// SETTINGS_MAX_CONCURRENT_STREAMS, is still closed through OnStreamClose). Destroying the
// session calls nothing back.
//
// Visitor calls are made from inside Receive (and OnStreamClose also from inside Produce, for
// streams refused before they were sent; and from inside Resume, for what a paused stream
// held); a visitor must not destroy the session there.
//
// Request bodies: DATA is pulled from each stream's H2RequestBody as the server's windows allow
// and Produce runs, so a streamed body is taken from its BodyStream no faster than the server
// reads it (its producer then stops at the BodyStream's window); the output Produce appends is
// bounded too (H2Session). Memory per streamed body stays near the BodyStream's window plus
// one Produce's worth, whatever its size. A response that ends (END_STREAM) before its streamed
// request body did stops the body: the session resets the stream (CANCEL), and its close is
// reported as a complete response (NO_ERROR).
//
// Flow control: the session sends WINDOW_UPDATE for a stream's DATA only once its visitor has
// been given it. Pause holds a stream's DATA (and its trailers and close) in the session
// instead; the server then stops at the stream window (Settings::window_bytes), which bounds
// what is held. The connection window is reopened at once, so one paused stream does not stall
// the others on the connection.
//
// Threading: one loop thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/http/h2_fields.h"
#include "hammer/http/h2_request_body.h"
#include "hammer/http/h2_session.h"
#include "hammer/http/message.h"

namespace hammer::http {

class H2ClientSession final : public H2Session {
 public:
  // What the session keeps per stream; the connection's exchange derives from it.
  struct Stream {
    int32_t id = 0;
    H2RequestBody body;  // the request's DATA: bytes held whole or a BodyStream (see there)
    bool head_request = false;
    bool final_head = false;      // the final response head was delivered
    bool peer_reset = false;      // the server sent RST_STREAM (the code comes with OnStreamClose)
    bool head_too_large = false;  // the response head went over the limits; the stream is reset
    bool paused = false;          // see Pause; read-only for the caller
    // The response ended before the streamed request body did: the session reset the stream
    // (CANCEL) and reports its close as NO_ERROR.
    bool answered_before_body_ended = false;

    // What arrived for a paused stream, in order: DATA, then trailers, then the close.
    struct Held {
      std::string data;
      bool has_trailers = false;
      std::vector<std::pair<std::string, std::string>> trailers;
      bool closed = false;
      uint32_t close_code = 0;
    } held;
  };

  class Visitor {
   public:
    virtual ~Visitor() = default;
    // An interim 1xx answer other than 100 (103 Early Hints, ...), before the head.
    virtual void OnStreamInterim(Stream* /*stream*/, const ResponseHead& /*head*/) {}
    virtual void OnStreamHead(Stream* stream, const ResponseHead& head) = 0;
    virtual void OnStreamData(Stream* stream, std::string_view data) = 0;
    virtual void OnStreamTrailers(Stream* stream, std::span<const Header> trailers) = 0;
    // The stream is over: `error_code` is NO_ERROR (0) after a complete response; otherwise
    // the server's RST_STREAM code (stream->peer_reset), REFUSED_STREAM for a stream the
    // server never processed (beyond a GOAWAY's last stream), or the code nghttp2 reset it
    // with (a malformed response).
    virtual void OnStreamClose(Stream* stream, uint32_t error_code) = 0;
    // The server sent GOAWAY: streams above `last_stream_id` will be closed as refused.
    virtual void OnGoaway(int32_t last_stream_id, uint32_t error_code) = 0;
  };

  struct Settings {
    size_t max_head_bytes = 64 * 1024;  // a response head's fields (RFC 9113's accounting)
    size_t max_headers = 128;
    // The stream window offered to the server (the connection's is 2^31-1): a load generator
    // reads as fast as it can, so it never makes the server wait for WINDOW_UPDATE. A caller
    // that pauses streams sets it to what it may hold per paused stream.
    int32_t window_bytes = (1 << 30) - 1;
    // A request head may encode to this many bytes (nghttp2's own default is 64 KiB): a load
    // test may send heads as big as the user wrote them, and the server is the one to judge.
    size_t max_send_head_bytes = 1024 * 1024;
  };

  // Queues the connection preface and SETTINGS. `tls` gives :scheme.
  static Result<std::unique_ptr<H2ClientSession>> Create(Visitor* visitor, const Settings& settings,
                                                         bool tls);
  ~H2ClientSession() override;

  // Submits a request: `head` is a serialized HTTP/1.1 head (its Content-Length, when it has
  // one, goes as content-length), `stream->body` its body. Sets stream->id. Errors: a head that
  // cannot be translated, or no stream id left (the owner opens a new connection).
  Status Submit(Stream* stream, std::string_view head);
  // A streamed request body (stream->body on a BodyStream) has more bytes, or its end: DATA
  // goes on from the next Produce, within the server's flow-control windows. Does nothing when
  // the body was not waiting for bytes. A body whose BodyStream failed or was cancelled never
  // ends (no END_STREAM): the owner cancels the stream (Cancel) instead.
  void ResumeBody(Stream* stream);
  // Resets the stream (RST_STREAM CANCEL); the visitor hears no more of it except its close,
  // and no more of its request body is read.
  // What a paused stream held is dropped; if its close was among it (the stream had ended),
  // returns true and the stream is over now: OnStreamClose will not be called for it.
  bool Cancel(Stream* stream);
  // Holds the stream's DATA, trailers and close from now on (a piece being delivered is
  // delivered whole) and stops reopening its window. Pausing a paused stream does nothing.
  void Pause(Stream* stream);
  // Delivers what the stream held, from inside this call, and reopens its window: the server
  // sends on. A visitor call may pause it again, which stops the delivery there. Resuming a
  // stream that is not paused does nothing.
  void Resume(Stream* stream);

  // Streams submitted and not yet closed.
  size_t open_streams() const { return open_streams_; }
  // The server's SETTINGS_MAX_CONCURRENT_STREAMS (unlimited until its SETTINGS arrive).
  uint32_t peer_max_concurrent_streams() const;
  // False once a GOAWAY was received or stream ids ran out: no new stream may start here.
  bool accepts_streams() const;

 private:
  H2ClientSession(Visitor* visitor, const Settings& settings, bool tls)
      : visitor_(visitor), settings_(settings), tls_(tls) {}
  Status Init();
  // Hands the visitor what `stream` held, up to a new pause or its close.
  void DeliverHeld(Stream* stream);

  friend struct H2ClientCallbacks;
  Visitor* visitor_;
  Settings settings_;
  bool tls_;
  size_t open_streams_ = 0;
  bool goaway_received_ = false;
  H2RequestFields fields_;
  H2HeadBuilder head_;  // the HEADERS block being received (blocks never interleave)
};

}  // namespace hammer::http
