// RequestSlot: one simulated user's request in flight. It sends a PreparedRequest through the
// HttpClient, follows redirects (the latency of a request includes them; a cycle or more than
// max_redirects is a redirect_loop failure), keeps the user's cookies when asked, checks the
// body against the error pattern, and judges the outcome: success, or exactly one Failure. A
// gRPC call (PreparedRequest::grpc) is then judged by its GrpcAnswer: grpc-status 0 succeeds,
// another is a grpc_status failure, a missing status or a malformed body a protocol failure.
//
// Owned by a LoadWorker, used on its loop only. Start() must not be called while a request is
// in flight; the owner is called back exactly once per Start(), never from inside Start().
#pragma once

#include <re2/re2.h>

#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hammer/http/client.h"
#include "hammer/load/body_matcher.h"
#include "hammer/load/grpc_answer.h"
#include "hammer/load/prepared_request.h"

namespace hammer::http {
class CookieJar;
}

namespace hammer::load {

struct SlotOptions {
  Nanos timeout = 30 * kSecond;  // per hop
  int max_redirects = 10;        // 0: 3xx responses are final
  bool cookies = false;          // keep a cookie jar across this slot's requests
  const re2::RE2* error_pattern = nullptr;
  bool empty_body_is_error = false;
  bool http2 = false;  // requests go over HTTP/2 (--http2); a failed gRPC call says it needs it
  const http::HeaderList* headers = nullptr;     // added to redirect hops too
  std::atomic<int64_t>* verbose_left = nullptr;  // requests still to print (--verbose)
};

struct RequestOutcome {
  std::optional<Failure> failure;
  std::string detail;  // why it failed
  int status = 0;      // final HTTP status, 0 if none
  int redirects = 0;
  MonoNanos intended = 0;  // due time (open loop) or send time
  MonoNanos sent = 0;      // actual send time of the first hop
  MonoNanos end = 0;
  Nanos connect_time = 0;    // TCP connect of a new connection (0 when reused)
  Nanos handshake_time = 0;  // TLS handshake of a new connection (0 when none)
  uint64_t body_bytes = 0;
  std::optional<uint32_t> grpc_status;  // a gRPC call's grpc-status, when one came
};

class RequestSlot final : public http::ResponseHandler {
 public:
  class Owner {
   public:
    virtual ~Owner() = default;
    virtual void OnRequestDone(RequestSlot* slot, const RequestOutcome& outcome) = 0;
  };

  RequestSlot(Owner* owner, http::HttpClient* client, const SlotOptions* options);
  ~RequestSlot() override;

  // Sends `request` (which must stay valid until the owner is called back). `intended` is the
  // due time in open loop, 0 in closed loop (then the send time counts).
  void Start(const PreparedRequest* request, MonoNanos intended);

  const PreparedRequest* request() const { return request_; }
  // Storage for a request the worker could not cache; valid while this slot uses it.
  PreparedRequest* scratch() { return &scratch_; }

  void OnResponseHead(const http::ResponseHead& head) override;
  void OnResponseBody(std::string_view data) override;
  void OnResponseTrailers(std::span<const http::Header> trailers) override;
  void OnResponseComplete(const http::ExchangeResult& result) override;

 private:
  void SendHop(const PreparedRequest& hop);
  bool FollowRedirect(RequestOutcome& outcome);
  void Judge(const http::ExchangeResult& result, RequestOutcome& outcome) const;

  Owner* owner_;
  http::HttpClient* client_;
  const SlotOptions* options_;
  BodyMatcher matcher_;
  std::unique_ptr<http::CookieJar> jar_;  // --cookies: this simulated user's cookies

  const PreparedRequest* request_ = nullptr;  // what the user asked for (the key's request)
  const PreparedRequest* current_ = nullptr;  // the hop in flight
  PreparedRequest scratch_;
  PreparedRequest hop_;  // the latest redirect hop
  std::string head_with_cookies_;
  std::vector<std::string> visited_;  // URLs of this request's redirect chain
  RequestOutcome outcome_;
  std::string location_;
  bool check_body_ = false;
  GrpcAnswer grpc_;       // the hop's answer, when it is a gRPC call
  bool logging_ = false;  // --verbose: this request's exchange is printed
  std::string log_;
};

}  // namespace hammer::load
