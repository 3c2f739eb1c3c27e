// H2ClientConnection: one HTTP/2 connection of an HttpClient (internal to it), carrying up to
// ClientOptions::http2.max_streams exchanges at once (fewer if the server's
// SETTINGS_MAX_CONCURRENT_STREAMS says so).
//
// States: kOpening (the Connector resolves, connects, handshakes; exchanges queue) -> kActive
// (exchanges are streams of the H2ClientSession) -> kClosed. On https the connection offers
// ALPN "h2" and "http/1.1"; on http it speaks HTTP/2 with prior knowledge (h2c, RFC 9113
// §3.3). A server that does not speak HTTP/2 (ALPN chose http/1.1 or nothing; an h2c preface
// answered in HTTP/1.x) fails every queued exchange with a protocol failure saying so, unless
// the client allows the fallback: then the origin is marked HTTP/1.1 for good, the first
// exchange continues on this very transport as a ClientConnection, and the others are sent
// again through the client.
//
// Each exchange gets exactly one completion (HttpClient::Complete): the response, or one
// Failure. Stream-level outcomes: stream_reset (the server's RST_STREAM, with its code),
// goaway (the server ended the connection with an error before the stream completed),
// protocol (a malformed response; a head over the limits), timeout (the exchange's deadline;
// the stream is cancelled). A stream the server refused without processing it (REFUSED_STREAM,
// or beyond a GOAWAY's last stream id) is sent once more on another connection, as RFC 9113
// §8.7 allows for any method. Connection-level: reset (closed or reset before the response
// ended).
//
// An exchange's ResponseFlow pauses its stream (H2ClientSession::Pause): the server stops at
// the stream window (Http2Options::window_bytes) while the other streams go on; the deadline
// waits meanwhile and is pushed back by the time paused; resuming delivers what was held from
// a later loop iteration; aborting resets the stream (RST_STREAM CANCEL) and calls the handler
// no more.
//
// A streamed request body (ClientRequest::body_stream) is its stream's DATA, taken from the
// BodyStream as the server's flow-control windows allow (H2RequestBody): the exchange is the
// BodyStream's consumer from Send until it completes, and each wake-up resumes the stream's
// DATA. A body whose producer fails resets that stream only (RST_STREAM CANCEL) and fails the
// exchange (Failure::kOther); an exchange that ends before its body did (the server's answer
// ended first, a reset, a timeout, an abort) cancels the BodyStream. Such an exchange is sent
// again after a refusal, or over HTTP/1.1 after a fallback, only if none of its body went out.
//
// Completions are delivered after nghttp2 has returned (never from inside its callbacks), so
// handlers may send their next request from OnResponseComplete; writes are gathered and made
// once per event. Owned by HttpClient; destroyed via DeleteLater. Loop thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hammer/http/client.h"
#include "hammer/http/connector.h"
#include "hammer/http/h2_client_session.h"
#include "hammer/net/transport.h"

namespace hammer::http {

class H2ClientConnection final : public net::IoHandler,
                                 public net::Deletable,
                                 private Connector::Owner,
                                 private H2ClientSession::Visitor {
 public:
  H2ClientConnection(HttpClient* client, const Origin* origin);
  ~H2ClientConnection() override;

  const Origin* origin() const { return origin_; }
  // Starts opening the connection (exchanges sent before it is ready wait for it).
  void Open();
  // Takes an exchange; its handler is completed exactly once (through HttpClient::Complete).
  // `fresh` marks the exchange that made the client open this connection (its result carries
  // the connect timings); `is_retry` one already refused once.
  void Send(const ClientRequest& request, ResponseHandler* handler, bool fresh, bool is_retry);
  // Whether another exchange may start here now.
  bool HasRoom() const;
  // Exchanges taken and not yet completed.
  size_t exchanges() const { return exchanges_; }
  // Closes without reporting (no exchange in progress: idle connections at shutdown).
  void Close();
  // Closes without ever calling the handlers of its exchanges; returns how many there were.
  size_t Abandon();

  void OnIoEvents(uint32_t events) override;

 private:
  enum class State : uint8_t { kOpening, kActive, kClosed };

  struct Exchange final : H2ClientSession::Stream, ResponseFlow::Target, BodyStream::Consumer {
    void PauseFlow() override { connection->PauseStream(this); }
    void ResumeFlow() override { connection->ResumeStream(this); }
    void AbortFlow() override { connection->AbortStream(this); }
    void OnBodyStreamReady() override { connection->OnRequestBodyReady(this); }

    H2ClientConnection* connection = nullptr;
    ClientRequest request;
    ResponseHandler* handler = nullptr;  // null once completed (or abandoned)
    ExchangeResult result;
    bool is_retry = false;
    bool submitted = false;  // a stream of the session, not yet closed by it
    bool retry = false;      // refused by the server: to be sent again, not completed
    MonoNanos paused_at = 0;
    bool resume_due = false;  // resumed by its flow; delivered by DeliverResumes
  };

  // Connector::Owner
  void OnTransportReady(std::unique_ptr<net::Transport> transport) override;
  void OnConnectFailed(Failure failure, std::string detail) override;
  // H2ClientSession::Visitor
  void OnStreamInterim(H2ClientSession::Stream* stream, const ResponseHead& head) override;
  void OnStreamHead(H2ClientSession::Stream* stream, const ResponseHead& head) override;
  void OnStreamData(H2ClientSession::Stream* stream, std::string_view data) override;
  void OnStreamTrailers(H2ClientSession::Stream* stream, std::span<const Header> trailers) override;
  void OnStreamClose(H2ClientSession::Stream* stream, uint32_t error_code) override;
  void OnGoaway(int32_t last_stream_id, uint32_t error_code) override;

  void FallBackOrRefuse(std::unique_ptr<net::Transport> transport, std::string why);
  void SubmitPending();
  void Submit(Exchange* exchange);
  void OnReadable();
  // Delivers the completions gathered while nghttp2 ran, then writes what is ready.
  void AfterSession();
  void Pump();
  void Flush();
  void OnTimer();
  void ArmTimer(MonoNanos deadline);
  // Bytes moved for `exchange`: with an idle_timeout its deadline moves on (ClientRequest).
  void KeepAlive(Exchange* exchange);
  // Completes `exchange` with a failure (unless it is already completed).
  void FailExchange(Exchange* exchange, Failure failure, std::string detail);
  // Fails every exchange not yet completed and closes the connection.
  void FailAll(Failure failure, const std::string& detail);
  void Complete(Exchange* exchange);
  // ResponseFlow entry points (through Exchange).
  void PauseStream(Exchange* exchange);
  void ResumeStream(Exchange* exchange);
  void AbortStream(Exchange* exchange);
  void DeliverResumes();
  // Lets go of the exchange's flow, if it is still bound to it.
  static void UnbindFlow(Exchange* exchange);
  // A streamed request body has more bytes, its end, or failed.
  void OnRequestBodyReady(Exchange* exchange);
  // Lets go of the exchange's streamed request body, if any: no more is read from it, and
  // unless another exchange takes it over (`cancel` false) one not wholly sent is cancelled.
  static void UnbindBody(Exchange* exchange, bool cancel);
  // Part of a streamed request body went out: the exchange cannot be sent again.
  static bool BodyPartlySent(const Exchange* exchange);
  static bool FlowPaused(const Exchange* exchange);
  void Release(Exchange* exchange);
  Exchange* NewExchange();
  void CloseSocket();
  void CloseIfDone();

  HttpClient* client_;
  net::EventLoop* loop_;
  const Origin* origin_;
  State state_ = State::kOpening;
  Connector connector_;
  std::unique_ptr<net::Transport> transport_;
  std::unique_ptr<H2ClientSession> session_;
  net::Timer timer_;  // the earliest exchange deadline
  size_t exchanges_ = 0;
  bool peer_went_away_ = false;
  uint32_t goaway_error_ = 0;
  bool deferring_ = false;  // a caller up the stack delivers done_ and writes (AfterSession)
  bool greeted_ = false;    // the first bytes from the server have arrived
  bool resumes_scheduled_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for deferred resumes
  std::vector<Exchange*> pending_;              // taken while opening, not yet submitted
  std::vector<Exchange*> done_;                 // completed inside nghttp2's callbacks, to deliver
  std::vector<std::unique_ptr<Exchange>> all_;  // every exchange object (live or free)
  std::vector<Exchange*> free_;
  std::string in_;
  std::string out_;
  size_t out_sent_ = 0;
};

}  // namespace hammer::http
