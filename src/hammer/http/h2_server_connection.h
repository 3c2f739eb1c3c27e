// H2ServerConnection: the HTTP/2 side of an accepted connection (internal to hammer/http; the
// contract users see is in server.h). Every connection starts as a ServerConnection reading
// HTTP/1.1; it hands itself over to HTTP/2 when the client chose "h2" in ALPN, or when its first
// bytes are the HTTP/2 connection preface (h2c with prior knowledge, RFC 9113 §3.3). The
// ServerConnection stays what the listener owns, the epoll registration, the connection slot,
// the buffer charge and what a Responder answers through; it forwards its events, answers,
// draining and eviction here. Frames, HPACK, flow control and the protocol's checks are
// H2ServerSession's (libnghttp2).
//
// Each complete request stream goes to the listener's RequestHandler with a Responder naming
// the stream; answers may come in any order, now or later. A body over
// ServerOptions::stream_body_above is not waited for: the request goes at once with
// IncomingRequest::body_stream, filled as DATA arrives, the client held at its stream window
// (H2ServerSession's 256 KiB) while the handler does not take the bytes. The server's limits
// hold per connection and per process, as for HTTP/1.1 (each refusal counted under its
// Rejection):
// - streams: SETTINGS_MAX_CONCURRENT_STREAMS (Limits-independent, ServerOptions::http2);
// - heads: SETTINGS_MAX_HEADER_LIST_SIZE = Limits::max_head_bytes, max_headers fields; a head
//   must be complete within header_timeout of its first frame, whatever arrives meanwhile
//   (the HTTP/1.1 head deadline; HEADERS and its CONTINUATIONs cannot interleave with other
//   frames, so one stuck head holds the whole connection): 408 has no HTTP/2 form, the
//   connection gets GOAWAY and is closed (kHeaderTimeout);
// - the first request: as on HTTP/1.1, its head must be complete within header_timeout of the
//   accept (kHeaderTimeout); later, a connection with no stream open closes after idle_timeout;
// - bodies: Limits::max_body_bytes per stream (413); a request body that stalls for
//   idle_timeout with no request being served closes the connection (kBodyTimeout);
// - streamed answers (RespondStream): while one is being sent, the connection closes when no
//   byte has gone to the client for idle_timeout, as an HTTP/1.1 connection does (a client
//   that stops reading, or opens no flow-control window); the bodies are cancelled, so their
//   producers see the client gone and count it;
// - buffers: bodies, heads and answers held for the connection's streams at most
//   max_head_bytes + max_body_bytes (REFUSED_STREAM beyond), and charged to the server's
//   BufferBudget with what the connection holds; a request arriving while the budget is
//   exhausted is answered 503 (kOverBudget);
// - input is read into the listener's shared buffer and handed to nghttp2 at once, so an idle
//   connection holds no input buffer; with more than kOutputHighWater bytes of answers not yet
//   taken by the socket the connection stops reading (back-pressure through TCP);
// - rapid reset and frame floods end the connection (kRapidReset, kProtocolError).
// While no stream is open the connection is in the listener's queue of waiting connections
// (it may be evicted at the connection cap, like an idle HTTP/1.1 keep-alive connection).
// Draining sends GOAWAY: streams already started are answered, then the connection closes.
// Once both sides are done (GOAWAY, streams ended, output written) the close lingers as an
// HTTP/1.1 refusal's does: input is read and dropped for a few seconds, so that the client's
// last frames do not turn the close into a reset.
//
// Ownership: its ServerConnection owns it. Threading: the listener's loop thread only.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/http/h2_server_session.h"
#include "hammer/http/message.h"
#include "hammer/net/event_loop.h"

namespace hammer::http {

class ServerConnection;
class HttpListener;

class H2ServerConnection final : private H2ServerSession::Visitor {
 public:
  // `owner` is the ServerConnection handing over; it outlives this object.
  explicit H2ServerConnection(ServerConnection* owner);
  ~H2ServerConnection() override;
  H2ServerConnection(const H2ServerConnection&) = delete;
  H2ServerConnection& operator=(const H2ServerConnection&) = delete;

  // Starts the session. `received`: bytes already read from the client (the preface onwards),
  // or none. May close the owner before it returns (a bad preface, no memory).
  void Start(std::string_view received);
  void OnIoEvents(uint32_t events);
  // The listener is draining: GOAWAY now, close once the streams started are answered.
  void Drain();

  // Answers for `stream_id` (the Responder's sequence). Unknown or finished streams are ignored.
  void Respond(int32_t stream_id, int status, std::string_view content_type, std::string_view body,
               std::span<const Header> extra);
  // A serialized HTTP/1.1 response, read back into status, fields and body; anything that is
  // not one whole response resets the stream (INTERNAL_ERROR).
  void RespondRaw(int32_t stream_id, std::string_view bytes);
  // A fault for testing clients: the stream is reset (INTERNAL_ERROR).
  void Reset(int32_t stream_id);
  // A serialized HTTP/1.1 response head, read back into status and fields, then the body as
  // `body` fills (H2ServerSession::RespondStream; framing fields such as Transfer-Encoding are
  // HTTP/2's own and left out). A head that does not parse resets the stream (INTERNAL_ERROR)
  // and cancels the body, as does a closed connection.
  void RespondStream(int32_t stream_id, std::string_view head, std::shared_ptr<BodyStream> body);

  // Bytes this connection holds for its client (output and the session's buffers).
  size_t buffered_bytes() const;
  // The owner closed (evicted, or gone with its listener): nothing more happens here.
  void Stop();

 private:
  // H2ServerSession::Visitor
  void OnRequest(int32_t stream_id, const RequestHead& head, std::string_view body) override;
  void OnStreamedRequest(int32_t stream_id, const RequestHead& head,
                         std::shared_ptr<BodyStream> body) override;
  void OnRefused(H2Refusal refusal) override;
  void OnAnswerReady() override;

  void ReadAndReceive();
  void ReadSoon();
  bool Receive(std::string_view bytes);
  // Writes what the session has ready, unless a caller up the stack will.
  void AfterChange();
  void Pump();
  bool Flush();
  void UpdateDeadline();
  void OnTimer();
  void CloseIfDone();
  void Close();

  ServerConnection* owner_;
  HttpListener* listener_;
  net::EventLoop* loop_;
  std::unique_ptr<H2ServerSession> session_;
  net::Timer timer_;
  std::string out_;
  size_t out_sent_ = 0;
  std::vector<Header> fields_;  // scratch: content type and extra headers of one answer
  MonoNanos head_started_ = 0;  // when the head arriving began; 0: none is arriving
  MonoNanos last_read_ = 0;
  MonoNanos last_write_ = 0;  // when bytes last went to the client
  MonoNanos idle_since_ = 0;  // when the last stream closed; 0: no stream has been served
  size_t open_streams_ = 0;   // at the last UpdateDeadline
  bool deferring_ = false;    // inside ReadAndReceive: answers are written once it returns
  bool reading_paused_ = false;
  bool closed_ = false;
};

}  // namespace hammer::http
