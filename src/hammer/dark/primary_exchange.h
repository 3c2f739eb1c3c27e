// PrimaryExchange: the regular side of one client request. It carries the request to a regular
// upstream through the handler's HttpClient and answers the client through its Responder: the
// upstream's response unchanged (hop-by-hop headers aside), or 502 (unreachable, reset,
// invalid, too large) / 504 (timeout) with the failure counted. With --compare it also hands
// the primary answer to the request's ComparisonJoin.
//
// Bodies: a request body the listener streamed (IncomingRequest::body_stream, above
// --stream-threshold) goes upstream as it arrives (the HttpClient consumes the stream). A
// response body is kept whole up to the threshold and answered with Content-Length, as
// before; a larger one (a Content-Length above it, or a body of unknown length that grows past
// it) is streamed: the head goes to the client at once and the body follows through a
// BodyStream that this exchange produces. While that stream is full (the client reads slowly)
// the reading of the upstream's response is paused (ResponseFlow), so the upstream waits in
// its TCP window. A kept response is at most DarkOptions::max_response_bytes (else 502); a
// streamed one has no cap. Kept bytes are charged to the listener's BufferBudget. The
// comparison gets the first compare_capture_bytes of a streamed body, as dark copies keep.
//
// Errors mid-stream: the upstream failing after the head was sent fails the response stream
// (the client connection is closed: it has a status line already) and counts
// upstream_aborted; the client going away (the request stream fails, or the response stream is
// cancelled) aborts the upstream exchange and counts client_aborted.
//
// Ownership: created by DarkProxyHandler and owned by its InFlightSet<PrimaryExchange> from
// Send until it ends (OnResponseComplete, or a client abort), whose last act is to Finish()
// itself (destroyed after the loop iteration). If the handler stops first, the exchange is
// cancelled in the HttpClient and destroyed without answering (counted as abandoned by the
// handler); a response being streamed is then failed. The request bytes it owns (head(),
// body(), the request stream) stay valid as long as it lives, as HttpClient::Send requires.
// Threading: the handler's loop thread only.
#pragma once

#include <memory>
#include <string>

#include "hammer/base/clock.h"
#include "hammer/dark/capture_line.h"
#include "hammer/dark/dark_metrics.h"
#include "hammer/dark/in_flight_set.h"
#include "hammer/dark/upstream_instance.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/buffer_budget.h"
#include "hammer/http/client.h"
#include "hammer/http/owned_headers.h"
#include "hammer/http/server.h"

namespace hammer::dark {

class CaptureWriter;
class ComparisonJoin;

// How a primary exchange holds the upstream's response.
struct ResponseHolding {
  net::EventLoop* loop = nullptr;         // the handler's
  size_t max_response_bytes = 64u << 20;  // a kept (not streamed) response above it: 502
  size_t stream_threshold = 1u << 20;     // a body above it is streamed (0: never)
  size_t stream_window = http::kDefaultStreamWindow;
  size_t compare_capture_bytes = 1u << 20;  // of a streamed body, for the comparison
  http::BufferBudget* budget = nullptr;     // kept and streamed bytes are charged here
};

class PrimaryExchange;

// Where a primary exchange reports the end of each try on an upstream instance (the handler):
// TryEnded returns true when it has sent the request again, to another instance (the
// exchange then waits for that try's answer as if it were the first).
class TryObserver {
 public:
  virtual ~TryObserver() = default;
  // `retryable`: nothing of the answer reached the client and the request may be repeated
  // (it never left, or its method is idempotent and its body is held whole, or it was answered
  // gRPC UNAVAILABLE in a Trailers-Only response).
  virtual bool TryEnded(PrimaryExchange& exchange, const http::ExchangeResult& result,
                        bool retryable) = 0;
  // The client went away mid-answer: the try was aborted and nothing more is reported.
  virtual void TryAbandoned(PrimaryExchange& exchange) = 0;
};

class PrimaryExchange final : public http::ResponseHandler,
                              public net::Deletable,
                              private http::RequestWatcher,
                              private http::BodyStream::Producer {
 public:
  // `request_body`: the streamed request body, or null. `client_takes_chunked`: the client
  // speaks HTTP/1.1 or HTTP/2 (a streamed response of unknown length is sent chunked, or in
  // DATA frames; an HTTP/1.0 client gets it kept whole instead).
  PrimaryExchange(InFlightSet<PrimaryExchange>* owner, ProxyCounters* counters,
                  const ResponseHolding& holding, http::Responder responder, bool head_request,
                  bool client_takes_chunked, std::shared_ptr<ComparisonJoin> join,
                  std::shared_ptr<http::BodyStream> request_body);
  ~PrimaryExchange() override;

  // Tries are reported to `observer` (may be null: one try, no retry). `idempotent`: the
  // request's method may be repeated after it reached an upstream.
  void ObserveTries(TryObserver* observer, bool idempotent) {
    observer_ = observer;
    idempotent_ = idempotent;
  }
  // The request asks to switch protocols (IncomingRequest::upgrade): a 101 makes the exchange
  // a tunnel, which lasts until either side closes.
  void ExpectUpgrade() { upgrade_ = true; }
  // The request is a gRPC call: a failure the proxy answers itself is told to the client in
  // gRPC's terms (a Trailers-Only answer: grpc-status 4 DEADLINE_EXCEEDED for a timeout, 14
  // UNAVAILABLE otherwise, and grpc-message saying why), as grpc clients understand it.
  void ExpectGrpc() { grpc_ = true; }
  // From now on, a client that gives up before its answer has begun (an HTTP/2 stream reset, a
  // closed connection) aborts the request upstream at once (an HTTP/2 upstream sees the stream
  // reset, an HTTP/1.1 one its connection closed), rather than when the upstream answers.
  void WatchClient() { responder_.Watch(this); }
  bool upgrade() const { return upgrade_; }
  // --capture: when the exchange ends (answered, failed and answered by the proxy, or left by
  // the client: status 0), `exchange` gets the status, the latency, the head forwarded upstream
  // (moved out: it is no longer needed) and the request body up to the writer's body limit
  // (moved when within it; a streamed body from its KeepConsumed copy, which the caller must
  // have asked for), and goes to `writer`. Not for tunnels.
  void CaptureTo(CaptureWriter* writer, std::unique_ptr<CapturedExchange> exchange) {
    capture_writer_ = writer;
    capture_ = std::move(exchange);
  }
  // The deadline's meaning after the answer begins (http::ClientRequest::idle_timeout).
  Nanos idle_timeout = 0;
  // The upstream instance of the current try (held: a removed instance is drained), and the
  // tries so far.
  std::shared_ptr<UpstreamInstance> instance;
  uint32_t retries = 0;
  bool retry_in_budget = false;  // the current try is a retry counted in the retry budget
  MonoNanos deadline = 0;        // of the whole exchange (--upstream-timeout from its start)
  // Set by the observer when a retryable try found no other instance available: the failure
  // is answered 503 (the service is unavailable) rather than 502.
  bool no_instance_available = false;
  // The try's answer was gRPC's Trailers-Only UNAVAILABLE (grpc-status 14 in the head, no
  // body): the call was not processed, and it is retryable as a failure is.
  bool grpc_unavailable() const { return grpc_unavailable_; }

  // The serialized request to send (owned here so it outlives the exchange).
  std::string& head() { return head_; }
  std::string& body() { return body_; }
  http::BodyStream* request_stream() { return request_stream_.get(); }
  http::ResponseFlow* flow() { return &flow_; }

  void OnResponseInterim(const http::ResponseHead& head) override;
  void OnResponseHead(const http::ResponseHead& head) override;
  void OnResponseBody(std::string_view data) override;
  void OnResponseTrailers(std::span<const http::Header> trailers) override;
  void OnResponseComplete(const http::ExchangeResult& result) override;

 private:
  void StartStreaming(std::optional<uint64_t> length);
  void SpillIntoStream();
  void OnBodyStreamDrained() override;
  void OnRequestAbandoned() override;
  void Capture(std::string_view data);
  bool Retryable(const http::ExchangeResult& result) const;
  void OpenTunnel(const http::ResponseHead& head);
  void CloseTunnel();
  void ForgetTry();
  void SubmitCapture(int status);

  InFlightSet<PrimaryExchange>* owner_;
  ProxyCounters* counters_;
  ResponseHolding holding_;
  http::Responder responder_;
  bool head_request_;
  bool client_takes_chunked_;
  std::shared_ptr<ComparisonJoin> join_;
  std::shared_ptr<http::BodyStream> request_stream_;
  TryObserver* observer_ = nullptr;
  bool idempotent_ = false;
  bool upgrade_ = false;
  bool grpc_ = false;
  bool tunnel_open_ = false;
  MonoNanos start_;
  std::string head_;
  std::string body_;
  int status_ = 0;
  bool grpc_unavailable_ = false;
  std::optional<uint64_t> length_;  // the response's Content-Length, when it has one
  bool too_large_ = false;
  bool complete_ = false;  // OnResponseComplete has run
  // Held for the deferred check of OnResponseHead, which must not outlive the exchange.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  http::OwnedHeaders trailers_;
  http::OwnedHeaders headers_;  // Extra(0) = reason phrase
  std::string response_body_;   // kept whole, or the comparison's capture of a streamed one
  http::BufferCharge response_charge_;
  std::shared_ptr<http::BodyStream> response_stream_;  // produced here once streaming
  CaptureWriter* capture_writer_ = nullptr;
  std::unique_ptr<CapturedExchange> capture_;
  http::ResponseFlow flow_;  // last: aborts the exchange first
};

}  // namespace hammer::dark
