#include "hammer/http/h2_session.h"

#include <sys/types.h>

namespace hammer::http {

H2Session::~H2Session() {
  nghttp2_session_del(session_);
}

Status H2Session::Receive(std::string_view bytes) {
  ssize_t n = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(bytes.data()),
                                       bytes.size());
  if (n < 0) return Status::Error(nghttp2_strerror(static_cast<int>(n)));
  return Status::Ok();
}

Status H2Session::Produce(std::string& out, size_t max_pending) {
  while (out.size() < max_pending) {
    const uint8_t* data = nullptr;
    ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) return Status::Error(nghttp2_strerror(static_cast<int>(n)));
    if (n == 0) break;
    out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
  return Status::Ok();
}

bool H2Session::wants_write() const {
  return nghttp2_session_want_write(session_) != 0;
}

bool H2Session::finished() const {
  return nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0;
}

void H2Session::Terminate(uint32_t error_code) {
  nghttp2_session_terminate_session(session_, error_code);
}

void H2Session::GoAway() {
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(session_), NGHTTP2_NO_ERROR,
                        nullptr, 0);
}

}  // namespace hammer::http
