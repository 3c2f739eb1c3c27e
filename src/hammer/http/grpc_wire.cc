#include "hammer/http/grpc_wire.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <iterator>

namespace hammer::http {

namespace {

constexpr std::string_view kStatusNames[] = {
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

bool IsGrpcContentType(std::string_view type) {
  constexpr std::string_view kGrpc = "application/grpc";
  return type.size() >= kGrpc.size() && EqualsIgnoreCase(type.substr(0, kGrpc.size()), kGrpc) &&
         (type.size() == kGrpc.size() || type[kGrpc.size()] == '+' || type[kGrpc.size()] == ';');
}

bool IsGrpc(std::span<const Header> headers) {
  std::optional<std::string_view> type = FindHeader(headers, "content-type");
  return type && IsGrpcContentType(*type);
}

std::string_view GrpcStatusName(uint32_t code) {
  return code < std::size(kStatusNames) ? kStatusNames[code] : std::string_view();
}

std::optional<uint32_t> ParseGrpcStatus(std::string_view value) {
  if (value.empty() || value.size() > 10) return std::nullopt;
  uint64_t code = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    code = code * 10 + static_cast<uint64_t>(c - '0');
  }
  if (code > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(code);
}

std::optional<uint32_t> GrpcStatusOf(std::span<const Header> fields) {
  std::optional<std::string_view> last;
  for (const Header& field : fields) {
    if (EqualsIgnoreCase(field.name, "grpc-status")) last = field.value;
  }
  return last ? ParseGrpcStatus(*last) : std::nullopt;
}

bool GrpcStatusIsServerError(uint32_t code) {
  return code == 2 || code == 4 || code == 12 || code == 13 || code == 14 || code == 15;
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

std::string PercentEncodeGrpcMessage(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<uint8_t>(c);
    if (byte >= 0x20 && byte <= 0x7e && c != '%') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xf]);
    }
  }
  return out;
}

std::optional<int64_t> ParseGrpcTimeout(std::string_view value) {
  if (value.size() < 2 || value.size() > 9) return std::nullopt;
  int64_t amount = 0;
  for (char c : value.substr(0, value.size() - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    amount = amount * 10 + (c - '0');
  }
  int64_t unit = 0;
  switch (value.back()) {
    case 'H':
      unit = 3'600'000'000'000;
      break;
    case 'M':
      unit = 60'000'000'000;
      break;
    case 'S':
      unit = 1'000'000'000;
      break;
    case 'm':
      unit = 1'000'000;
      break;
    case 'u':
      unit = 1'000;
      break;
    case 'n':
      unit = 1;
      break;
    default:
      return std::nullopt;
  }
  // 99,999,999 hours would pass 64 bits of nanoseconds: such a timeout is forever anyway.
  constexpr int64_t kForever = INT64_MAX / 2;
  return amount > kForever / unit ? kForever : amount * unit;
}

std::optional<std::vector<std::string_view>> SplitGrpcMessages(std::string_view body,
                                                               bool* compressed) {
  std::vector<std::string_view> messages;
  if (compressed != nullptr) *compressed = false;
  while (!body.empty()) {
    if (body.size() < GrpcMessageReader::kPrefixBytes) return std::nullopt;
    const auto byte = [&body](size_t i) { return static_cast<uint8_t>(body[i]); };
    if (byte(0) > 1) return std::nullopt;
    if (byte(0) == 1 && compressed != nullptr) *compressed = true;
    const uint64_t length = uint64_t{byte(1)} << 24 | uint64_t{byte(2)} << 16 |
                            uint64_t{byte(3)} << 8 | uint64_t{byte(4)};
    body.remove_prefix(GrpcMessageReader::kPrefixBytes);
    if (length > body.size()) return std::nullopt;
    messages.push_back(body.substr(0, length));
    body.remove_prefix(length);
  }
  return messages;
}

void GrpcMessageReader::Feed(std::string_view data) {
  while (!data.empty() && !malformed_) {
    if (message_left_ > 0) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(message_left_, data.size()));
      message_left_ -= take;
      data.remove_prefix(take);
      if (message_left_ == 0) ++messages_;
      continue;
    }
    const size_t take = std::min(kPrefixBytes - prefix_bytes_, data.size());
    std::copy_n(data.begin(), take, prefix_ + prefix_bytes_);
    prefix_bytes_ += take;
    data.remove_prefix(take);
    if (prefix_bytes_ < kPrefixBytes) return;
    prefix_bytes_ = 0;
    if (prefix_[0] > 1) {
      malformed_ = true;
      return;
    }
    message_left_ = uint64_t{prefix_[1]} << 24 | uint64_t{prefix_[2]} << 16 |
                    uint64_t{prefix_[3]} << 8 | uint64_t{prefix_[4]};
    if (message_left_ == 0) ++messages_;  // an empty message (a protobuf with every field unset)
  }
}

}  // namespace hammer::http
