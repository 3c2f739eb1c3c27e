#include "hammer/http/h2_request_stream.h"

#include <utility>

namespace hammer::http {

H2RequestStream::H2RequestStream(nghttp2_session* session, int32_t stream_id,
                                 std::shared_ptr<BodyStream> body, std::string_view held,
                                 std::function<void()> on_window)
    : session_(session),
      stream_id_(stream_id),
      body_(std::move(body)),
      on_window_(std::move(on_window)),
      received_(held.size()),
      acknowledged_(held.size()) {
  body_->SetProducer(this);
  body_->Append(held);
}

H2RequestStream::~H2RequestStream() {
  body_->SetProducer(nullptr);
  if (!ended_) body_->Fail();
}

void H2RequestStream::Append(std::string_view data) {
  received_ += data.size();
  if (!discarding_ && !body_->cancelled()) body_->Append(data);
  Acknowledge();  // what was consumed since the last piece (see the header), or all if cancelled
}

void H2RequestStream::End(std::span<const Header> trailers) {
  ended_ = true;
  if (!trailers.empty()) body_->SetTrailers(trailers);
  body_->End();
}

void H2RequestStream::Fail() {
  ended_ = true;
  body_->Fail();
}

void H2RequestStream::Discard() {
  if (ended_) return;  // the client has sent it all
  Fail();
  discarding_ = true;
  Acknowledge();
}

void H2RequestStream::OnBodyStreamDrained() {
  if (ended_) return;  // the window of a stream that ended is of no use
  uint64_t before = acknowledged_;
  Acknowledge();
  if (acknowledged_ != before && on_window_) on_window_();
}

void H2RequestStream::Acknowledge() {
  // Bytes held before streaming were acknowledged on arrival: consumed() catches up with them
  // first.
  uint64_t taken = discarding_ || body_->cancelled() ? received_ : body_->consumed();
  if (taken <= acknowledged_) return;
  nghttp2_session_consume_stream(session_, stream_id_, taken - acknowledged_);
  acknowledged_ = taken;
}

}  // namespace hammer::http
