#include "hammer/dark/tapped_request.h"

#include <utility>

namespace hammer::dark {

TappedRequest::TappedRequest(InFlightSet<TappedRequest>* owner, net::EventLoop* loop,
                             const http::IncomingRequest& request, std::string_view target,
                             std::shared_ptr<ComparisonJoin> join, std::vector<Planned> planned,
                             size_t max_body_bytes, Ready ready)
    : owner_(owner),
      loop_(loop),
      client_ip_(request.client_ip),
      join_(std::move(join)),
      planned_(std::move(planned)),
      max_body_bytes_(max_body_bytes),
      ready_(std::move(ready)) {
  const std::string_view extra[] = {request.head.method, target};
  kept_.Assign(request.head.headers, extra);
  head_ = request.head;
  head_.method = kept_.Extra(0);
  head_.target = kept_.Extra(1);
  head_.headers = kept_.headers();
}

TappedRequest::~TappedRequest() {
  if (stream_ != nullptr) stream_->SetTap(nullptr);
}

bool TappedRequest::Attach(std::shared_ptr<http::BodyStream> stream) {
  stream_ = std::move(stream);
  if (stream_->SetTap(this)) return true;
  stream_.reset();
  return false;
}

void TappedRequest::OnTapped(std::string_view data) {
  if (over_limit_) return;
  if (body_.size() + data.size() > max_body_bytes_) {
    over_limit_ = true;
    std::string().swap(body_);
    return;
  }
  body_.append(data);
}

void TappedRequest::OnTapEnded(bool whole) {
  // Inside the stream's call (which has forgotten this tap): the handler hears of it from the
  // loop.
  loop_->Defer([this, alive = std::weak_ptr<bool>(alive_), whole] {
    if (!alive.expired()) ready_(*this, whole && !over_limit_);
  });
}

}  // namespace hammer::dark
