#include "hammer/dark/comparison_join.h"

namespace hammer::dark {

ComparisonJoin::ComparisonJoin(ComparisonReport* report, JsonDiff* diff, std::string endpoint,
                               std::string request)
    : report_(report), diff_(diff), endpoint_(std::move(endpoint)), request_(std::move(request)) {}

void ComparisonJoin::Store(Answer& answer, int status, std::span<const http::Header> headers,
                           std::string_view body, int64_t micros) {
  answer.arrived = true;
  answer.status = status;
  answer.headers.Assign(headers);
  answer.body.assign(body);
  answer.micros = micros;
  MaybeFinish();
}

void ComparisonJoin::SetPrimary(int status, std::span<const http::Header> headers,
                                std::string_view body, int64_t micros) {
  Store(primary_, status, headers, body, micros);
}

void ComparisonJoin::SetDark(int status, std::span<const http::Header> headers,
                             std::string_view body, int64_t micros) {
  Store(dark_, status, headers, body, micros);
}

void ComparisonJoin::SetSecondary(int status, std::span<const http::Header> headers,
                                  std::string_view body) {
  Store(secondary_, status, headers, body, -1);
}

// One missing answer makes the request incomparable (counted, never guessed at).
void ComparisonJoin::Failed() {
  if (done_) return;
  done_ = true;
  if (dark_expected_) report_->RecordIncomplete(endpoint_);
}

void ComparisonJoin::MaybeFinish() {
  if (done_ || !primary_.arrived || !dark_expected_ || !dark_.arrived) return;
  if (secondary_expected_ && !secondary_.arrived) return;
  done_ = true;
  ResponseView primary{primary_.status, primary_.headers.headers(), primary_.body};
  ResponseView dark{dark_.status, dark_.headers.headers(), dark_.body};
  DiffResult raw = diff_->Compare(primary, dark);
  ComparedExchange exchange;
  exchange.endpoint = endpoint_;
  exchange.request = request_;
  exchange.primary_body = primary_.body;
  exchange.dark_body = dark_.body;
  exchange.primary_micros = primary_.micros;
  exchange.dark_micros = dark_.micros;
  if (secondary_expected_) {
    ResponseView secondary{secondary_.status, secondary_.headers.headers(), secondary_.body};
    DiffResult noise = diff_->Compare(primary, secondary);
    exchange.secondary_body = secondary_.body;
    report_->Record(exchange, raw, &noise);
  } else {
    report_->Record(exchange, raw, nullptr);
  }
}

}  // namespace hammer::dark
