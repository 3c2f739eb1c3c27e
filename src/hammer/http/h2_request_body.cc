#include "hammer/http/h2_request_body.h"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstring>

namespace hammer::http {

ssize_t H2RequestBody::Read(uint8_t* buf, size_t length, uint32_t* data_flags) {
  if (detached_ || ended_) {
    deferred_ = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  if (stream_ == nullptr) {
    size_t n = std::min<uint64_t>(length, whole_.size() - sent_);
    std::memcpy(buf, whole_.data() + sent_, n);
    sent_ += n;
    if (sent_ == whole_.size()) {
      ended_ = true;
      *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    }
    return static_cast<ssize_t>(n);
  }
  // A failed or cancelled stream never ends the request: its owner resets it.
  if (stream_->failed() || stream_->cancelled()) {
    deferred_ = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  std::string_view available = stream_->available();
  size_t n = std::min(length, available.size());
  if (n > 0) {
    std::memcpy(buf, available.data(), n);
    stream_->Consume(n);  // frees room: the producer reads on
    sent_ += n;
  }
  if (stream_->finished()) {
    ended_ = true;
    *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
  if (n == 0) {
    deferred_ = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  return static_cast<ssize_t>(n);
}

}  // namespace hammer::http
