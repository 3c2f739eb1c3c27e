// Http1ServerCodec: HTTP/1.1 on an accepted connection (a ServerCodec; internal to hammer/http,
// the contract users see is in server.h). Requests are parsed with RequestParser and answered in
// order, one at a time: pipelined requests wait in the connection's buffer until the request
// before them is answered.
//
// States, one per step of an exchange:
//   kHead          waiting for a complete request head. The deadline is the head deadline
//                  (HeadDeadline: from the accept for the first request, from the head's first
//                  byte for later ones, idle_timeout before that byte); the connection is
//                  waiting (kIdle, or kHead once bytes of the head are in).
//   kBody          the head is in; the body is read and buffered whole. The deadline is
//                  idle_timeout since bytes last arrived.
//   kStreamingBody the handler has the request, whose body (above stream_body_above) is still
//                  being read into its BodyStream: input is taken only while the stream has
//                  room (back-pressure through TCP) and again once it drains. The deadline is
//                  idle_timeout since bytes last moved either way.
//   kTunnel        the request switches protocols (IncomingRequest::upgrade): the bytes after
//                  its head go to its stream raw, and a streamed answer goes out raw, under
//                  tunnel_idle_timeout since bytes last moved; the client may half-close.
//   kTunnelOut     the tunnel's client closed its side: its stream has ended, the answer's
//                  direction goes on.
//   kServing       the handler has the request. Input is read ahead (kHold) up to the
//                  connection's cap, not parsed. No deadline (a slow handler is not the client's
//                  fault), except while a streamed answer is written: idle_timeout (a tunnel's:
//                  tunnel_idle_timeout) since its bytes last moved, once its first byte has.
//   kDone          the connection is ending: nothing more is parsed or answered.
// A refused request (400, 413, 431, 501, 503) is answered and the connection closes lingering,
// so that the client sees the answer. A head or a buffered body past its deadline gets 408, and
// the connection closes; an idle keep-alive connection closes silently.
//
// Answers: the head and body of an answer are appended to the connection's output; a streamed
// answer's body is pulled (Produce) from its BodyStream, chunked when its length is unknown. An
// answer given while the request's body is still streaming ends the exchange: the rest of the
// body is not read (the stream fails for its consumer) and the connection closes lingering.
//
// On a cleartext port that also speaks h2c, a first request line that is neither HTTP/1.x nor
// the HTTP/2 preface closes the connection without an answer: the client speaks neither
// protocol, so there is no language to answer 400 in (RFC 9113 §3.4: a bad preface is a
// connection error).
//
// Threading: the connection's loop thread. Owned by its ServerConnection.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hammer/http/owned_headers.h"
#include "hammer/http/request_parser.h"
#include "hammer/http/server_codec.h"
#include "hammer/http/server_resources.h"

namespace hammer::http {

class Http1ServerCodec final : public ServerCodec,
                               private RequestParser::Visitor,
                               private BodyStream::Producer,
                               private BodyStream::Consumer {
 public:
  // `http2_port`: the port also speaks h2c (see the file comment).
  Http1ServerCodec(Host* host, const Context& context, bool http2_port);
  ~Http1ServerCodec() override;
  Http1ServerCodec(const Http1ServerCodec&) = delete;
  Http1ServerCodec& operator=(const Http1ServerCodec&) = delete;

  // ServerCodec
  Intake intake() const override;
  size_t Receive(std::string_view input) override;
  bool half_close_allowed() const override {
    return state_ == State::kTunnel || state_ == State::kTunnelOut;
  }
  void OnInputEnd() override;
  void Produce(std::string& out, size_t limit) override;
  Outlook Look() override;
  void OnDeadline() override;
  void Drain() override;
  void Stop() override;
  size_t buffered_bytes() const override { return body_.capacity(); }
  void Respond(uint64_t sequence, int status, std::string_view content_type, std::string_view body,
               std::span<const Header> extra) override;
  void RespondRaw(uint64_t sequence, std::string_view bytes, bool keep_alive) override;
  void RespondRawThenReset(uint64_t sequence, std::string_view bytes) override;
  void RespondStream(uint64_t sequence, std::string_view head, std::shared_ptr<BodyStream> body,
                     bool keep_alive) override;
  bool KeepsAlive() const override;
  void Watch(uint64_t sequence, RequestWatcher* watcher) override;
  void OnClientGone() override;
  void RespondInterim(uint64_t sequence, int status, std::span<const Header> fields) override;

 private:
  enum class State : uint8_t { kHead, kBody, kStreamingBody, kTunnel, kTunnelOut, kServing, kDone };

  // A streamed answer being written (RespondStream).
  struct ResponseStream {
    std::shared_ptr<BodyStream> body;
    bool keep_alive = false;
  };

  // RequestParser::Visitor
  void OnHead(const RequestHead& head) override;
  void OnBody(std::string_view data) override;
  void OnTrailer(const Header& trailer) override;
  // BodyStream::Producer (the request body), BodyStream::Consumer (the answer's body)
  void OnBodyStreamDrained() override;
  void OnBodyStreamReady() override;

  void EnterHead();
  bool TakingRequests() const {
    return state_ == State::kHead || state_ == State::kBody || state_ == State::kStreamingBody ||
           state_ == State::kTunnel;
  }
  bool Answerable() const {
    return state_ == State::kServing || state_ == State::kStreamingBody ||
           state_ == State::kTunnel || state_ == State::kTunnelOut;
  }
  bool IsUpgrade(const RequestHead& head) const;
  void Dispatch();
  void Refuse(ParseError error);
  void Refuse(Rejection rejection, int status, std::string_view reason);
  void AppendResponseHead(std::string& out, int status, std::string_view content_type,
                          size_t body_size, std::span<const Header> extra, bool keep_alive);
  void Answered(bool keep_alive);
  void Finish(Ending ending);
  void StartRequestStream(std::optional<uint64_t> length);
  void EndRequestStream();
  void FailRequestStream();
  void FinishResponseStream();
  // The idle limit while bytes stream: idle_timeout, or tunnel_idle_timeout in a tunnel.
  Nanos StreamIdleTimeout() const;

  Host* host_;
  const ServerOptions& options_;
  ServerResources* resources_;
  net::EventLoop* loop_;
  const bool http2_port_;
  RequestParser parser_;
  State state_ = State::kHead;
  HeadClock head_clock_;
  MonoNanos waiting_since_ = 0;  // when kHead was entered
  MonoNanos last_moved_ = 0;     // when body or tunnel bytes last moved; 0: none yet
  uint64_t sequence_ = 0;        // the request being read or served
  // The request being read or served: its head (copied out of the input), its body when
  // buffered whole, and a refusal decided while parsing its head, acted on once Feed returns.
  RequestHead head_;
  OwnedHeaders head_copy_;
  std::string body_;
  // A chunked body's trailer fields, copied as the parser finds them (it bounds the section
  // like a head); handed over with the body, or set on its stream before it ends.
  std::vector<std::pair<std::string, std::string>> trailer_copy_;
  std::vector<Header> trailers_;
  std::span<const Header> TakeTrailers();
  std::optional<Rejection> refusal_;
  // A request body read into a stream (this codec produces it), and an answer's body written
  // from one (this codec consumes it).
  std::shared_ptr<BodyStream> request_stream_;
  std::optional<ResponseStream> response_;
  RequestWatcher* watcher_ = nullptr;  // of request sequence_, until it is answered
};

}  // namespace hammer::http
