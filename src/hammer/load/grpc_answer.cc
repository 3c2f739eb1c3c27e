#include "hammer/load/grpc_answer.h"

#include <array>
#include <charconv>
#include <utility>

namespace hammer::load {

namespace {

constexpr std::array<std::string_view, kGrpcStatusCodes> kStatusNames = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool IsGrpcRequest(const http::HeaderList& headers) {
  for (const auto& [name, value] : headers) {
    if (!http::EqualsIgnoreCase(name, "Content-Type")) continue;
    std::string_view type = value;
    constexpr std::string_view kGrpc = "application/grpc";
    return type.size() >= kGrpc.size() &&
           http::EqualsIgnoreCase(type.substr(0, kGrpc.size()), kGrpc) &&
           (type.size() == kGrpc.size() || type[kGrpc.size()] == '+' || type[kGrpc.size()] == ';');
  }
  return false;
}

std::string_view GrpcStatusName(uint32_t code) {
  return code < kStatusNames.size() ? kStatusNames[code] : std::string_view();
}

std::string PercentDecodeGrpcMessage(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '%' && i + 2 < value.size() && HexValue(value[i + 1]) >= 0 &&
        HexValue(value[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(value[i + 1]) * 16 + HexValue(value[i + 2])));
      i += 2;
    } else {
      out.push_back(value[i]);
    }
  }
  return out;
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
    counted.emplace_back(code < kGrpcStatusCodes ? GrpcStatusName(code) : "other", by_code[code]);
  }
  return counted;
}

void GrpcAnswer::KeepStatus(std::span<const http::Header> fields) {
  if (auto status = http::FindHeader(fields, "grpc-status")) status_.emplace(*status);
  if (auto message = http::FindHeader(fields, "grpc-message")) message_.assign(*message);
}

std::optional<uint32_t> GrpcAnswer::status() const {
  if (!status_ || status_->empty() || status_->size() > 10) return std::nullopt;
  uint32_t code = 0;
  const char* end = status_->data() + status_->size();
  auto [stop, error] = std::from_chars(status_->data(), end, code);
  if (error != std::errc() || stop != end) return std::nullopt;
  return code;
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
    if (std::string_view name = GrpcStatusName(*code); !name.empty())
      detail.append(" ").append(name);
    if (!message_.empty()) {
      std::string message = PercentDecodeGrpcMessage(message_);
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
