// ServerCodec: the protocol spoken on one accepted connection (internal to hammer/http), behind
// the ServerConnection that carries it (server_connection.h). The connection owns the transport,
// the TLS handshake, the timer, the input and output buffers, the connection slot and the
// connection's life; a codec turns the client's bytes into requests for the listener's handler
// and the handler's answers into bytes, and tells the connection which deadline runs, whether it
// waits for its client, and when the connection is to end. Http1ServerCodec speaks HTTP/1.1
// (http1_server_codec.h), H2ServerCodec HTTP/2 (h2_server_codec.h).
//
// Input: the connection reads as intake() says. kTake: bytes go to Receive as soon as they are
// read; what Receive leaves is kept by the connection and handed again, with what follows, once
// the codec takes input again. kHold: bytes are read ahead into the connection's own buffer (up
// to its cap) without being handed over. kNone: the socket is not read (back-pressure through
// TCP). The connection asks again after every call into the codec.
//
// Output: answers are appended to the connection's output buffer (Host::OutputFor); bodies that
// arrive later (streamed answers, HTTP/2 frames) are pulled: the connection calls Produce while
// its unsent output is under kOutputHighWater, so a client that reads slowly leaves the bytes
// with their producer.
//
// Calls: the connection calls its codec on the loop thread, and never into Receive or Produce
// while either is on the stack; answers (Respond...) may come inside Receive, when the handler
// answers at once. A codec calls its Host from inside any of its own methods, and Host::Wake from
// its streams' deferred wake-ups. Ownership: the connection owns its codec; the Host outlives it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "hammer/base/clock.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/message.h"
#include "hammer/http/server.h"

namespace hammer::http {

class ServerCodec {
 public:
  // How much input the codec wants now (see the file comment).
  enum class Intake : uint8_t { kTake, kHold, kNone };

  // How the connection ends (Host::End).
  enum class Ending : uint8_t {
    kAbort,       // at once; output not yet written is dropped (the client is gone)
    kBestEffort,  // write what the socket takes now, then close (a deadline passed)
    kClose,       // write the whole output, then close
    kLinger,      // write the whole output, then a lingering close: the client may still be
                  // sending, and a close with unread input would reset what it has not read
    kReset,       // write the whole output, then reset (RST): a fault for testing clients
  };

  // Whether the connection waits for its client, for eviction at the connection cap.
  enum class Waiting : uint8_t {
    kNo,    // a request is in progress
    kIdle,  // between requests: nothing of the next one has arrived
    kHead,  // a request head is awaited on a new connection, or part of one has arrived
  };

  // What the connection needs to know after every change.
  struct Outlook {
    MonoNanos deadline = 0;  // when OnDeadline is due; 0: no deadline runs
    Waiting waiting = Waiting::kNo;
    MonoNanos waiting_since = 0;  // when the waiting began (not kNo)
  };

  // What a codec may ask of the connection that carries it.
  class Host {
   public:
    // Hands a request to the listener's handler, with a Responder naming `sequence`; the
    // connection fills in the client's address.
    virtual void Dispatch(IncomingRequest& request, uint64_t sequence) = 0;
    // The output buffer, with room made for `more` bytes about to be appended.
    virtual std::string& OutputFor(size_t more) = 0;
    // Output bytes not yet written to the socket.
    virtual size_t output_pending() const = 0;
    // Input bytes the connection holds that the codec has not taken.
    virtual size_t input_buffered() const = 0;
    // The listener is draining (no keep-alive).
    virtual bool draining() const = 0;
    // The codec can make progress (a stream it feeds or drains woke it): the connection writes,
    // feeds what it holds, reads again and re-arms its deadline. Never inside a codec call.
    virtual void Wake() = 0;
    // Ends the connection as `ending` says; from here on the codec gets no more input, and
    // answers reach it only until the connection has closed.
    virtual void End(Ending ending) = 0;

   protected:
    ~Host() = default;
  };

  // What a codec is built with: the listener's options and resources, and the connection's loop
  // and accept time. Outlive the codec.
  struct Context {
    const ServerOptions* options;
    ServerResources* resources;
    net::EventLoop* loop;
    MonoNanos accepted;
  };

  virtual ~ServerCodec() = default;

  // --- Input.
  virtual Intake intake() const = 0;
  // Takes bytes from the client; returns how many it used (the connection keeps the rest).
  virtual size_t Receive(std::string_view input) = 0;
  // True while the client closing its side ends only its own direction (an HTTP/1.1 tunnel);
  // otherwise the client's FIN ends the connection.
  virtual bool half_close_allowed() const = 0;
  // The client closed its side and half_close_allowed(): no more input comes.
  virtual void OnInputEnd() = 0;

  // --- Output: appends what is ready to `out` while out.size() is under `limit`.
  virtual void Produce(std::string& out, size_t limit) = 0;

  // --- Time and eviction.
  virtual Outlook Look() = 0;
  // Outlook::deadline passed.
  virtual void OnDeadline() = 0;

  // --- The listener.
  // The listener is draining: an idle connection ends now, a busy one once its requests are
  // answered.
  virtual void Drain() = 0;
  // The connection is ending: a request body still coming fails for its consumer, an answer
  // still streaming is cancelled for its producer, and nothing more is taken or answered.
  virtual void Stop() = 0;
  // Bytes the codec holds for its client (bodies, the protocol's buffers), for the buffer charge.
  virtual size_t buffered_bytes() const = 0;

  // --- Answers, for the request named `sequence` (see Responder in server.h); a stale or
  // unknown sequence is ignored (RespondStream cancels its body).
  virtual void Respond(uint64_t sequence, int status, std::string_view content_type,
                       std::string_view body, std::span<const Header> extra) = 0;
  virtual void RespondRaw(uint64_t sequence, std::string_view bytes, bool keep_alive) = 0;
  virtual void RespondRawThenReset(uint64_t sequence, std::string_view bytes) = 0;
  virtual void RespondStream(uint64_t sequence, std::string_view head,
                             std::shared_ptr<BodyStream> body, bool keep_alive) = 0;
  // An interim answer for `sequence` (Responder::RespondInterim); ignored once the answer has
  // begun, for a status outside 102-199, and for a client that cannot take one.
  virtual void RespondInterim(uint64_t sequence, int status, std::span<const Header> fields) = 0;
  // The request's RequestWatcher (null: none), told if the client abandons the request before
  // its answer begins; an answer unregisters it. A connection the server ends itself (drain,
  // eviction, the listener going) tells no watcher: the handler sees its own shutdown.
  virtual void Watch(uint64_t sequence, RequestWatcher* watcher) = 0;
  // The client closed or broke the connection (Stop follows): every watcher is told.
  virtual void OnClientGone() = 0;
  // Whether the connection stays open after the current answer (Responder::keeps_alive).
  virtual bool KeepsAlive() const = 0;
};

}  // namespace hammer::http
