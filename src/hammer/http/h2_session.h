// H2Session: what both sides of an HTTP/2 connection share, as libnghttp2 runs it without any
// I/O: bytes the peer sent go in (Receive), bytes to send come out (Produce). Framing, HPACK,
// flow control, stream states and the protocol's checks (RFC 9113, RFC 7541) are nghttp2's,
// Debian's libnghttp2 (the library h2load, curl and nghttpx are built on); hammer writes none
// of them. The connection that owns a session moves bytes between it and its transport: the
// same transport and event loop as HTTP/1.1 (h2load's split between a client's socket and its
// protocol session).
//
// Output is pulled: Produce appends frames only while the caller's buffer holds less than
// `max_pending` bytes, so a peer that stops reading leaves data in nghttp2's flow-control
// windows and the handlers' bodies, never in an ever-growing output buffer.
//
// Threading: one connection's loop thread. Not copyable; owns its nghttp2_session.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer::http {

class H2Session {
 public:
  virtual ~H2Session();
  H2Session(const H2Session&) = delete;
  H2Session& operator=(const H2Session&) = delete;

  // Hands the session bytes read from the peer. An error means the connection is unusable
  // (nghttp2 found a connection error it could not even answer with GOAWAY, or the peer
  // flooded it); the owner closes it. A connection error that nghttp2 answers with GOAWAY is
  // not an error here: the GOAWAY comes out of Produce and finished() turns true.
  Status Receive(std::string_view bytes);
  // Appends frames ready to send to `out` until it holds `max_pending` bytes or nothing is
  // left. An error (out of memory, a callback failure) means the connection is unusable.
  Status Produce(std::string& out, size_t max_pending = 64 * 1024);
  // True when the session has frames to send (Produce would append something).
  bool wants_write() const;
  // True when neither side will exchange anything more (after a GOAWAY both ways, or a fatal
  // error): the owner closes the connection once its output is written.
  bool finished() const;
  // Ends the connection at once: GOAWAY with `error_code`; streams in flight are dropped.
  void Terminate(uint32_t error_code);
  // Graceful end: GOAWAY (NO_ERROR) naming the last stream the peer started; streams up to it
  // finish normally, later ones are refused (the peer may retry them elsewhere).
  void GoAway();

 protected:
  H2Session() = default;
  nghttp2_session* session_ = nullptr;
};

}  // namespace hammer::http
