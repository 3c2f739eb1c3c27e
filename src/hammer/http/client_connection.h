// ClientConnection: one keep-alive HTTP/1.1 connection of an HttpClient (internal to it).
//
// States (one handler method each):
//   kOpening (the Connector resolves, connects, handshakes) -> kActive <-> kIdle ... -> kClosed
// kActive writes the request, then reads and parses the response. The connection carries at
// most one exchange at a time (no pipelining). Its timer enforces the exchange deadline (the
// Connector enforces the connect timeout). Owned by HttpClient; destroyed via DeleteLater.
//
// A streamed request body (ClientRequest::body_stream) is written as the stream fills: the
// connection is its consumer from BeginExchange until the exchange ends (Unbind). A bound
// ResponseFlow may pause the reading of the response (reading_paused_): input is then left in
// the socket, and resuming reads it from a deferred task.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hammer/http/client.h"
#include "hammer/http/connector.h"
#include "hammer/http/response_parser.h"
#include "hammer/net/transport.h"

namespace hammer::http {

class ClientConnection final : public net::IoHandler,
                               public net::Deletable,
                               private Connector::Owner,
                               private ResponseParser::Visitor,
                               private BodyStream::Consumer,
                               private ResponseFlow::Target {
 public:
  ClientConnection(HttpClient* client, const Origin* origin);
  ~ClientConnection() override;

  const Origin* origin() const { return origin_; }
  bool idle() const { return state_ == State::kIdle; }

  // Begins an exchange on a fresh connection (resolve, connect, then send).
  void StartFresh(const ClientRequest& request, ResponseHandler* handler, bool is_retry);
  // Begins an exchange on this idle pooled connection.
  void StartReused(const ClientRequest& request, ResponseHandler* handler);
  // Begins an exchange on a transport another connection opened (an HTTP/2 connection whose
  // server chose HTTP/1.1 in ALPN); `timings` are that connection's. The socket must already
  // be registered for this connection's events.
  void StartOnTransport(std::unique_ptr<net::Transport> transport, const ConnectTimings& timings,
                        const ClientRequest& request, ResponseHandler* handler);
  // Closes without reporting (idle connections at shutdown).
  void Close();
  // Closes without ever calling the handler of the exchange in progress (HttpClient::CancelAll).
  // True if there was one.
  bool Abandon();

  void OnIoEvents(uint32_t events) override;

  void PauseReading();
  void ResumeReading();

 private:
  // ResponseFlow::Target
  void PauseFlow() override { PauseReading(); }
  void ResumeFlow() override { ResumeReading(); }
  void AbortFlow() override { Abandon(); }

  enum class State : uint8_t { kOpening, kActive, kIdle, kClosed };

  void BeginExchange(const ClientRequest& request, ResponseHandler* handler);
  // Connector::Owner
  void OnTransportReady(std::unique_ptr<net::Transport> transport) override;
  void OnConnectFailed(Failure failure, std::string detail) override;
  void OnConnected();
  void OnWritable();
  void WriteStreamedBody();
  std::string_view NextStreamedPiece();
  bool StreamedBodyWritten() const;
  void Unbind();
  void OnReadable(bool peer_closing);
  // Reads again from the loop's deferred work, as if the peer were closing (until the socket
  // has nothing more): for input no new edge will announce.
  void ReadLater();
  void OnTimer();
  void ArmTimer();
  void HandleEof();
  bool TryStaleRetry();
  void Finish();
  void Fail(Failure failure, std::string detail);
  void CloseSocket();

  // ResponseParser::Visitor
  void OnHead(const ResponseHead& head) override;
  void OnBody(std::string_view data) override;
  void OnTrailer(const Header& trailer) override;
  void OnInterim(const ResponseHead& head) override;
  // BodyStream::Consumer
  void OnBodyStreamReady() override;

  HttpClient* client_;
  net::EventLoop* loop_;
  const Origin* origin_;
  State state_ = State::kClosed;
  Connector connector_;
  std::unique_ptr<net::Transport> transport_;
  net::Timer timer_;                                            // the exchange deadline
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // guards deferred tasks

  // The exchange in progress.
  ClientRequest request_;
  ResponseHandler* handler_ = nullptr;
  ExchangeResult result_;
  bool is_retry_ = false;
  size_t write_offset_ = 0;  // bytes of head+body already written
  bool response_keep_alive_ = true;
  // Trailer fields of the response (chunked), handed over before it completes; at most
  // kMaxTrailers are kept, each within the parser's line limit.
  std::vector<std::pair<std::string, std::string>> trailers_;
  ResponseParser parser_;
  std::string read_buffer_;
  size_t read_start_ = 0;  // unconsumed bytes are read_buffer_[read_start_, read_end_)
  size_t read_end_ = 0;
  // Streaming (see ClientRequest::body_stream and ResponseFlow).
  bool reading_paused_ = false;
  MonoNanos paused_at_ = 0;
  std::string chunk_;  // a chunk being written (unknown-length body): chunk_[chunk_sent_, size)
  size_t chunk_sent_ = 0;
  bool last_chunk_queued_ = false;
};

}  // namespace hammer::http
