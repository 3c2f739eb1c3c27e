// The HTTP/1.1 server side shared by `hammer serve` and the dark proxy's listener.
//
// HttpListener accepts connections on one event loop (several loops can each own a listener
// on the same port through SO_REUSEPORT). Each connection parses requests with RequestParser,
// buffers the request body (up to Limits::max_body_bytes), and hands the whole request to a
// RequestHandler together with a Responder; a body above ServerOptions::stream_body_above is
// streamed to the handler instead (IncomingRequest::body_stream), and a response body may be
// streamed back (Responder::RespondStream), each with back-pressure through TCP. The handler
// answers at once or later (from the same loop thread); requests on one connection are answered in
// order, one at a time, so pipelined requests wait their turn. Malformed requests are answered 400
// (duplicate or missing Host included), transfer codings other than "chunked" 501, oversized heads
// 431, oversized bodies 413, and the connection is closed.
//
// Every byte a client sends is hostile, so what a client can make the server hold is bounded
// (each refusal is counted in ServerResources under its Rejection):
// - Input is buffered per connection up to max_head_bytes plus one read (kReadChunk). While the
//   handler serves a request the connection reads ahead only until that buffer is full, then
//   stops watching the socket: a client that floods or pipelines waits in its own TCP window,
//   not in our memory. A connection with more than kOutputHighWater bytes of answers not yet
//   accepted by the socket takes no further request until they drain. An idle connection holds
//   no input buffer.
// - The head of a request must be complete within ServerOptions::header_timeout (counted from
//   the accept for the first request, from its first byte for later ones; see HeadDeadline):
//   408, closed. Bytes arriving do not extend it. Between requests a keep-alive connection
//   may stay idle for idle_timeout; while a body is read, idle_timeout applies between reads.
// - The connection cap and the buffered-bytes budget are process-wide (ServerResources,
//   shared by the listeners of one server): see server_resources.h. A request arriving while
//   the budget is exhausted gets 503 and the connection is closed.
// - A connection closed (evicted at the cap, say) gives its descriptor back only after the
//   loop's iteration (EventLoop::DeleteLater); when accept(2) runs out of descriptors while
//   such connections still hold theirs, accepting resumes in a later pass. Otherwise, when
//   accept(2) fails for lack of descriptors, the pending connection is accepted on a
//   spare descriptor and closed at once (an edge-triggered listener would otherwise never
//   hear of it again), and accepting is retried shortly.
//
// With ServerOptions::tls set, every accepted socket is wrapped in TLS first: the connection
// runs the handshake without blocking and must finish it within the context's
// handshake_timeout (or is closed and counted); then it reads requests as above. The first
// head's deadline still counts from the accept, so the handshake uses part of it: a client
// holds its slot from the accept, and must not get handshake_timeout plus header_timeout by
// being slow at both. A connection still in its handshake counts as waiting for a head (it
// may be evicted at the cap).
//
// HTTP/2 (ServerOptions::http2.enabled): a connection whose client chose "h2" in ALPN, or whose
// first bytes are the HTTP/2 connection preface (h2c with prior knowledge), is served as HTTP/2
// on libnghttp2 (h2_server_codec.h): the same handler and Responder, one request per
// stream, answers in any order, under the same limits (connection cap, buffer budget, head
// deadline, head and body caps) plus HTTP/2's own (concurrent streams, rapid reset, floods).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "hammer/http/body_stream.h"
#include "hammer/http/message.h"
#include "hammer/http/request_parser.h"
#include "hammer/http/server_resources.h"
#include "hammer/http/tls_server.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/socket.h"
#include "hammer/net/transport.h"

namespace hammer::http {

class ServerConnection;
struct ListenerContext;

// Bytes asked of one read(2), and the size of a listener's shared read buffer.
inline constexpr size_t kReadChunk = 64 * 1024;
// Unsent answer bytes above which a connection takes no new request (pipelining back-pressure).
inline constexpr size_t kOutputHighWater = 64 * 1024;
// The default window of a streamed body (ServerOptions::stream_window): four reads' worth.
inline constexpr size_t kDefaultStreamWindow = 256 * 1024;

// A request as received; views are valid only during RequestHandler::OnRequest.
struct IncomingRequest {
  const RequestHead& head;
  std::string_view body;
  std::string_view client_ip = {};  // the connection's peer IP ("127.0.0.1", "::1"), or ""
  // Set when the body is streamed (ServerOptions::stream_body_above): `body` is then empty and
  // the whole body, decoded (no chunk framing), comes through this stream as it is read; its
  // length() is the Content-Length, or unknown for a chunked body. The connection is its
  // producer: it stops reading its client while the stream is full(), Ends it after the last
  // byte, and Fails it if the client goes away or stalls first. The handler keeps the pointer
  // as long as it needs the body, registers the stream's consumer, and must answer (or the
  // client waits): an answer given before the body's end closes the connection after it.
  std::shared_ptr<BodyStream> body_stream = nullptr;
  // An HTTP/1.1 request to switch protocols (Upgrade, with "upgrade" in Connection) on a
  // listener that tunnels them (ServerOptions::upgrades): body_stream then carries every byte
  // the client sends after the head, raw, until it closes its side. A 101 answered through
  // RespondStream makes the connection a tunnel: the stream's bytes go to the client raw (no
  // chunks), and the connection closes when that stream ends. Any other answer is an ordinary
  // answer, after which the connection closes.
  bool upgrade = false;
  // The trailer fields that followed a body held whole (an HTTP/1.1 chunked body's trailer
  // section, RFC 9112 §7.1.2; an HTTP/2 request's trailing HEADERS), checked for syntax and
  // bounded like the head. A streamed body carries its own (BodyStream::trailers, set before
  // it ends).
  std::span<const Header> trailers = {};
  // The client connection it came on: a number unique within the process, from 1 (the
  // requests of one HTTP/2 connection share it).
  uint64_t connection = 0;
};

// Answers one request. Cheap to copy; may be kept and used later on the same loop thread.
// Using it after the client went away does nothing (alive() tells).
// Told when the client gives up on a request before its answer has begun (an HTTP/2 stream it
// resets, a connection it closes): a handler that is still working on it may stop (a proxy
// cancels its upstream request). Called from inside the server's processing, once, after the
// watcher was unregistered: it must not call the request's Responder.
class RequestWatcher {
 public:
  virtual ~RequestWatcher() = default;
  virtual void OnRequestAbandoned() = 0;
};

class Responder {
 public:
  Responder() = default;
  bool alive() const;
  // Sends a response with Content-Length, Date-less, and Connection handling done here.
  void Respond(int status, std::string_view content_type, std::string_view body,
               std::span<const Header> extra_headers = {});
  // Sends a fully serialized response (head and body). `keep_alive` false closes afterwards.
  void RespondRaw(std::string_view bytes, bool keep_alive);
  // Whether the connection stays open after this response (the request asked for keep-alive
  // and the listener is not draining). A handler serializing its own response (RespondRaw)
  // adds "Connection: close" when this is false.
  bool keeps_alive() const;
  // Sends `bytes` and then resets the connection (RST): a fault for testing clients.
  void RespondRawThenReset(std::string_view bytes);
  // Sends `head` (a serialized response head: status line, headers, blank line) and then the
  // body as `body` fills. The head must frame the body: Content-Length equal to body->length(),
  // or, for a stream of unknown length, "Transfer-Encoding: chunked" (the connection frames
  // each piece and ends with the last chunk). The connection becomes the stream's consumer: it
  // takes bytes only while its unsent output is under kOutputHighWater, so a client that reads
  // slowly leaves the stream full and its producer should stop its source. When the stream
  // ends, the response is complete (`keep_alive` as for RespondRaw). If the stream fails, the
  // client has had a status line already: the connection is closed (the producer counts it).
  // If the client goes away first, or has already, the stream is cancelled.
  void RespondStream(std::string_view head, std::shared_ptr<BodyStream> body, bool keep_alive);
  // An interim answer before the final one: a 1xx other than 100 and 101 (103 Early Hints
  // carrying Link fields, RFC 8297), with `fields`. Sent to an HTTP/2 client, and to an
  // HTTP/1.1 one (an HTTP/1.0 client cannot take 1xx answers: nothing is sent); ignored once
  // the answer has begun.
  void RespondInterim(int status, std::span<const Header> fields);
  // Registers `watcher` for this request until its answer begins (null: none). A watcher
  // destroyed before then unregisters first (Watch(nullptr)), unless alive() is false.
  void Watch(RequestWatcher* watcher);

  // Made by the server's connections: `sequence` names the request on `connection` (an HTTP/2
  // stream id, or the count of HTTP/1.1 requests); `alive` expires with the connection.
  Responder(ServerConnection* connection, std::weak_ptr<bool> alive, uint64_t sequence)
      : connection_(connection), alive_(std::move(alive)), sequence_(sequence) {}

 private:
  ServerConnection* connection_ = nullptr;
  std::weak_ptr<bool> alive_;
  uint64_t sequence_ = 0;
};

class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  virtual void OnRequest(const IncomingRequest& request, Responder responder) = 0;
};

// HTTP/2 on the server side, when enabled: h2c with prior knowledge on cleartext listeners, ALPN
// "h2" on TLS listeners (the TLS context must then offer it: TlsServerOptions::alpn =
// {"h2", "http/1.1"}).
struct Http2ServerOptions {
  bool enabled = false;
  uint32_t max_concurrent_streams = 100;  // SETTINGS_MAX_CONCURRENT_STREAMS per connection
};

struct ServerOptions {
  Limits limits{.max_head_bytes = 64 * 1024,
                .max_headers = 128,
                .max_line_bytes = 8 * 1024,
                .max_body_bytes = 16 * 1024 * 1024};
  Nanos idle_timeout = 120 * kSecond;  // a keep-alive connection silent this long is closed
  Nanos header_timeout = kDefaultHeaderTimeout;  // a request head must be complete within this
  // The connection cap and buffer budget, shared by the listeners of one server. Null: the
  // listener keeps its own, without limits (bytes and refusals are still counted).
  std::shared_ptr<ServerResources> resources;
  std::shared_ptr<TlsServerContext> tls;  // null: plain TCP
  // Request bodies above this many bytes are streamed rather than buffered whole: the request
  // goes to the handler with IncomingRequest::body_stream as soon as its head is in (a
  // Content-Length above it) or once this many bytes of a chunked body have arrived; over
  // HTTP/2 the same, with content-length or once this many bytes of DATA have arrived. 0: every
  // body is buffered whole (up to limits.max_body_bytes), as `hammer serve` does.
  size_t stream_body_above = 0;
  // The most bytes of a streamed request body held between the client and the handler
  // (HTTP/1.1; an HTTP/2 stream is held by its flow-control window, 256 KiB).
  size_t stream_window = kDefaultStreamWindow;
  // Requests to switch protocols (WebSocket and others; never h2c, which would take the
  // client's later requests past the handler) go to the handler as tunnels
  // (IncomingRequest::upgrade): HTTP/1.1 Upgrade, and on HTTP/2 the extended CONNECT of RFC
  // 8441 (announced with SETTINGS_ENABLE_CONNECT_PROTOCOL; given to the handler as its HTTP/1.1
  // twin, GET with Upgrade, and a 101 answer sent as 200). Off: they are ordinary requests (the
  // handler answers them, e.g. without switching).
  bool upgrades = false;
  // A tunnel is closed when no byte has moved either way for this long.
  Nanos tunnel_idle_timeout = 3600 * kSecond;
  Http2ServerOptions http2;
};

class HttpListener final : public net::IoHandler {
 public:
  HttpListener(net::EventLoop* loop, RequestHandler* handler, ServerOptions options);
  ~HttpListener() override;

  // Binds and listens; with reuse_port several listeners may share one address.
  Status Listen(const net::SocketAddress& address, bool reuse_port);
  // Graceful stop, first step: the listening socket is closed (new connections are refused
  // once every listener on the port has stopped), connections with no request in progress are
  // closed, and every other connection is closed after its current response, which says
  // "Connection: close". Requests already being served are not disturbed. Idempotent. The
  // listener's loop thread only.
  void StartDraining();
  bool draining() const;
  // Connections currently open. Any thread (a relaxed atomic: a gauge for draining and
  // metrics).
  size_t open_connections() const;
  net::SocketAddress local_address() const { return local_; }
  ServerResources& resources();
  // Requests handed to the handler by this listener (loop thread only).
  uint64_t requests() const;
  void OnIoEvents(uint32_t events) override;

 private:
  void AcceptPending();
  bool Admit();
  bool ShedPendingConnection();

  // What the listener shares with its connections (its loop, handler, options, resources, their
  // table); destroyed with the listener, and the connections still open with it.
  std::unique_ptr<ListenerContext> context_;
  net::Fd fd_;
  net::Fd spare_;  // given up to accept a connection when descriptors run out
  net::SocketAddress local_;
  net::Timer accept_retry_;
};

// The reason phrase for a status code ("OK", "Not Found", ...; "" when unknown).
std::string_view ReasonPhrase(int status);

}  // namespace hammer::http
