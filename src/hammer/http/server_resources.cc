#include "hammer/http/server_resources.h"

#include <algorithm>

#include "hammer/base/open_file_limit.h"

namespace hammer::http {

namespace {
// Descriptors kept for everything that is not a client connection (listeners, epoll, timer and
// event descriptors per loop, the resolver, ZooKeeper, log files).
constexpr uint64_t kReservedDescriptors = 64;
constexpr uint64_t kMinimumConnections = 16;
}  // namespace

std::string_view RejectionName(Rejection rejection) {
  switch (rejection) {
    case Rejection::kConnectionLimit:
      return "connection_limit";
    case Rejection::kEvicted:
      return "evicted";
    case Rejection::kOutOfDescriptors:
      return "out_of_descriptors";
    case Rejection::kHeaderTimeout:
      return "header_timeout";
    case Rejection::kBodyTimeout:
      return "body_timeout";
    case Rejection::kOverBudget:
      return "over_budget";
    case Rejection::kBadRequest:
      return "bad_request";
    case Rejection::kUnsupportedCoding:
      return "unsupported_transfer_coding";
    case Rejection::kHeadTooLarge:
      return "head_too_large";
    case Rejection::kBodyTooLarge:
      return "body_too_large";
    case Rejection::kRapidReset:
      return "rapid_reset";
    case Rejection::kProtocolError:
      return "http2_protocol_error";
  }
  return "unknown";
}

MonoNanos HeadDeadline(const HeadClock& clock, Nanos header_timeout, Nanos idle_timeout) {
  if (clock.first_request) return clock.accepted + header_timeout;
  if (clock.head_started != 0) return clock.head_started + header_timeout;
  return clock.idle_since + idle_timeout;
}

uint64_t DefaultMaxConnections(uint64_t open_file_limit, unsigned descriptors_per_connection) {
  uint64_t usable = open_file_limit > kReservedDescriptors * 2
                        ? open_file_limit - kReservedDescriptors
                        : open_file_limit / 2;
  return std::max(kMinimumConnections, usable / std::max(1u, descriptors_per_connection));
}

std::shared_ptr<ServerResources> CreateServerResources(const ServerLimitOptions& options,
                                                       unsigned descriptors_per_connection) {
  OpenFileLimit files = RaiseOpenFileLimit();
  ServerResourceLimits limits;
  limits.max_connections = options.max_connections.value_or(
      DefaultMaxConnections(files.soft, descriptors_per_connection));
  limits.max_buffered_bytes = options.max_buffered_bytes;
  return std::make_shared<ServerResources>(limits);
}

}  // namespace hammer::http
