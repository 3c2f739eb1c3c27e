#include "hammer/dark/primary_exchange.h"

#include <utility>

#include "hammer/dark/comparison_join.h"
#include "hammer/dark/forwarding.h"

namespace hammer::dark {

PrimaryExchange::PrimaryExchange(InFlightSet<PrimaryExchange>* owner, ProxyCounters* counters,
                                 size_t max_response_bytes, http::Responder responder,
                                 bool head_request, std::shared_ptr<ComparisonJoin> join)
    : owner_(owner),
      counters_(counters),
      max_response_bytes_(max_response_bytes),
      responder_(std::move(responder)),
      head_request_(head_request),
      join_(std::move(join)),
      start_(MonoNow()) {}

void PrimaryExchange::OnResponseHead(const http::ResponseHead& head) {
  status_ = head.status;
  const std::string_view extra[] = {head.reason};
  headers_.Assign(head.headers, extra);
}

void PrimaryExchange::OnResponseBody(std::string_view data) {
  if (response_body_.size() + data.size() > max_response_bytes_) {
    too_large_ = true;
    return;
  }
  response_body_.append(data);
}

void PrimaryExchange::OnResponseComplete(const http::ExchangeResult& result) {
  if (result.failure || too_large_) {
    Failure failure = result.failure ? *result.failure : Failure::kProtocol;
    Bump(counters_->upstream_failed[static_cast<size_t>(failure)]);
    int status = failure == Failure::kTimeout ? 504 : 502;
    std::string body = "hammer dark: upstream " + std::string(FailureName(failure)) +
                       (too_large_ ? ": response larger than the limit" : ": " + result.detail) +
                       "\n";
    responder_.Respond(status, "text/plain", body);
    if (join_) join_->PrimaryFailed();
  } else {
    bool keep_alive = responder_.keeps_alive();
    responder_.RespondRaw(ForwardResponse(status_, headers_.Extra(0), headers_.headers(),
                                          response_body_, head_request_, keep_alive),
                          keep_alive);
    if (join_) {
      join_->SetPrimary(status_, headers_.headers(), response_body_,
                        (result.end - start_) / kMicrosecond);
    }
  }
  Bump(counters_->responses);
  owner_->Finish(this);  // last: destroyed after this loop iteration
}

}  // namespace hammer::dark
