// The HTTP/1.1 server side shared by `hammer serve` and the dark proxy's listener.
//
// HttpListener accepts connections on one event loop (several loops can each own a listener
// on the same port through SO_REUSEPORT). Each ServerConnection parses requests with
// RequestParser, buffers the request body (up to Limits::max_body_bytes), and hands the whole
// request to a RequestHandler together with a Responder. The handler answers at once or later
// (from the same loop thread); requests on one connection are answered in order, one at a
// time, so pipelined requests wait their turn. Malformed requests are answered 400 (duplicate
// or missing Host included), transfer codings other than "chunked" 501, oversized heads 431,
// oversized bodies 413, and the connection is closed.
//
// With ServerOptions::tls set, every accepted socket is wrapped in TLS first: the connection
// runs the handshake without blocking and must finish it within the context's
// handshake_timeout (or is closed and counted); then it reads requests as above.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "hammer/http/message.h"
#include "hammer/http/request_parser.h"
#include "hammer/http/tls_server.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/socket.h"
#include "hammer/net/transport.h"

namespace hammer::http {

class ServerConnection;

// A request as received; views are valid only during RequestHandler::OnRequest.
struct IncomingRequest {
  const RequestHead& head;
  std::string_view body;
  std::string_view client_ip = {};  // the connection's peer IP ("127.0.0.1", "::1"), or ""
};

// Answers one request. Cheap to copy; may be kept and used later on the same loop thread.
// Using it after the client went away does nothing (alive() tells).
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

 private:
  friend class ServerConnection;
  Responder(ServerConnection* connection, std::weak_ptr<bool> alive, uint64_t sequence)
      : connection_(connection), alive_(std::move(alive)), sequence_(sequence) {}
  ServerConnection* connection_ = nullptr;
  std::weak_ptr<bool> alive_;
  uint64_t sequence_ = 0;
};

class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  virtual void OnRequest(const IncomingRequest& request, Responder responder) = 0;
};

struct ServerOptions {
  Limits limits{.max_head_bytes = 64 * 1024,
                .max_headers = 128,
                .max_line_bytes = 8 * 1024,
                .max_body_bytes = 16 * 1024 * 1024};
  Nanos idle_timeout = 120 * kSecond;     // closes connections that stay silent this long
  std::shared_ptr<TlsServerContext> tls;  // null: plain TCP
};

struct ServerCounters {
  uint64_t connections_accepted = 0;
  uint64_t requests = 0;
  uint64_t bad_requests = 0;  // answered 400/413/431
  void Merge(const ServerCounters& o) {
    connections_accepted += o.connections_accepted;
    requests += o.requests;
    bad_requests += o.bad_requests;
  }
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
  bool draining() const { return draining_; }
  // Connections currently open. Any thread (a relaxed atomic: a gauge for draining and
  // metrics).
  size_t open_connections() const { return open_connections_.load(std::memory_order_relaxed); }
  net::SocketAddress local_address() const { return local_; }
  const ServerCounters& counters() const { return counters_; }
  void OnIoEvents(uint32_t events) override;

 private:
  friend class ServerConnection;
  net::EventLoop* loop_;
  RequestHandler* handler_;
  ServerOptions options_;
  net::Fd fd_;
  net::SocketAddress local_;
  ServerCounters counters_;
  bool draining_ = false;
  std::atomic<size_t> open_connections_{0};
  std::unordered_map<ServerConnection*, std::unique_ptr<ServerConnection>> connections_;
};

// The reason phrase for a status code ("OK", "Not Found", ...; "" when unknown).
std::string_view ReasonPhrase(int status);

}  // namespace hammer::http
