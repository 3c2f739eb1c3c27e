// H2ServerSession: the server side of one HTTP/2 connection (libnghttp2), without I/O (see
// H2Session). It gathers each request stream (head, then body up to its END_STREAM) and hands
// the whole request to a Visitor, like the HTTP/1.1 connection does; the answer comes back
// through Respond, at once or later, in any order across streams.
//
// Every byte a client sends is hostile, so what one connection can make the server hold or do
// is bounded, and every refusal is counted (H2Refusal, told to the Visitor):
// - streams: SETTINGS_MAX_CONCURRENT_STREAMS (nghttp2 refuses streams beyond it);
// - heads: SETTINGS_MAX_HEADER_LIST_SIZE is announced, and a head whose fields add up to more
//   (RFC 9113's accounting, 32 bytes per field; the expanded size, so an HPACK bomb of small
//   references to one big table entry counts in full) or has too many fields is answered 431
//   without keeping the rest; CONTINUATION frames are capped in number (CVE-2024-28182);
// - bodies: a stream's body over max_body_bytes (or a content-length over it) is answered 413
//   and reset (a streamed one, already handed over, is reset and its body fails); bodies, heads and
//   answers waiting to be sent together over max_buffered_bytes get REFUSED_STREAM for the
//   stream that would pass it (a client may retry it); a request arriving, or a body still
//   arriving, while the server's BufferBudget (Settings::budget, shared by every connection) is
//   exhausted is answered 503;
// - resets: a client that resets most of the streams it opens before their answer (rapid
//   reset, CVE-2023-44487), once it has done so min_resets_to_judge times, gets GOAWAY
//   ENHANCE_YOUR_CALM, as Envoy does; nghttp2's own reset rate limit stays on behind it;
// - floods of SETTINGS, PING or RST_STREAM answers and other protocol errors end the
//   connection with GOAWAY (nghttp2's checks).
//
// A streamed answer (RespondStream) is taken from its BodyStream as nghttp2 sends DATA, within
// the client's flow-control windows: a client that reads slowly leaves the bytes in the stream,
// whose producer then stops its source. A request body over Settings::stream_body_above goes
// the other way: handed over at once as a BodyStream (Visitor::OnStreamedRequest), its stream
// window reopened only as the visitor takes the bytes (H2RequestStream), so a slow taker holds
// the client at its window. Window updates are the session's own (nghttp2's automatic ones are
// off): the connection's and held bodies' at once, as the bytes arrive.
//
// Views handed to the Visitor are valid during the call only. Respond copies what it needs.
// Threading: one loop thread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hammer/http/body_stream.h"
#include "hammer/http/buffer_budget.h"
#include "hammer/http/h2_fields.h"
#include "hammer/http/h2_refusal.h"
#include "hammer/http/h2_request_stream.h"
#include "hammer/http/h2_session.h"
#include "hammer/http/message.h"

namespace hammer::http {

class H2ServerSession final : public H2Session {
 public:
  struct Settings {
    uint32_t max_concurrent_streams = 100;
    size_t max_head_bytes = 64 * 1024;
    size_t max_headers = 128;
    uint64_t max_body_bytes = 16 * 1024 * 1024;
    // Heads, bodies and answers held at once for this connection's streams.
    uint64_t max_buffered_bytes = 16 * 1024 * 1024 + 64 * 1024;
    // Flow-control window per stream offered to the client.
    int32_t window_bytes = 256 * 1024;
    // Rapid reset: judged once the client has reset this many streams before their answer;
    // then GOAWAY when at least half of its streams ended that way.
    uint32_t min_resets_to_judge = 100;
    // The server's process-wide budget (not owned; may be null): a request arriving while it is
    // exhausted is answered 503 (H2Refusal::kOverBudget); streamed bodies are charged to it.
    BufferBudget* budget = nullptr;
    // Request bodies above this many bytes (a content-length over it, or once that many have
    // arrived) are passed on as they arrive (Visitor::OnStreamedRequest) rather than held
    // whole, each holding at most about window_bytes (see H2RequestStream); 0: every body is
    // held whole. Streamed bodies need `loop` (their wake-ups run there).
    uint64_t stream_body_above = 0;
    net::EventLoop* loop = nullptr;
    // Extended CONNECT (RFC 8441): SETTINGS_ENABLE_CONNECT_PROTOCOL is announced, and a CONNECT
    // with a :protocol (a WebSocket over HTTP/2) is handed over at once as a tunnel
    // (OnStreamedRequest with `tunnel`): its DATA, in both directions, is the tunnel's bytes,
    // with no cap, and an answer of 101 is sent as 200 (§5). Needs `loop`.
    bool extended_connect = false;
  };

  class Visitor {
   public:
    virtual ~Visitor() = default;
    // A complete request on `stream_id`; answer with Respond (now or later). `trailers`: the
    // fields of a HEADERS block the client sent after the body (RFC 9113 §8.1), if any.
    virtual void OnRequest(int32_t stream_id, const RequestHead& head, std::string_view body,
                           std::span<const Header> trailers) = 0;
    // A request whose body is passed on as it arrives (Settings::stream_body_above): `body`
    // fills as DATA arrives, ends with END_STREAM (the trailers the client sent, if any, set on
    // it first: BodyStream::trailers), and fails if the stream ends first (the
    // client reset it, the connection closed, or it went over max_body_bytes: reset, and
    // counted as kBodyTooLarge). The visitor becomes its consumer; the client is held at its
    // stream window until the bytes are taken. `head` frames it as content-length when one was
    // announced, chunked otherwise. Answered like OnRequest, at any time (even before the body
    // ended). The default, for visitors that never set stream_body_above, cancels the body.
    // `tunnel`: an extended CONNECT (Settings::extended_connect), its head given as the
    // HTTP/1.1 upgrade it stands for (GET, "upgrade: <protocol>").
    virtual void OnStreamedRequest(int32_t /*stream_id*/, const RequestHead& /*head*/,
                                   std::shared_ptr<BodyStream> body, bool /*tunnel*/) {
      body->Cancel();
    }
    // The client reset (or the session dropped) a stream whose request was handed over and not
    // yet answered: a later Respond for it does nothing.
    virtual void OnRequestCancelled(int32_t /*stream_id*/) {}
    // The session refused a stream or ended the connection (answered 413/431/503, reset, or
    // GOAWAY): the visitor counts it if it keeps counts.
    virtual void OnRefused(H2Refusal /*refusal*/) {}
    // A streamed answer has more bytes (or its end) for Produce, or a streamed request body's
    // consumer took bytes and their WINDOW_UPDATE waits for Produce; called from the stream's
    // deferred wake-up, never from inside Receive or Produce.
    virtual void OnAnswerReady() {}
  };

  static Result<std::unique_ptr<H2ServerSession>> Create(Visitor* visitor,
                                                         const Settings& settings);
  ~H2ServerSession() override;

  // Answers the request on `stream_id`: `status`, `headers` (any case; connection-specific
  // fields are left out, names are lower-cased), and `body` (not sent for a HEAD request, whose
  // content-length is kept). False when the stream is gone (reset, or already answered).
  bool Respond(int32_t stream_id, int status, std::span<const Header> headers,
               std::string_view body);
  // An interim answer (a 1xx other than 100 and 101: 103 Early Hints) on a stream not yet
  // answered: a HEADERS frame without END_STREAM. False when the stream is gone or answered.
  bool RespondInterim(int32_t stream_id, int status, std::span<const Header> headers);
  // Answers with a body that arrives through `body` (Responder::RespondStream): the fields as
  // for Respond, with a content-length only when body->length() is known, then DATA frames as
  // the stream fills. The session is the body's consumer until the stream ends: a body that
  // fails resets the stream (INTERNAL_ERROR: the client has its status already); a stream that
  // closes first (the client reset it, the connection ended) cancels the body. False, with the
  // body cancelled, when the stream is gone or already answered.
  bool RespondStream(int32_t stream_id, int status, std::span<const Header> headers,
                     std::shared_ptr<BodyStream> body);
  // The connection is closing: every streamed answer's body is cancelled and let go.
  void CancelStreamedAnswers();
  // Resets the stream (RST_STREAM with `error_code`); for faults a test server injects.
  void ResetStream(int32_t stream_id, uint32_t error_code);

  // Whether the request on `stream_id` is a HEAD (its answer carries no body).
  bool IsHeadRequest(int32_t stream_id) const;
  // Bytes held for this connection's streams (heads, bodies, answers not yet sent).
  uint64_t buffered_bytes() const { return buffered_bytes_; }
  // Requests handed over and not yet answered.
  size_t awaiting_answers() const { return awaiting_; }
  // Streams whose request is still arriving (head or body), not yet handed over or refused.
  size_t receiving_streams() const { return receiving_; }
  // True while a request head is incomplete (a HEADERS frame and its CONTINUATIONs, which
  // nothing may interleave with): the owner's head deadline runs.
  bool receiving_head() const { return head_stream_ != 0; }
  uint64_t streams_opened() const { return streams_opened_; }
  // Streams not yet closed (arriving, being served, or answers being sent).
  size_t open_streams() const { return streams_.size(); }
  // Streamed answers still being sent (RespondStream).
  size_t streamed_answers() const { return streamed_answers_; }

 private:
  class StreamedAnswer;
  struct Stream {
    ~Stream();  // where StreamedAnswer is complete
    int32_t id = 0;
    H2HeadBuilder head;
    H2HeadBuilder trailers;  // a HEADERS block after the body, bounded like the head
    bool trailers_too_large = false;
    std::string body;
    std::string answer;  // the response body being sent
    size_t answer_sent = 0;
    uint64_t charged = 0;  // bytes counted in buffered_bytes_
    bool head_too_large = false;
    bool refused = false;     // answered (413/431) or reset by the server before dispatch
    bool dispatched = false;  // handed to the visitor
    bool answered = false;
    bool head_request = false;
    bool receiving = true;  // counted in receiving_
    bool tunnel = false;    // an extended CONNECT
    bool uncapped = false;  // a streamed body max_body_bytes does not bound (tunnel, gRPC)
    std::unique_ptr<StreamedAnswer> streamed;           // RespondStream's body, while it is sent
    std::unique_ptr<H2RequestStream> streamed_request;  // a body passed on as it arrives
  };

  H2ServerSession(Visitor* visitor, const Settings& settings)
      : visitor_(visitor), settings_(settings) {}
  Status Init();
  Stream* Find(int32_t id);
  void Charge(Stream* stream, uint64_t bytes);
  void Dispatch(Stream* stream);
  // END_STREAM: a held request is dispatched, a streamed one's body ends.
  void EndOfRequest(Stream* stream);
  // Dispatches the request with its body passed on as it arrives (stream_body_above).
  void StreamBody(Stream* stream, std::optional<uint64_t> length);
  void AppendStreamed(Stream* stream, std::string_view data);
  void Refuse(Stream* stream, H2Refusal refusal, int status);
  void RefuseTrailers(Stream* stream);
  bool Submit(Stream* stream, int status, std::span<const Header> headers, std::string_view body,
              std::string_view content_type = {});
  // Fills response_fields_: :status, content-type, `headers` (connection-specific ones left
  // out) and content-length (`body_length`, or the handler's own for a HEAD request).
  void BuildFields(const Stream& stream, int status, std::span<const Header> headers,
                   std::string_view content_type, std::optional<uint64_t> body_length);
  void OnStreamedAnswerReady(StreamedAnswer* answer);
  void OnClientReset(Stream* stream);
  void StopReceiving(Stream* stream);
  // Streams closed before the client finished sending on them (the last few): a late HEADERS
  // (trailers) on one is ignored, not a protocol error.
  void RememberResetEarly(int32_t stream_id);
  bool WasResetEarly(int32_t stream_id) const;
  static constexpr size_t kResetEarlyRemembered = 256;

  friend struct H2ServerCallbacks;
  Visitor* visitor_;
  Settings settings_;
  std::unordered_map<int32_t, std::unique_ptr<Stream>> streams_;
  uint64_t buffered_bytes_ = 0;
  size_t awaiting_ = 0;
  size_t receiving_ = 0;
  size_t streamed_answers_ = 0;
  int32_t head_stream_ = 0;     // the stream whose head is arriving, 0: none
  int32_t highest_stream_ = 0;  // the highest stream id the client has used
  std::deque<int32_t> reset_early_;
  uint64_t streams_opened_ = 0;
  uint64_t early_resets_ = 0;                // streams the client reset before their answer
  bool calmed_ = false;                      // GOAWAY ENHANCE_YOUR_CALM sent
  std::vector<nghttp2_nv> response_fields_;  // scratch for Submit
  std::string response_bytes_;
};

}  // namespace hammer::http
