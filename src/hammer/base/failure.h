// Failure: the fixed set of reasons a request fails, their names and per-type counts.
//
// It lives in base because it is the vocabulary several modules share without depending on
// each other: http classifies a finished request into one Failure, stats counts them (KeyStats,
// partials, reports) and must not include http, and the Hadoop reporter names them. Hadoop allows
// about 120 counters per job and a comma in a counter name breaks its parser, so this list is
// small, closed, and its names are the counter names hammer writes as
// `reporter:counter:error,<name>,<n>`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

namespace hammer {

enum class Failure : uint8_t {
  kInvalidUrl,        // the input line is not a URL hammer can send (bad syntax, unknown scheme)
  kDns,               // the host name did not resolve
  kConnect,           // TCP connect refused, unreachable or timed out
  kTls,               // TLS handshake or certificate verification failed
  kTimeout,           // no complete response within --timeout
  kReset,             // the peer closed or reset the connection before the response ended
  kProtocol,          // the response was not valid HTTP/1.x (or exceeded a size cap)
  kHttp4xx,           // status 400-499
  kHttp5xx,           // status 500-599
  kErrorlikeContent,  // 2xx/3xx whose body matches --error-pattern (the seed's check)
  kRedirectLoop,      // too many redirects, or a redirect cycle
  kStreamReset,       // HTTP/2: the server reset the request's stream (RST_STREAM, with its code)
  kGoaway,            // HTTP/2: the server ended the connection (GOAWAY with an error code)
                      // before the stream completed
  kGrpcStatus,        // gRPC: the call ended with a non-zero grpc-status (none at all, or a
                      // malformed gRPC body, is kProtocol)
  kOther,             // anything else (out of file descriptors, local errors)
};

inline constexpr size_t kFailureCount = static_cast<size_t>(Failure::kOther) + 1;

inline constexpr std::array<std::string_view, kFailureCount> kFailureNames = {
    "invalid_url",   "dns",          "connect",  "tls",         "timeout",
    "reset",         "protocol",     "http_4xx", "http_5xx",    "errorlike_content",
    "redirect_loop", "stream_reset", "goaway",   "grpc_status", "other",
};

inline constexpr std::string_view FailureName(Failure f) {
  return kFailureNames[static_cast<size_t>(f)];
}

inline std::optional<Failure> FailureFromName(std::string_view name) {
  for (size_t i = 0; i < kFailureCount; ++i) {
    if (kFailureNames[i] == name) return static_cast<Failure>(i);
  }
  return std::nullopt;
}

// Per-type failure counts; a mergeable value type.
struct FailureCounts {
  std::array<uint64_t, kFailureCount> by_type{};

  void Add(Failure f, uint64_t n = 1) { by_type[static_cast<size_t>(f)] += n; }
  uint64_t Get(Failure f) const { return by_type[static_cast<size_t>(f)]; }
  uint64_t Total() const {
    uint64_t total = 0;
    for (uint64_t n : by_type)
      total += n;
    return total;
  }
  void Merge(const FailureCounts& other) {
    for (size_t i = 0; i < kFailureCount; ++i)
      by_type[i] += other.by_type[i];
  }
  bool operator==(const FailureCounts&) const = default;
};

// FailureCounts allocated at the first count: a per-key row (stats::KeyStats) holds one, and
// most rows never fail, so a row costs a pointer instead of 120 bytes. A value type as
// FailureCounts is: copies copy the counts, and none allocated equals all zero.
class LazyFailureCounts {
 public:
  LazyFailureCounts() = default;
  LazyFailureCounts(const LazyFailureCounts& other)
      : counts_(other.counts_ ? std::make_unique<FailureCounts>(*other.counts_) : nullptr) {}
  LazyFailureCounts& operator=(const LazyFailureCounts& other) {
    if (this != &other) *this = LazyFailureCounts(other);
    return *this;
  }
  LazyFailureCounts(LazyFailureCounts&&) noexcept = default;
  LazyFailureCounts& operator=(LazyFailureCounts&&) noexcept = default;
  ~LazyFailureCounts() = default;

  void Add(Failure f, uint64_t n = 1) { Allocated().Add(f, n); }
  uint64_t Get(Failure f) const { return counts().Get(f); }
  uint64_t Total() const { return counts_ ? counts_->Total() : 0; }
  void Merge(const FailureCounts& other) {
    if (other.Total() > 0) Allocated().Merge(other);
  }
  void Merge(const LazyFailureCounts& other) {
    if (other.counts_) Merge(*other.counts_);
  }
  // The counts (all zero when none were allocated).
  const FailureCounts& counts() const { return counts_ ? *counts_ : kNone; }
  bool allocated() const { return counts_ != nullptr; }
  bool operator==(const LazyFailureCounts& other) const { return counts() == other.counts(); }

 private:
  static constexpr FailureCounts kNone{};
  FailureCounts& Allocated() {
    if (!counts_) counts_ = std::make_unique<FailureCounts>();
    return *counts_;
  }
  std::unique_ptr<FailureCounts> counts_;
};

}  // namespace hammer
