// H2RequestStream: the producer side of one HTTP/2 request body that the server passes on as it
// arrives (H2ServerSession, Settings::stream_body_above) instead of holding it whole. DATA goes
// into a BodyStream, and the stream's flow-control window (RFC 9113 §5.2) is reopened only for
// the bytes the BodyStream's consumer has taken: a slow consumer (the dark proxy's upstream)
// stops the client at its stream window, as a full BodyStream stops an HTTP/1.1 connection
// reading its socket. The connection's window is the session's business (reopened at once, so
// one slow body does not stall the connection's other streams).
//
// Why the BodyStream's window is half the stream's (`window_bytes` / 2): nghttp2 sends
// WINDOW_UPDATE once half the stream window has been consumed, and the consumer wakes the
// producer only when the stream drops below its window. With a client out of window, more than
// half of the window waits in the BodyStream (the rest is below nghttp2's threshold), so the
// stream is full; by the time it is below half again, more than half the window has been
// consumed and WINDOW_UPDATE goes out. What waits is bounded by the stream window, plus the
// bytes held before the body was found to be large (at most the threshold and one frame).
//
// Errors: the consumer may cancel the body (the upstream answered or failed), or the request be
// answered before its body ended (Discard): what arrives from then on is dropped and its window
// reopened at once, so the client can finish sending. The owner fails the body when the stream ends
// before END_STREAM (the client reset it, the connection closed): destroying an unended
// H2RequestStream fails its body.
//
// Ownership: the session's stream owns it; the BodyStream is shared with its consumer. The
// nghttp2 session must outlive it. `on_window` is called after a deferred wake-up reopened the
// window (the owner then writes the WINDOW_UPDATE out). Threading: the connection's loop.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "hammer/http/body_stream.h"

namespace hammer::http {

class H2RequestStream final : public BodyStream::Producer {
 public:
  // `held`: bytes that arrived before the body was found to be large (their window was reopened
  // already); they are appended first.
  H2RequestStream(nghttp2_session* session, int32_t stream_id, std::shared_ptr<BodyStream> body,
                  std::string_view held, std::function<void()> on_window);
  ~H2RequestStream() override;
  H2RequestStream(const H2RequestStream&) = delete;
  H2RequestStream& operator=(const H2RequestStream&) = delete;

  // DATA arrived on the stream.
  void Append(std::string_view data);
  // END_STREAM arrived: the body is whole, followed by `trailers` (none: empty).
  void End(std::span<const Header> trailers = {});
  // The stream ended before END_STREAM: nothing more comes.
  void Fail();
  // The request was answered: a body not ended yet fails for its consumer, and what arrives
  // from now on is dropped, its window reopened at once, as an HTTP/1.1 connection stops
  // reading a body answered early (HTTP/2 cannot close the connection for one stream).
  void Discard();
  bool ended() const { return ended_; }
  // Bytes of the body received so far (`held` included).
  uint64_t received() const { return received_; }
  const std::shared_ptr<BodyStream>& body() const { return body_; }

  // BodyStream::Producer: the consumer made room, or cancelled.
  void OnBodyStreamDrained() override;

 private:
  // Reopens the stream window for what the consumer took (all that arrived, once cancelled).
  void Acknowledge();

  nghttp2_session* session_;
  int32_t stream_id_;
  std::shared_ptr<BodyStream> body_;
  std::function<void()> on_window_;
  uint64_t received_ = 0;
  uint64_t acknowledged_ = 0;  // bytes whose window was reopened
  bool ended_ = false;
  bool discarding_ = false;
};

}  // namespace hammer::http
