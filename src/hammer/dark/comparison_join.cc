#include "hammer/dark/comparison_join.h"

#include <optional>
#include <utility>
#include <vector>

#include "hammer/base/clock.h"

namespace hammer::dark {

ComparisonJoin::ComparisonJoin(JsonDiff* diff, std::string endpoint, std::string request)
    : diff_(diff), endpoint_(std::move(endpoint)), request_(std::move(request)) {}

void ComparisonJoin::ExpectDark(size_t cluster, ComparisonReport* report) {
  darks_.push_back(DarkAnswer{cluster, report, {}});
}

ComparisonJoin::Answer* ComparisonJoin::DarkFor(size_t cluster) {
  for (DarkAnswer& dark : darks_) {
    if (dark.cluster == cluster) return &dark.answer;
  }
  return nullptr;
}

void ComparisonJoin::Store(Answer& answer, int status, std::span<const http::Header> headers,
                           std::span<const http::Header> trailers, std::string_view body,
                           int64_t micros) {
  if (answer.state != State::kWaiting) return;
  answer.state = State::kAnswered;
  answer.status = status;
  if (trailers.empty()) {
    answer.headers.Assign(headers);
  } else {
    std::vector<http::Header> fields(headers.begin(), headers.end());
    fields.insert(fields.end(), trailers.begin(), trailers.end());
    answer.headers.Assign(fields);
  }
  if (http::IsGrpc(answer.headers.headers())) {
    answer.grpc_status = http::GrpcStatusOf(answer.headers.headers());
  }
  answer.body.assign(body);
  answer.micros = micros;
  MaybeFinish();
}

void ComparisonJoin::Settle(Answer& answer, State state) {
  if (answer.state != State::kWaiting) return;
  answer.state = state;
  MaybeFinish();
}

void ComparisonJoin::SetPrimary(int status, std::span<const http::Header> headers,
                                std::string_view body, int64_t micros,
                                std::span<const http::Header> trailers) {
  Store(primary_, status, headers, trailers, body, micros);
}

void ComparisonJoin::PrimaryFailed() {
  Settle(primary_, State::kFailed);
}

void ComparisonJoin::SetDark(size_t cluster, int status, std::span<const http::Header> headers,
                             std::string_view body, int64_t micros,
                             std::span<const http::Header> trailers) {
  if (Answer* dark = DarkFor(cluster)) Store(*dark, status, headers, trailers, body, micros);
}

void ComparisonJoin::DarkFailed(size_t cluster) {
  if (Answer* dark = DarkFor(cluster)) Settle(*dark, State::kFailed);
}

void ComparisonJoin::DarkNotSent(size_t cluster) {
  if (Answer* dark = DarkFor(cluster)) Settle(*dark, State::kNotSent);
}

void ComparisonJoin::SetSecondary(int status, std::span<const http::Header> headers,
                                  std::string_view body, std::span<const http::Header> trailers) {
  Store(secondary_, status, headers, trailers, body, -1);
}

void ComparisonJoin::SecondaryFailed() {
  Settle(secondary_, State::kFailed);
}

void ComparisonJoin::MaybeFinish() {
  if (done_ || darks_.empty() || primary_.state == State::kWaiting) return;
  if (secondary_expected_ && secondary_.state == State::kWaiting) return;
  for (const DarkAnswer& dark : darks_) {
    if (dark.answer.state == State::kWaiting) return;
  }
  done_ = true;
  // The noise diff is needed as soon as one cluster's answer can be compared.
  std::optional<DiffResult> noise;
  if (secondary_expected_ && primary_.succeeded() && secondary_.succeeded()) {
    ResponseView primary{primary_.status, primary_.headers.headers(), primary_.body};
    ResponseView secondary{secondary_.status, secondary_.headers.headers(), secondary_.body};
    noise = diff_->Compare(primary, secondary);
  }
  for (DarkAnswer& dark : darks_)
    Record(dark, noise ? &*noise : nullptr);
}

void ComparisonJoin::Record(DarkAnswer& dark, const DiffResult* noise) {
  const Answer& answer = dark.answer;
  if (answer.state == State::kNotSent) {
    dark.report->RecordIncomplete(endpoint_);
    return;
  }
  PairOutcome outcome;
  outcome.primary_failed = !primary_.succeeded();
  // A gRPC call that ends otherwise on the dark side has failed there, whatever the codes.
  outcome.dark_failed = !answer.succeeded() ||
                        (primary_.state == State::kAnswered && primary_.grpc_status.has_value() &&
                         answer.grpc_status != primary_.grpc_status);
  outcome.primary_micros = primary_.micros;
  outcome.dark_micros = answer.micros;
  outcome.settled_at = MonoNow();
  // Failures are judged as failures, not diffed; without the secondary's answer there is no
  // noise reference for this request.
  bool comparable = !outcome.primary_failed && !outcome.dark_failed;
  outcome.uncompared = comparable && secondary_expected_ && noise == nullptr;
  dark.report->RecordPair(endpoint_, outcome);
  if (!comparable || outcome.uncompared) return;
  ResponseView primary{primary_.status, primary_.headers.headers(), primary_.body};
  ResponseView candidate{answer.status, answer.headers.headers(), answer.body};
  DiffResult raw = diff_->Compare(primary, candidate);
  ComparedExchange exchange;
  exchange.endpoint = endpoint_;
  exchange.request = request_;
  exchange.primary_body = primary_.body;
  exchange.dark_body = answer.body;
  if (noise != nullptr) exchange.secondary_body = secondary_.body;
  dark.report->Record(exchange, raw, noise);
}

}  // namespace hammer::dark
