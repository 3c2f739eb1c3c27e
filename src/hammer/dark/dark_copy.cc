#include "hammer/dark/dark_copy.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "hammer/dark/comparison_join.h"
#include "hammer/dark/dark_cluster.h"
#include "hammer/http/grpc_wire.h"

namespace hammer::dark {

DarkCopy::DarkCopy(InFlightSet<DarkCopy>* owner, DarkCluster* cluster, ClusterCounters* counters,
                   std::shared_ptr<ComparisonJoin> join, size_t compare_max_body_bytes)
    : owner_(owner),
      cluster_(cluster),
      counters_(counters),
      join_(std::move(join)),
      compare_max_body_bytes_(compare_max_body_bytes),
      start_(MonoNow()) {}

DarkCopy::DarkCopy(InFlightSet<DarkCopy>* owner, std::shared_ptr<ComparisonJoin> join,
                   size_t compare_max_body_bytes)
    : DarkCopy(owner, nullptr, nullptr, std::move(join), compare_max_body_bytes) {}

void DarkCopy::OnResponseHead(const http::ResponseHead& head) {
  status_ = head.status;
  grpc_ = http::IsGrpc(head.headers);
  if (join_ || grpc_) headers_.Assign(head.headers);
}

void DarkCopy::OnResponseTrailers(std::span<const http::Header> trailers) {
  trailers_.Assign(trailers);
}

void DarkCopy::OnResponseBody(std::string_view data) {
  if (!join_) return;  // discarded
  size_t room = compare_max_body_bytes_ - std::min(compare_max_body_bytes_, response_body_.size());
  response_body_.append(data.substr(0, room));
}

void DarkCopy::OnResponseComplete(const http::ExchangeResult& result) {
  if (cluster_ != nullptr) {
    std::optional<Failure> failure = result.failure;
    if (!failure && status_ >= 500) failure = Failure::kHttp5xx;
    if (!failure && grpc_) {
      // The status comes in the trailers, or alone in the head (Trailers-Only).
      std::optional<uint32_t> code = http::GrpcStatusOf(trailers_.headers());
      if (!code) code = http::GrpcStatusOf(headers_.headers());
      if (!code) {
        failure = Failure::kProtocol;
      } else if (http::GrpcStatusIsServerError(*code)) {
        failure = Failure::kGrpcStatus;
      }
    }
    if (failure) {
      Bump(counters_->failed[static_cast<size_t>(*failure)]);
    } else {
      Bump(counters_->succeeded);
    }
    Drop(counters_->in_flight);
    cluster_->CopyEnded(result.failure);
  }
  if (join_) {
    int64_t micros = (result.end - start_) / kMicrosecond;
    if (result.failure) {
      cluster_ == nullptr ? join_->SecondaryFailed() : join_->DarkFailed(cluster_->index());
    } else if (cluster_ == nullptr) {
      join_->SetSecondary(status_, headers_.headers(), response_body_, trailers_.headers());
    } else {
      join_->SetDark(cluster_->index(), status_, headers_.headers(), response_body_, micros,
                     trailers_.headers());
    }
  }
  owner_->Finish(this);  // last: destroyed after this loop iteration
}

void DarkCopy::Abandon() {
  if (cluster_ != nullptr) {
    Bump(counters_->abandoned);
    Drop(counters_->in_flight);
    cluster_->CopyAbandoned();
  }
  if (join_) cluster_ == nullptr ? join_->SecondaryFailed() : join_->DarkNotSent(cluster_->index());
}

}  // namespace hammer::dark
