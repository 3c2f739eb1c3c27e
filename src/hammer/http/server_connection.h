// ServerConnection: one accepted connection of an HttpListener (internal to hammer/http; the
// contract users see is in server.h), whatever protocol it speaks. It owns the transport and its
// TLS handshake, the timer, reading with back-pressure, the output buffer and its writing, the
// charge of its buffers to the server's BufferBudget, its slot and its place in the listener's
// ConnectionTable, eviction, draining, the lingering close and its own end. The protocol is a
// ServerCodec (server_codec.h): Http1ServerCodec, or H2ServerCodec for a client that speaks
// HTTP/2 (ALPN "h2" after the handshake, or the HTTP/2 connection preface as its first bytes on a
// cleartext listener with ServerOptions::http2 enabled).
//
// States:
//   kHandshake   TLS only: the handshake runs, under the TLS context's handshake_timeout and the
//                first head's deadline (which counts from the accept), whichever is earlier. The
//                connection waits for its client (it may be evicted at the connection cap).
//   kDetecting   cleartext with HTTP/2 enabled: the first bytes are held until they are, or
//                cannot be, the HTTP/2 preface (h2c with prior knowledge, RFC 9113 §3.3), under
//                the HTTP/1.1 codec's first-head deadline.
//   kOpen        the codec exchanges; input is read as its intake() says.
//   kPaused      the socket is not watched for input (back-pressure through TCP): the codec takes
//                none now, or the connection's own buffer is full. Reading resumes once the codec
//                takes input and the buffer has room.
//   kClosing, kClosingToLinger, kClosingWithReset
//                the codec ended the connection (ServerCodec::Ending): input is no longer read;
//                once the output is written the connection closes, lingers, or resets.
//   kLingering   the output is written and the write side shut: input is read and dropped until
//                the client closes or kLingerTime passes, so that the client sees the answers (a
//                close with unread input would reset the connection).
//   kClosed      waiting for DeleteLater.
// Transitions: kHandshake -> kDetecting | kOpen; kDetecting -> kOpen; kOpen <-> kPaused;
// kOpen | kPaused -> kClosing* -> kClosed | kLingering -> kClosed; and any state -> kClosed when
// the client is gone, a deadline passes, or the connection is evicted.
//
// Deadlines: one timer. kHandshake as above, kLingering kLingerTime; in kDetecting, kOpen and
// kPaused the codec's (ServerCodec::Outlook, asked after every change); none while closing.
//
// Input: at most kReadsPerEvent reads per readiness event, so one busy client does not hold the
// loop. What is left then, and input a TLS transport took off the socket before a pause
// (Transport::holds_input), raises no new epoll event: it is read from a deferred task of the
// loop (ReadLater), never from inside the caller. While the connection holds no input, a read
// goes into the listener's shared buffer and the codec takes it from there at once; only what
// the codec leaves (a partial head, pipelined requests) is copied into the connection's own
// buffer, so an idle connection holds none. The own buffer holds at most max_head_bytes plus one
// read (kReadChunk). A client that closes its side (EOF, or EPOLLRDHUP while reading is paused)
// ends the connection, unless the codec lets it half-close (a tunnel); a hang-up or a socket
// error ends it at once. A client that half-closes after its last request still gets the answer
// being written (kClosing*).
//
// Output: answers are appended to the output buffer and written as the socket accepts them
// (those given while the connection reads, after each read: a client that sends its last
// request and closes its side gets the answer given at once); bodies that come later are pulled
// from the codec while less than kOutputHighWater bytes wait.
// The buffers' capacities and the codec's are charged to the server's BufferBudget.
//
// Ownership: the listener's ConnectionTable owns every connection; a connection closes itself
// into DeleteLater, and its codec with it. Responders reach it through a weak token that dies
// with it. Threading: the listener's loop thread only.
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "hammer/http/buffer_budget.h"
#include "hammer/http/connection_table.h"
#include "hammer/http/server.h"
#include "hammer/http/server_codec.h"
#include "hammer/net/transport.h"

namespace hammer::http {

struct ListenerContext;

class ServerConnection final : public ConnectionTable::Entry,
                               public net::IoHandler,
                               private ServerCodec::Host {
 public:
  // `listener` outlives the connection.
  ServerConnection(ListenerContext* listener, std::unique_ptr<net::Transport> transport);
  ~ServerConnection() override;

  // Watches the socket and starts the handshake, or the wait for the first request. On an error
  // the connection is destroyed unregistered (its destructor gives its slot back).
  Status Register();
  void OnIoEvents(uint32_t events) override;

  // ConnectionTable::Entry
  void Evict() override;
  void Drain() override;

  // Responder's entry points: the codec answers the request `sequence` names. After the
  // connection has begun to close, answers are dropped (a streamed body is cancelled).
  void Respond(uint64_t sequence, int status, std::string_view content_type, std::string_view body,
               std::span<const Header> extra);
  void RespondRaw(uint64_t sequence, std::string_view bytes, bool keep_alive);
  void RespondRawThenReset(uint64_t sequence, std::string_view bytes);
  void Watch(uint64_t sequence, RequestWatcher* watcher);
  void RespondInterim(uint64_t sequence, int status, std::span<const Header> fields);
  void RespondStream(uint64_t sequence, std::string_view head, std::shared_ptr<BodyStream> body,
                     bool keep_alive);
  bool KeepsAlive() const;

 private:
  // The client closed or broke the connection: the codec tells the handlers watching requests
  // (RequestWatcher), then the connection closes.
  void ClientGone();
  // What epoll watches: input and output, or output only while reading is paused.
  static constexpr uint32_t kWatchInput = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  static constexpr uint32_t kWatchOutputOnly = EPOLLOUT | EPOLLRDHUP | EPOLLET;

  enum class State : uint8_t {
    kHandshake,
    kDetecting,
    kOpen,
    kPaused,
    kClosing,
    kClosingToLinger,
    kClosingWithReset,
    kLingering,
    kClosed
  };

  bool Exchanging() const {
    return state_ == State::kDetecting || state_ == State::kOpen || state_ == State::kPaused;
  }
  bool Closing() const {
    return state_ == State::kClosing || state_ == State::kClosingToLinger ||
           state_ == State::kClosingWithReset;
  }

  // ServerCodec::Host
  void Dispatch(IncomingRequest& request, uint64_t sequence) override;
  std::string& OutputFor(size_t more) override;
  size_t output_pending() const override { return out_.size() - out_sent_; }
  size_t input_buffered() const override { return in_end_ - in_start_; }
  bool draining() const override;
  void Wake() override { Advance(); }
  void End(ServerCodec::Ending ending) override;

  // kHandshake, and the choice of codec.
  void ContinueHandshake();
  MonoNanos HandshakeDeadline() const;
  ServerCodec::Context CodecContext() const;
  void UseHttp1(bool detect_http2);
  bool UseHttp2();
  // Input.
  void OnReadable(bool peer_closing);
  bool ReadIntoSharedBuffer(bool peer_closing);
  bool ReadIntoOwnBuffer(bool peer_closing, bool take);
  void OnReadStopped(const net::IoResult& result);
  size_t Feed(std::string_view input);
  void FeedBuffered();
  void KeepUnparsed(std::string_view rest);
  void Watch(uint32_t events);
  void Pause();
  void ResumeIfWanted();
  void ReadLater();
  // Output.
  bool Flush();
  void WriteOut();
  // After every change: write, feed what is held, read again, then Observe.
  void Advance();
  // Re-arms the deadline, keeps the waiting queue and the buffer charge up to date.
  void Observe();
  void UpdateCharge();
  void OnTimer();
  // The end.
  void FinishClosing();
  void StartLingering();
  void DrainLingering();
  void Close();

  ListenerContext* listener_;
  net::EventLoop* loop_;
  std::unique_ptr<net::Transport> transport_;
  std::unique_ptr<ServerCodec> codec_;  // none until the handshake is done
  net::Timer timer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // Responders' and tasks' token
  State state_ = State::kOpen;
  MonoNanos accepted_;
  std::string client_ip_;  // the peer's address, for X-Forwarded-For
  // IncomingRequest::connection: numbered in the order connections are accepted, by every loop.
  static std::atomic<uint64_t> next_id_;
  const uint64_t id_ = next_id_.fetch_add(1, std::memory_order_relaxed);
  // Input not taken by the codec yet: in_[in_start_, in_end_), at most input_cap_ bytes.
  std::string in_;
  size_t in_start_ = 0;
  size_t in_end_ = 0;
  const size_t input_cap_;
  // Output not yet written: out_[out_sent_, size).
  std::string out_;
  size_t out_sent_ = 0;
  BufferCharge charge_;
  bool receiving_ = false;    // inside codec_->Receive: its caller advances once it returns
  bool read_queued_ = false;  // a deferred read is queued (ReadLater)
};

}  // namespace hammer::http
