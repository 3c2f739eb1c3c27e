// PrimaryExchange: the regular side of one client request. It carries the request to a regular
// upstream through the handler's HttpClient, keeps the response (up to
// DarkOptions::max_response_bytes), and answers the client through its Responder: the
// upstream's response unchanged (hop-by-hop headers aside), or 502 (unreachable, reset,
// invalid, too large) / 504 (timeout) with the failure counted. With --compare it also hands
// the primary answer to the request's ComparisonJoin.
//
// Ownership: created by DarkProxyHandler and owned by its InFlightSet<PrimaryExchange> from
// Send until OnResponseComplete, whose last act is to Finish() itself there (destroyed after
// the loop iteration). If the handler stops first, the exchange is cancelled in the HttpClient
// and destroyed without answering (counted as abandoned by the handler). The request bytes it
// owns (head(), body()) stay valid as long as it lives, as HttpClient::Send requires.
// Threading: the handler's loop thread only.
#pragma once

#include <memory>
#include <string>

#include "hammer/base/clock.h"
#include "hammer/dark/dark_metrics.h"
#include "hammer/dark/in_flight_set.h"
#include "hammer/http/client.h"
#include "hammer/http/owned_headers.h"
#include "hammer/http/server.h"

namespace hammer::dark {

class ComparisonJoin;

class PrimaryExchange final : public http::ResponseHandler, public net::Deletable {
 public:
  PrimaryExchange(InFlightSet<PrimaryExchange>* owner, ProxyCounters* counters,
                  size_t max_response_bytes, http::Responder responder, bool head_request,
                  std::shared_ptr<ComparisonJoin> join);

  // The serialized request to send (owned here so it outlives the exchange).
  std::string& head() { return head_; }
  std::string& body() { return body_; }

  void OnResponseHead(const http::ResponseHead& head) override;
  void OnResponseBody(std::string_view data) override;
  void OnResponseComplete(const http::ExchangeResult& result) override;

 private:
  InFlightSet<PrimaryExchange>* owner_;
  ProxyCounters* counters_;
  size_t max_response_bytes_;
  http::Responder responder_;
  bool head_request_;
  std::shared_ptr<ComparisonJoin> join_;
  MonoNanos start_;
  std::string head_;
  std::string body_;
  int status_ = 0;
  bool too_large_ = false;
  http::OwnedHeaders headers_;  // Extra(0) = reason phrase
  std::string response_body_;
};

}  // namespace hammer::dark
