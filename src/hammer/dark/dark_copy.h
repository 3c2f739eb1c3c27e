// DarkCopy: one copy of a client request sent to a dark cluster, or to the comparison
// secondary (--compare-secondary, a second regular instance). Its response is read and
// discarded, or kept (up to DarkOptions::compare_max_body_bytes) for the request's
// ComparisonJoin. A copy answered with a 5xx counts as failed (http_5xx), any other status as
// succeeded; transport failures are counted by type and feed the cluster's back-off.
//
// Ownership: created by DarkProxyHandler and owned by its InFlightSet<DarkCopy> from Send until
// OnResponseComplete, whose last act is to Finish() itself there. If the handler abandons
// copies (it stops, or the proxy drains), each is cancelled in its HttpClient and then
// Abandon()ed: counted as abandoned, its cluster's in-flight count released, its join told the
// dark answer will not come. Threading: the handler's loop thread only.
#pragma once

#include <memory>
#include <string>

#include "hammer/base/clock.h"
#include "hammer/dark/dark_metrics.h"
#include "hammer/dark/in_flight_set.h"
#include "hammer/http/client.h"
#include "hammer/http/owned_headers.h"

namespace hammer::dark {

class ComparisonJoin;
class DarkCluster;

class DarkCopy final : public http::ResponseHandler, public net::Deletable {
 public:
  // A copy to `cluster` (counted in `counters`, the cluster's slot of this loop's counters).
  DarkCopy(InFlightSet<DarkCopy>* owner, DarkCluster* cluster, ClusterCounters* counters,
           std::shared_ptr<ComparisonJoin> join, size_t compare_max_body_bytes);
  // A copy to the comparison secondary (not a dark cluster: no cluster counters).
  DarkCopy(InFlightSet<DarkCopy>* owner, std::shared_ptr<ComparisonJoin> join,
           size_t compare_max_body_bytes);

  std::string& head() { return head_; }
  std::string& body() { return body_; }

  void OnResponseHead(const http::ResponseHead& head) override;
  void OnResponseBody(std::string_view data) override;
  void OnResponseTrailers(std::span<const http::Header> trailers) override;
  void OnResponseComplete(const http::ExchangeResult& result) override;

  // The handler stopped before the answer came; the HttpClient no longer knows this copy.
  void Abandon();

 private:
  InFlightSet<DarkCopy>* owner_;
  DarkCluster* cluster_;       // null for the comparison secondary
  ClusterCounters* counters_;  // null for the comparison secondary
  std::shared_ptr<ComparisonJoin> join_;
  size_t compare_max_body_bytes_;
  MonoNanos start_;
  std::string head_;
  std::string body_;
  int status_ = 0;
  http::OwnedHeaders headers_;
  http::OwnedHeaders trailers_;
  bool grpc_ = false;  // a gRPC answer: its grpc-status judges it too
  std::string response_body_;
};

}  // namespace hammer::dark
