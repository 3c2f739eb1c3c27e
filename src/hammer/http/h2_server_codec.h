// H2ServerCodec: HTTP/2 on an accepted connection (a ServerCodec; internal to hammer/http, the
// contract users see is in server.h). A connection speaks HTTP/2 when its client chose "h2" in
// ALPN, or when its first bytes are the HTTP/2 connection preface (h2c with prior knowledge,
// RFC 9113 §3.3). Frames, HPACK, flow control and the protocol's checks are H2ServerSession's
// (libnghttp2); this codec moves bytes between the session and the connection, hands requests
// to the handler, answers them, and keeps the connection's deadlines.
//
// Each complete request stream goes to the listener's RequestHandler with a Responder naming the
// stream; answers may come in any order, now or later. A body over
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
//   byte has gone out for idle_timeout, as an HTTP/1.1 connection does (a client that stops
//   reading, or opens no flow-control window); the bodies are cancelled, so their producers see
//   the client gone and count it;
// - buffers: bodies, heads and answers held for the connection's streams at most
//   max_head_bytes + max_body_bytes (REFUSED_STREAM beyond), and charged to the server's
//   BufferBudget with what the connection holds; a request arriving while the budget is
//   exhausted is answered 503 (kOverBudget);
// - input is handed to nghttp2 as soon as it is read (the connection's shared buffer), so an
//   idle connection holds no input buffer; with more than kOutputHighWater bytes of answers not
//   yet taken by the socket the connection stops reading (back-pressure through TCP);
// - rapid reset and frame floods end the connection (kRapidReset, kProtocolError).
// While no stream is open the connection waits for its client (it may be evicted at the
// connection cap, like an idle HTTP/1.1 keep-alive connection). Draining sends GOAWAY: streams
// already started are answered, then the connection closes. Once both sides are done (GOAWAY,
// streams ended) the connection writes what is left and closes lingering, as an HTTP/1.1
// refusal does: input is read and dropped for a few seconds, so that the client's last frames
// do not turn the close into a reset.
//
// Threading: the connection's loop thread. Owned by its ServerConnection.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hammer/http/h2_server_session.h"
#include "hammer/http/server_codec.h"

namespace hammer::http {

class H2ServerCodec final : public ServerCodec, private H2ServerSession::Visitor {
 public:
  // Null when nghttp2 could not make a session (out of memory): the connection closes.
  static std::unique_ptr<H2ServerCodec> Create(Host* host, const Context& context);
  ~H2ServerCodec() override;
  H2ServerCodec(const H2ServerCodec&) = delete;
  H2ServerCodec& operator=(const H2ServerCodec&) = delete;

  // ServerCodec
  Intake intake() const override;
  size_t Receive(std::string_view input) override;
  bool half_close_allowed() const override { return false; }
  void OnInputEnd() override {}
  void Produce(std::string& out, size_t limit) override;
  Outlook Look() override;
  void OnDeadline() override;
  // GOAWAY now; the connection closes once the streams started are answered.
  void Drain() override;
  void Stop() override;
  size_t buffered_bytes() const override { return session_->buffered_bytes(); }
  // Answers for the stream `sequence` names. Unknown or finished streams are ignored.
  void Respond(uint64_t sequence, int status, std::string_view content_type, std::string_view body,
               std::span<const Header> extra) override;
  // A serialized HTTP/1.1 response, read back into status, fields and body; anything that is
  // not one whole response resets the stream (INTERNAL_ERROR).
  void RespondRaw(uint64_t sequence, std::string_view bytes, bool keep_alive) override;
  // A fault for testing clients: the stream is reset (INTERNAL_ERROR).
  void RespondRawThenReset(uint64_t sequence, std::string_view bytes) override;
  // A serialized HTTP/1.1 response head, read back into status and fields, then the body as
  // `body` fills (H2ServerSession::RespondStream; framing fields such as Transfer-Encoding are
  // HTTP/2's own and left out). A head that does not parse resets the stream (INTERNAL_ERROR)
  // and cancels the body, as does a closed connection.
  void RespondStream(uint64_t sequence, std::string_view head, std::shared_ptr<BodyStream> body,
                     bool keep_alive) override;
  // Streams end on their own: the connection stays open while the listener is not draining.
  bool KeepsAlive() const override { return !host_->draining(); }
  void Watch(uint64_t sequence, RequestWatcher* watcher) override;
  void OnClientGone() override;
  void RespondInterim(uint64_t sequence, int status, std::span<const Header> fields) override;

 private:
  H2ServerCodec(Host* host, const Context& context);

  // H2ServerSession::Visitor
  void OnRequest(int32_t stream_id, const RequestHead& head, std::string_view body,
                 std::span<const Header> trailers) override;
  void OnStreamedRequest(int32_t stream_id, const RequestHead& head,
                         std::shared_ptr<BodyStream> body, bool tunnel) override;
  void OnRefused(H2Refusal refusal) override;
  void OnRequestCancelled(int32_t stream_id) override;
  // The watcher of `stream_id`, unregistered (null when none).
  RequestWatcher* Unwatch(int32_t stream_id);
  void OnAnswerReady() override;

  Host* host_;
  const ServerOptions& options_;
  ServerResources* resources_;
  net::EventLoop* loop_;
  MonoNanos accepted_;
  std::unique_ptr<H2ServerSession> session_;
  std::vector<Header> fields_;  // scratch: content type and extra headers of one answer
  MonoNanos head_started_ = 0;  // when the head arriving began; 0: none is arriving
  MonoNanos last_read_ = 0;
  MonoNanos last_write_ = 0;  // when bytes of answers last went out
  MonoNanos idle_since_ = 0;  // when the last stream closed; 0: no stream has been served
  size_t open_streams_ = 0;   // at the last Look
  // Requests whose handler watches for the client's giving up (Responder::Watch), by stream.
  std::unordered_map<int32_t, RequestWatcher*> watchers_;
};

}  // namespace hammer::http
