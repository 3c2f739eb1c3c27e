// ComparisonJoin: gathers the answers to one forked request — primary, the compared copy of each
// dark cluster and (with --compare-secondary) a second regular instance — and, once every
// expected answer has settled, records each dark cluster's side of it in that cluster's
// ComparisonReport: the pair's outcome (who failed, successful latencies) and, when primary,
// dark and secondary all succeeded, their diff. The noise diff (primary vs secondary) is made
// once and shared by the clusters. Shared (shared_ptr) by the exchanges that carry the answers;
// never awaited by the client's response. Loop thread only.
//
// A failure is a transport failure or a status of 500 or more, or for gRPC a grpc-status that is
// the server's fault (http::GrpcStatusIsServerError); a dark gRPC answer whose grpc-status is not
// the primary's is a failure of the dark side too. A copy that was never sent (a
// full in-flight budget, the proxy stopping) makes the request incomplete for that cluster,
// since the dark side was not asked; a copy refused while the cluster is being backed off is a
// dark failure, since the cluster refused the connections that caused the back-off.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/dark/comparison_report.h"
#include "hammer/dark/json_diff.h"
#include "hammer/http/grpc_wire.h"
#include "hammer/http/owned_headers.h"

namespace hammer::dark {

class ComparisonJoin {
 public:
  ComparisonJoin(JsonDiff* diff, std::string endpoint, std::string request);

  // The copy sent to dark cluster `cluster` (its registry index) is compared and recorded in
  // `report`. Call every ExpectDark and ExpectSecondary before any answer can arrive (answers
  // are never delivered inline, so: while handling the request).
  void ExpectDark(size_t cluster, ComparisonReport* report);
  void ExpectSecondary() { secondary_expected_ = true; }
  bool dark_expected() const { return !darks_.empty(); }

  // `trailers` (gRPC's grpc-status among them) are kept with the headers.
  void SetPrimary(int status, std::span<const http::Header> headers, std::string_view body,
                  int64_t micros, std::span<const http::Header> trailers = {});
  void PrimaryFailed();
  void SetDark(size_t cluster, int status, std::span<const http::Header> headers,
               std::string_view body, int64_t micros, std::span<const http::Header> trailers = {});
  void DarkFailed(size_t cluster);
  void DarkNotSent(size_t cluster);
  void SetSecondary(int status, std::span<const http::Header> headers, std::string_view body,
                    std::span<const http::Header> trailers = {});
  void SecondaryFailed();

 private:
  enum class State : uint8_t { kWaiting, kAnswered, kFailed, kNotSent };
  struct Answer {
    State state = State::kWaiting;
    int status = 0;
    http::OwnedHeaders headers;
    std::string body;
    int64_t micros = -1;
    std::optional<uint32_t> grpc_status;  // of a gRPC answer
    bool succeeded() const {
      return state == State::kAnswered && status < 500 &&
             !(grpc_status && http::GrpcStatusIsServerError(*grpc_status));
    }
  };
  struct DarkAnswer {
    size_t cluster = 0;
    ComparisonReport* report = nullptr;
    Answer answer;
  };
  void Store(Answer& answer, int status, std::span<const http::Header> headers,
             std::span<const http::Header> trailers, std::string_view body, int64_t micros);
  void Settle(Answer& answer, State state);
  Answer* DarkFor(size_t cluster);
  void MaybeFinish();
  void Record(DarkAnswer& dark, const DiffResult* noise);

  JsonDiff* diff_;
  std::string endpoint_;
  std::string request_;
  bool secondary_expected_ = false;
  bool done_ = false;
  Answer primary_, secondary_;
  std::vector<DarkAnswer> darks_;  // one per compared cluster
};

}  // namespace hammer::dark
