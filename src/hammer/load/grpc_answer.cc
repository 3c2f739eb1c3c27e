#include "hammer/load/grpc_answer.h"

#include <utility>

namespace hammer::load {

bool IsGrpcRequest(const http::HeaderList& headers) {
  for (const auto& [name, value] : headers) {
    if (http::EqualsIgnoreCase(name, "Content-Type")) return http::IsGrpcContentType(value);
  }
  return false;
}

uint64_t GrpcStatusCounts::total() const {
  uint64_t sum = 0;
  for (uint64_t n : by_code)
    sum += n;
  return sum;
}

std::vector<std::pair<std::string_view, uint64_t>> GrpcStatusCounts::Counted() const {
  std::vector<std::pair<std::string_view, uint64_t>> counted;
  for (uint32_t code = 0; code < by_code.size(); ++code) {
    if (by_code[code] == 0) continue;
    counted.emplace_back(code < http::kGrpcStatusCodes ? http::GrpcStatusName(code) : "other",
                         by_code[code]);
  }
  return counted;
}

void GrpcAnswer::KeepStatus(std::span<const http::Header> fields) {
  if (auto status = http::FindHeader(fields, "grpc-status")) status_.emplace(*status);
  if (auto message = http::FindHeader(fields, "grpc-message")) message_.assign(*message);
}

std::optional<uint32_t> GrpcAnswer::status() const {
  return status_ ? http::ParseGrpcStatus(*status_) : std::nullopt;
}

std::optional<GrpcFailure> GrpcAnswer::Judge() const {
  if (!status_) return GrpcFailure{Failure::kProtocol, "gRPC answer without grpc-status"};
  std::optional<uint32_t> code = status();
  if (!code) {
    return GrpcFailure{Failure::kProtocol,
                       "grpc-status '" + status_->substr(0, 32) + "' is not a status code"};
  }
  if (*code != 0) {
    std::string detail = "grpc-status " + std::to_string(*code);
    if (std::string_view name = http::GrpcStatusName(*code); !name.empty())
      detail.append(" ").append(name);
    if (!message_.empty()) {
      std::string message = http::PercentDecodeGrpcMessage(message_);
      if (message.size() > kMaxMessageBytes) message.resize(kMaxMessageBytes);
      detail.append(": ").append(message);
    }
    return GrpcFailure{Failure::kGrpcStatus, std::move(detail)};
  }
  if (messages_.malformed()) {
    return GrpcFailure{Failure::kProtocol, "gRPC body: a message flag byte is neither 0 nor 1"};
  }
  if (!messages_.complete()) {
    return GrpcFailure{Failure::kProtocol, "gRPC body ends inside a length-prefixed message"};
  }
  return std::nullopt;
}

}  // namespace hammer::load
