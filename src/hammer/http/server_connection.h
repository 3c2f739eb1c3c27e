// ServerConnection: one accepted connection of an HttpListener (internal to hammer/http; the
// contract users see is in server.h).
//
// The input side is a state machine, one handler per state:
//   kHandshake TLS only: the handshake runs first, under the TLS context's handshake_timeout
//              and the first head's deadline (which counts from the accept), whichever is
//              earlier. The connection is already in the queue of waiting connections.
//   kHead      waiting for a complete request head. Joins the listener's queue of waiting
//              connections (the ones a new connection may replace at the connection cap);
//              the timer is the head deadline (HeadDeadline).
//   kBody      the head is in; the body is being read and buffered whole. The timer is
//              idle_timeout, re-armed on each read.
//   kStreamingBody  the handler has the request, whose body (above stream_body_above) is still
//              being read into its BodyStream: the connection reads only while the stream has
//              room (back-pressure through TCP) and resumes when it drains
//              (OnBodyStreamDrained). The timer is idle_timeout since bytes last moved. A
//              request that switches protocols (tunnel_) stays here: the bytes after its head
//              go to the stream raw until the client closes its side, under
//              tunnel_idle_timeout.
//   kServing   the handler has the request. Input is read ahead into the connection's buffer
//              until it is full, then the socket is no longer watched for input (back-pressure
//              through TCP). No timer: a slow handler is not the client's fault.
//   kClosing   the last answer is being written; input is no longer read.
//   kLingering refused: the answer is written, input is read and dropped until the client
//              closes or kLingerTime passes, so that the client sees the answer (a close with
//              unread input would reset the connection).
//   kHttp2     the client speaks HTTP/2 (ALPN "h2" after the handshake, or the HTTP/2
//              connection preface as its first bytes with ServerOptions::http2 enabled): events,
//              answers, draining and eviction go to an H2ServerConnection, which serves the
//              streams until it closes this connection (h2_server_connection.h).
//   kClosed    waiting for DeleteLater.
// The output side is a buffer written as the socket accepts it; with more than
// kOutputHighWater bytes waiting, no new request is parsed. A streamed response
// (RespondStream) is moved from its BodyStream into that buffer only while it is under
// kOutputHighWater; the timer is then idle_timeout since bytes last moved (a client that stops
// reading is closed). Closing the connection fails the request stream and cancels the response
// stream, so that the handler's side stops (answers and streaming are in server_answers.cc,
// reading in server_input.cc).
//
// Buffers: input is read into the listener's shared buffer whenever the connection has
// nothing buffered, and only what is left unparsed (a partial head, pipelined requests) is
// copied into the connection's own buffer, so an idle connection holds none. Buffer sizes are
// charged to the server's BufferBudget.
//
// Reading: at most kReadsPerEvent reads per readiness event, so one busy client does not hold
// the loop. What is left then, and input that a TLS transport took off the socket before a
// pause (Transport::holds_input), raises no new epoll event: it is read from a deferred task
// of the loop (ReadLater), never from inside the caller.
//
// Ownership: the listener's ConnectionTable owns every connection; a connection closes itself
// into DeleteLater. Threading: the listener's loop thread only.
#pragma once

#include <sys/epoll.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hammer/base/intrusive_list.h"
#include "hammer/http/buffer_budget.h"
#include "hammer/http/h2_server_connection.h"
#include "hammer/http/owned_headers.h"
#include "hammer/http/request_parser.h"
#include "hammer/http/server.h"
#include "hammer/net/transport.h"

namespace hammer::http {

class ServerConnection final : public net::IoHandler,
                               public net::Deletable,
                               private RequestParser::Visitor,
                               private BodyStream::Producer,
                               private BodyStream::Consumer {
 public:
  ServerConnection(HttpListener* listener, std::unique_ptr<net::Transport> transport);
  ~ServerConnection() override;

  Status Register();
  void OnIoEvents(uint32_t events) override;

  // Responder entry points; a stale `sequence` (an earlier request) is ignored.
  void Respond(uint64_t sequence, int status, std::string_view content_type, std::string_view body,
               std::span<const Header> extra);
  void RespondRaw(uint64_t sequence, std::string_view bytes, bool keep_alive);
  void RespondRawThenReset(uint64_t sequence, std::string_view bytes);
  void RespondStream(uint64_t sequence, std::string_view head, std::shared_ptr<BodyStream> body,
                     bool keep_alive);

  // When this connection began waiting for its current request head (kHead only).
  MonoNanos waiting_since() const { return waiting_since_; }
  // Closed to admit a new connection at the connection cap (counted as kEvicted).
  void Evict();
  // The listener is draining: an idle connection closes now; a busy one after its current
  // response, which says "Connection: close".
  void Drain();
  // Whether the connection stays open after the current response.
  // Not while a streamed request body is still coming: the rest would have to be read first.
  bool KeepsAlive() const {
    return request_keep_alive_ && !listener_->draining_ && phase_ != Phase::kStreamingBody &&
           !tunnel_;
  }

  IntrusiveLink<ServerConnection> waiting_link;  // in the listener's queue while in kHead

 private:
  friend class H2ServerConnection;

  // What epoll watches: input and output, or output only while reading is paused.
  static constexpr uint32_t kWatchInput = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  static constexpr uint32_t kWatchOutputOnly = EPOLLOUT | EPOLLRDHUP | EPOLLET;

  enum class Phase : uint8_t {
    kHandshake,
    kHead,
    kBody,
    kStreamingBody,
    kServing,
    kClosing,
    kLingering,
    kHttp2,
    kClosed
  };

  // kHandshake
  void ContinueHandshake();
  MonoNanos HandshakeDeadline() const;
  MonoNanos FirstHeadDeadline() const;
  // kHttp2: `received` are the bytes read so far (the preface onwards).
  void StartHttp2(std::string_view received);
  bool IsHttp2Preface(std::string_view input, bool* need_more) const;
  // On a port that also speaks h2c, a first request line that is neither HTTP/1.x nor the
  // preface: the client speaks neither protocol, so there is no language to answer 400 in; the
  // connection is closed (RFC 9113 §3.4: a bad preface is a connection error).
  bool SpeaksNeitherProtocol(ParseError error) const;
  // kHead
  void EnterHead();
  void OnHeadBytes();
  // Reading (server_input.cc)
  void OnReadable(bool peer_closing);
  void ReadIntoSharedBuffer(bool peer_closing, bool* again);
  void ReadIntoOwnBuffer(bool peer_closing, bool* again);
  void KeepUnparsed(std::string_view rest);
  void Watch(uint32_t events);
  void PauseReading();
  void ResumeReadingIfRoom();
  void ReadLater();
  void DrainLingering();
  // Parsing and dispatch
  void ServeBuffered();
  size_t ParseAndDispatch(std::string_view input);
  bool TakingRequests() const;
  void Dispatch();
  // Refusals
  void Refuse(Rejection rejection, int status, std::string_view body_text);
  void OnTimer();
  void StartLingering();
  // Output
  void MakeOutputRoom(size_t more);
  void AppendResponseHead(int status, std::string_view content_type, size_t body_size,
                          std::span<const Header> extra, bool keep_alive);
  void Answered(bool keep_alive);
  void Flush();
  void OnOutputRoom();
  bool OutputBacklogged() const { return out_.size() - out_sent_ > kOutputHighWater; }
  void UpdateCharge();
  void Close();
  // Streaming (server_answers.cc)
  bool Answerable() const { return phase_ == Phase::kServing || phase_ == Phase::kStreamingBody; }
  void StartRequestStream(std::optional<uint64_t> length);
  void EndRequestStream();
  bool RequestStreamFull() const;
  void OnBodyStreamDrained() override;
  void OnBodyStreamReady() override;
  void PumpResponse();
  void FinishResponseStream();
  void ReleaseStreams();
  // The idle limit while a body or tunnel streams: idle_timeout, or tunnel_idle_timeout.
  Nanos StreamIdleTimeout() const;
  // A tunnel's client closed its side: its stream ends, the other direction goes on.
  void EndTunnelInput();

  // RequestParser::Visitor
  void OnHead(const RequestHead& head) override;
  void OnBody(std::string_view data) override;

  HttpListener* listener_;
  net::EventLoop* loop_;
  ServerResources* resources_;
  std::unique_ptr<net::Transport> transport_;
  RequestParser parser_;
  net::Timer timer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  Phase phase_ = Phase::kHead;
  HeadClock head_clock_;
  std::string client_ip_;  // the peer's address, for X-Forwarded-For
  MonoNanos waiting_since_ = 0;
  bool reading_paused_ = false;
  bool read_later_ = false;  // a deferred read is queued (ReadLater)
  bool serving_ = false;     // inside ParseAndDispatch: answers given synchronously continue there
  // Input not yet parsed: in_[in_start_, in_end_), at most input_cap_ bytes.
  std::string in_;
  size_t in_start_ = 0;
  size_t in_end_ = 0;
  size_t input_cap_;
  // Output not yet written: out_[out_sent_, size).
  std::string out_;
  size_t out_sent_ = 0;
  // The request being read or served.
  RequestHead head_;
  OwnedHeaders head_copy_;
  std::string body_;
  std::optional<Rejection> refusal_;  // decided while parsing the head; acted on after Feed
  uint64_t sequence_ = 0;
  bool request_keep_alive_ = true;
  bool request_was_head_ = false;
  bool linger_after_flush_ = false;
  bool reset_on_close_ = false;  // RespondRawThenReset
  // Streaming: the request body being read into a stream (this connection produces it), and
  // the response body being written from one (this connection consumes it).
  std::shared_ptr<BodyStream> request_stream_;
  bool dispatch_early_ = false;  // the request goes to the handler once this Feed returns
  std::shared_ptr<BodyStream> response_stream_;
  bool response_keep_alive_ = false;
  bool pumping_ = false;
  // The request switches protocols (IncomingRequest::upgrade): what follows its head is raw
  // bytes for request_stream_, and a 101 answer's stream goes out raw.
  bool tunnel_ = false;
  BufferCharge charge_;
  // Until the first bytes show otherwise, they may be the HTTP/2 preface (h2c).
  bool may_be_preface_ = false;
  std::unique_ptr<H2ServerConnection> http2_;
};

// Every connection of one listener, and the queue of those waiting for a request head (oldest
// first): the candidates for eviction at the connection cap.
class ConnectionTable {
 public:
  ConnectionTable() = default;
  ~ConnectionTable();
  ConnectionTable(const ConnectionTable&) = delete;
  ConnectionTable& operator=(const ConnectionTable&) = delete;

  void Add(std::unique_ptr<ServerConnection> connection);
  // Hands the connection to DeleteLater (it has closed itself).
  void Remove(ServerConnection* connection, net::EventLoop* loop);
  void StartWaiting(ServerConnection* connection) {
    if (!decltype(waiting_)::Contains(*connection)) waiting_.PushBack(connection);
  }
  void StopWaiting(ServerConnection* connection) { waiting_.Remove(connection); }
  ServerConnection* oldest_waiting() const { return waiting_.front(); }
  size_t size() const { return all_.size(); }
  std::vector<ServerConnection*> All() const;

 private:
  std::unordered_map<ServerConnection*, std::unique_ptr<ServerConnection>> all_;
  IntrusiveList<ServerConnection, &ServerConnection::waiting_link> waiting_;
};

}  // namespace hammer::http
