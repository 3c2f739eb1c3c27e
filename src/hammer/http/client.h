// HttpClient: the client engine shared by `load`, `dark` (upstream side) and `bulk`, speaking
// HTTP/1.1 and, when asked (ClientOptions::http2), HTTP/2.
//
// One HttpClient per event loop, used only on that loop's thread. It keeps connections per
// origin, resolves names without blocking (HostCache), connects with a timeout, trying each
// resolved address in turn (IPv6 and IPv4), writes a pre-serialized request, and streams the
// response to a ResponseHandler. HTTP/1.1: a keep-alive pool of ClientConnections per origin,
// one exchange per connection at a time, the response parsed by ResponseParser. HTTP/2: per
// origin a few H2ClientConnections, each carrying up to http2.max_streams exchanges as streams
// (the same serialized request head is translated into HEADERS); an exchange goes to the first
// connection with room, and a new connection is opened only when none has any.
//
// Ownership: the caller owns the ResponseHandler and the request bytes, both of which must
// stay valid until OnResponseComplete has been called (exactly once per Send). Connections
// and Origins are owned by the client. Handlers may call Send() from inside their callbacks.
//
// A request sent on a reused keep-alive connection that the server had already closed (EOF or
// reset before any response byte) is retried once on a new connection, as is an HTTP/2 stream
// the server refused without processing it; those are the only retries. Everything else is
// reported as a Failure with a human-readable detail.
//
// Streaming (the dark proxy's large bodies; `load` and `bulk` use neither): a request body may
// come from a BodyStream (ClientRequest::body_stream) that is sent as it fills, and the reading
// of the response may be paused and resumed through a ResponseFlow (ClientRequest::flow), so
// that a slow reader of the response slows the server through TCP instead of filling memory.
// An exchange without either costs what it did before: one pointer test each. Both work over
// HTTP/1.1 and HTTP/2. Over HTTP/2 a streamed request body is its stream's DATA, sent as the
// BodyStream fills and as the server's flow-control windows allow (a server that reads slowly
// leaves the bytes in the BodyStream, whose producer then stops), and pausing a response
// holds the one stream, whose window (Http2Options::window_bytes) then stops the server; the
// connection's other streams go on either way.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/failure.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/connector.h"
#include "hammer/http/message.h"
#include "hammer/http/tls.h"
#include "hammer/http/url.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/resolver.h"

namespace hammer::http {

class ClientConnection;
class H2ClientConnection;
class ResponseFlow;

// Where requests go: scheme, host and port. Interned by HttpClient::GetOrigin; the pointer is
// stable for the client's lifetime.
struct Origin {
  std::string key;   // "http://host:port"
  std::string host;  // name or IP literal, no brackets
  uint16_t port = 0;
  bool tls = false;
  std::string host_header;  // value for the Host header
  // Connections go to this address instead of `host`'s (which still names the server to TLS
  // and is verified): one instance among a name's addresses (hammer dark's DNS discovery).
  std::optional<net::SocketAddress> address;
  // Requests go over HTTP/2 (ClientOptions::http2.enabled); false again after a fallback to
  // HTTP/1.1 (the server did not speak HTTP/2).
  bool http2 = false;
};

struct ClientRequest {
  const Origin* origin = nullptr;
  std::string_view head;     // serialized request head, ending with the blank line
  std::string_view body;     // may be empty
  bool head_method = false;  // HEAD: the response has no body
  bool idempotent = true;    // may be retried once after a stale keep-alive connection
  MonoNanos deadline = 0;    // the whole exchange must end by then (0: no deadline)
  // 0: `deadline` holds for the whole exchange. Otherwise it holds only until the exchange
  // streams: from the response head on, and while a streamed request body flows, the exchange
  // fails as a timeout only when no byte has moved for idle_timeout (how nginx's
  // proxy_read_timeout and Envoy's stream idle timeout treat an event stream, a long download
  // or a gRPC stream).
  Nanos idle_timeout = 0;
  // A body sent as it arrives, instead of `body` (which must then be empty). The head must
  // announce it: "Content-Length: N" when body_stream->length() is N (the bytes are sent as
  // they are; over HTTP/2 it becomes content-length), "Transfer-Encoding: chunked" when the
  // length is unknown (HTTP/1.1: the client frames each piece as a chunk and ends with the
  // last chunk; HTTP/2: the field is dropped, DATA frames carry the pieces and END_STREAM ends
  // them). Owned by the caller, like the head; the exchange consumes it (SetConsumer) until it
  // ends. A stream that fails (its producer gave up) fails the exchange (Failure::kOther,
  // "request body abandoned by its source"; over HTTP/2 only its stream is reset, with
  // CANCEL); an exchange that ends before the whole body was sent (the server answered early,
  // or failed) cancels the stream (HTTP/1.1: and closes the connection). Never retried once
  // any of its bytes were consumed (after a stale keep-alive connection, never).
  BodyStream* body_stream = nullptr;
  // HTTP/1.1 only: the request asks to switch protocols (its head has Upgrade and Connection:
  // Upgrade, and no body framing). body_stream is then sent raw (no chunks), and a 101 answer
  // is followed by the other protocol's bytes, delivered as its body until the server closes
  // (the deadline no longer applies once the 101 came). Any other answer is an ordinary one.
  bool upgrade = false;
  // Lets the caller pause the reading of the response; owned by the caller (see ResponseFlow).
  ResponseFlow* flow = nullptr;
};

struct ExchangeResult {
  std::optional<Failure> failure;  // transport/protocol failure; HTTP status is not judged here
  std::string detail;              // why it failed, for logs and summaries ("" on success)
  int status = 0;                  // HTTP status when a head arrived
  bool reused_connection = false;
  MonoNanos connect_start = 0;  // 0 when a pooled connection was used
  MonoNanos connect_end = 0;
  MonoNanos handshake_end = 0;  // TLS only
  MonoNanos first_byte = 0;     // first response byte
  MonoNanos end = 0;            // exchange finished (success or failure)
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
};

class ResponseHandler {
 public:
  virtual ~ResponseHandler() = default;
  // An interim answer other than 100 Continue and 101 (103 Early Hints, ...), before the
  // head; views valid during the call.
  virtual void OnResponseInterim(const ResponseHead& /*head*/) {}
  virtual void OnResponseHead(const ResponseHead& /*head*/) {}
  virtual void OnResponseBody(std::string_view /*data*/) {}
  // Trailer fields after the body (HTTP/2 trailers, e.g. gRPC's grpc-status); views valid
  // during the call. Not called when the response has none.
  virtual void OnResponseTrailers(std::span<const Header> /*trailers*/) {}
  virtual void OnResponseComplete(const ExchangeResult& result) = 0;
};

// The caller's hold on the reading of one response. Named in ClientRequest::flow, it is bound
// to the exchange from Send until OnResponseComplete (or Abort, or a CancelAll); unbound, its
// calls do nothing. Loop thread only; may be called from inside the handler's callbacks.
// Destroying a bound flow aborts its exchange (its handler is presumably going too).
class ResponseFlow {
 public:
  ResponseFlow() = default;
  ~ResponseFlow();
  ResponseFlow(const ResponseFlow&) = delete;
  ResponseFlow& operator=(const ResponseFlow&) = delete;

  // Stops reading the response once the piece being delivered has been (OnResponseBody may
  // still be called for the bytes of the read in progress): the server's TCP window fills.
  // While paused the exchange's deadline does not run: a slow reader downstream is not the
  // server's fault (the reader's own timeouts apply to it).
  void Pause();
  // Reading goes on, from a later loop iteration (never inline); the deadline is pushed back
  // by the time spent paused.
  void Resume();
  // Ends the exchange now: its connection is closed (the server sees the request aborted) and
  // the handler is never called again, OnResponseComplete included. False if none was bound.
  bool Abort();
  bool bound() const { return target_ != nullptr; }
  bool paused() const { return paused_; }

  // What a bound flow acts on: the exchange's HTTP/1.1 connection or its HTTP/2 stream
  // (implemented by the client's connections only).
  class Target {
   public:
    virtual void PauseFlow() = 0;
    virtual void ResumeFlow() = 0;
    virtual void AbortFlow() = 0;  // unbinds the flow

    virtual ~Target() = default;
  };

 private:
  friend class ClientConnection;
  friend class H2ClientConnection;
  Target* target_ = nullptr;
  bool paused_ = false;
};

// HTTP/2 for every origin of a client: ALPN "h2" on https, prior knowledge (h2c) on http.
struct Http2Options {
  bool enabled = false;
  // A server that does not speak HTTP/2 is then spoken to in HTTP/1.1 (for the rest of the
  // client's life); without it, its requests fail as protocol failures that say why.
  bool fallback = false;
  // Concurrent streams per connection (h2load's -m); the server's
  // SETTINGS_MAX_CONCURRENT_STREAMS lowers it.
  uint32_t max_streams = 100;
  // The stream window offered to servers: what a stream paused through its
  // ResponseFlow may hold. A load generator reads as fast as it can, so by default the server
  // never waits for WINDOW_UPDATE; a proxy sets it to what it will hold per paused response.
  int32_t window_bytes = (1 << 30) - 1;
};

struct ClientOptions {
  Nanos connect_timeout = 5 * kSecond;
  // How long a resolved name is used before it is looked up again (getaddrinfo gives no TTL).
  Nanos dns_ttl = 60 * kSecond;
  Limits limits;
  size_t read_buffer_bytes = 16 * 1024;
  size_t max_idle_per_origin = 4096;
  // https: verification settings. The TLS context (and the CA store it loads, ~20 ms of CPU)
  // is created on the first https connection, so plain-HTTP runs never pay for it...
  TlsOptions tls;
  // ... unless a config loaded once for several clients is given: then it is used and `tls`
  // is ignored.
  std::shared_ptr<const TlsClientConfig> tls_config;
  Http2Options http2;
};

// Counters a client keeps about its connections (mergeable).
struct ClientCounters {
  uint64_t connections_opened = 0;
  uint64_t connections_reused = 0;  // exchanges served by a pooled connection
  uint64_t stale_retries = 0;       // requests retried after a stale keep-alive connection
  void Merge(const ClientCounters& o) {
    connections_opened += o.connections_opened;
    connections_reused += o.connections_reused;
    stale_retries += o.stale_retries;
  }
};

class HttpClient {
 public:
  HttpClient(net::EventLoop* loop, net::Resolver* resolver, ClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  const Origin* GetOrigin(const Url& url);
  // The origin of `url` reached at `address` alone (its port is the URL's): a pool of its own,
  // apart from url's and from the other addresses'. A null `address`: GetOrigin(url).
  const Origin* GetOrigin(const Url& url, const net::SocketAddress* address);

  // Starts an exchange. `handler` is always called back later (never inline, even on
  // immediate failure), exactly once with OnResponseComplete.
  void Send(const ClientRequest& request, ResponseHandler* handler);

  // Closes idle connections (at shutdown).
  void CloseIdle();
  // Closes the idle connections to `origin` alone (a server that left); exchanges in progress
  // on it go on.
  void CloseIdle(const Origin* origin);
  // For an owner that has nothing more to send: closes the idle connections, and from now on
  // closes each HTTP/1.1 connection as its exchange ends instead of keeping it for another (a
  // load whose input has run out: its connections close as their last responses come, not all
  // after the last one). Exchanges still sent get a connection of their own. Idempotent.
  void StopReuse();
  // Abandons every exchange in progress: the connections carrying them are closed, and neither
  // their handlers nor completions already queued for a handler are ever called. Idle pooled
  // connections are closed too. Returns how many exchanges were abandoned; their handlers may
  // be destroyed as soon as this returns (this is how an owner cancels what it has in flight
  // before destroying it). Loop thread only, or after the loop has stopped; may be called
  // from inside a handler's callback.
  size_t CancelAll();

  net::EventLoop* loop() const { return loop_; }
  const ClientOptions& options() const { return options_; }
  const ClientCounters& counters() const { return counters_; }
  // The TLS context, created on first use; an error when the CA file cannot be loaded.
  Result<TlsClientContext*> Tls();
  // TLS counters (handshakes, resumptions); zero when no https origin was used.
  TlsCounters tls_counters() const;
  size_t open_connections() const { return connections_.size() + h2_connections_.size(); }

 private:
  friend class ClientConnection;
  class ResponseFlow;
  friend class Connector;
  friend class H2ClientConnection;
  struct Pool {
    std::vector<ClientConnection*> idle;  // most recently used last
  };

  void StartOnNewConnection(const ClientRequest& request, ResponseHandler* handler, bool retry);
  void ReturnToPool(ClientConnection* connection);
  void RemoveFromPool(ClientConnection* connection);
  void Destroy(ClientConnection* connection);
  void Complete(ResponseHandler* handler, ExchangeResult result);
  // HTTP/2: an exchange on a connection of the origin with room, or on a new one.
  void SendH2(const ClientRequest& request, ResponseHandler* handler, bool is_retry);
  void Destroy(H2ClientConnection* connection);
  // The origin's server does not speak HTTP/2 and the fallback is allowed.
  void FallBackToHttp1(const Origin* origin);
  // An exchange on a transport an H2ClientConnection opened (ALPN chose http/1.1).
  void ContinueOnHttp1(std::unique_ptr<net::Transport> transport, const ConnectTimings& timings,
                       const ClientRequest& request, ResponseHandler* handler);

  net::EventLoop* loop_;
  net::HostCache hosts_;
  ClientOptions options_;
  ClientCounters counters_;
  int send_depth_ = 0;
  bool reuse_stopped_ = false;  // StopReuse
  // Completions posted to the loop (see Complete) and not yet run; CancelAll replaces the
  // token, so the posted tasks find theirs expired and do nothing (as after destruction).
  size_t posted_completions_ = 0;
  std::shared_ptr<bool> completion_token_ = std::make_shared<bool>(true);
  std::unique_ptr<TlsClientContext> tls_;
  std::unordered_map<std::string, std::unique_ptr<Origin>> origins_;
  const Origin* last_origin_ = nullptr;  // the one GetOrigin returned last
  std::unordered_map<const Origin*, Pool> pools_;
  std::unordered_map<ClientConnection*, std::unique_ptr<ClientConnection>> connections_;
  std::unordered_map<const Origin*, std::vector<H2ClientConnection*>> h2_pools_;
  std::unordered_map<H2ClientConnection*, std::unique_ptr<H2ClientConnection>> h2_connections_;
};

}  // namespace hammer::http
