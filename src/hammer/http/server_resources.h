// What a server lets its clients make it hold, and what it refused (the model is Envoy's
// overload manager: fixed budgets, and a counted action when one runs out). One
// ServerResources is shared by every listener of a server group (each loop of `hammer serve`,
// or of `hammer dark`'s proxy side), so the limits are per process, not per loop:
//
//   max_connections     open client connections. A new connection over it replaces one that
//                       waits for its client, counted as kEvicted: the oldest idle keep-alive
//                       connection, else the oldest still sending its request head (the
//                       slowloris case; see connection_table.h); when every connection is being
//                       served, the new one is closed at once and counted as kConnectionLimit.
//   max_buffered_bytes  the BufferBudget: a new request arriving while it is exhausted, or
//                       whose Content-Length would take it past its limit, is answered 503
//                       and counted as kOverBudget.
//
// When a connection's head deadline falls is a free function here, with time passed in, so it
// is tested without clocks or sockets.
//
// Threading: ServerResources is thread-safe (relaxed atomics); its counters are read by
// /metrics and /_hammer/stats from other threads.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "hammer/base/clock.h"
#include "hammer/http/buffer_budget.h"

namespace hammer::http {

// Why a server refused a connection or a request. Every refusal is counted under one of them.
enum class Rejection : uint8_t {
  kConnectionLimit,    // new connection over max_connections, closed at once
  kEvicted,            // connection waiting for a head, closed to admit a new one
  kOutOfDescriptors,   // accept(2) failed for lack of descriptors: the pending connection
                       // was accepted on a spare descriptor and closed at once
  kHeaderTimeout,      // no complete head within the header timeout: 408, closed
  kBodyTimeout,        // a body stalled for the idle timeout between reads: 408, closed
  kOverBudget,         // buffered bytes over max_buffered_bytes: 503, closed
  kBadRequest,         // malformed request: 400
  kUnsupportedCoding,  // a transfer coding other than chunked: 501
  kHeadTooLarge,       // head over the size caps: 431
  kBodyTooLarge,       // body over the size cap: 413
  kRapidReset,         // HTTP/2: most streams reset by the client before their answer
                       // (CVE-2023-44487): GOAWAY ENHANCE_YOUR_CALM, closed
  kProtocolError,      // HTTP/2: a protocol error or a frame flood (nghttp2's checks): GOAWAY
};
inline constexpr size_t kRejectionCount = 12;
// "connection_limit", "evicted", "out_of_descriptors", "header_timeout", "body_timeout",
// "over_budget", "bad_request", "unsupported_transfer_coding", "head_too_large",
// "body_too_large", "rapid_reset", "http2_protocol_error": the label values of /metrics.
// HTTP/2 streams refused for the same reasons as HTTP/1.1 requests count under the same names
// (head_too_large, body_too_large, over_budget, header_timeout, body_timeout).
std::string_view RejectionName(Rejection rejection);

// --max-buffered-bytes by default: enough for a few thousand requests in flight with bodies and
// answers of a few tens of KiB each, or a few hundred at the streaming threshold, which is
// more than a proxy in front of one service should ever hold: past it, queueing more only
// hides an overload the client had better hear about (503) while memory is still there.
inline constexpr uint64_t kDefaultMaxBufferedBytes = 256ull << 20;
// --header-timeout by default (nginx's client_header_timeout is 60 s; Envoy's
// request_headers_timeout is off): long enough for any real client on a slow link, short
// enough that a connection trickling its head frees its slot soon.
inline constexpr Nanos kDefaultHeaderTimeout = 10 * kSecond;

struct ServerResourceLimits {
  uint64_t max_connections = 0;     // 0: no limit
  uint64_t max_buffered_bytes = 0;  // 0: no limit (still counted)
};

// The limits a user sets on a server (`--max-connections`, `--max-buffered-bytes`,
// `--header-timeout`, the same for `hammer serve` and `hammer dark`).
struct ServerLimitOptions {
  // Unset: DefaultMaxConnections for the open-file limit; 0: no limit.
  std::optional<uint64_t> max_connections;
  uint64_t max_buffered_bytes = kDefaultMaxBufferedBytes;  // 0: no limit
  Nanos header_timeout = kDefaultHeaderTimeout;
};

class ServerResources {
 public:
  explicit ServerResources(ServerResourceLimits limits = {})
      : limits_(limits), budget_(limits.max_buffered_bytes) {}
  ServerResources(const ServerResources&) = delete;
  ServerResources& operator=(const ServerResources&) = delete;

  const ServerResourceLimits& limits() const { return limits_; }

  // Takes a connection slot; false (and nothing taken) when max_connections are open.
  bool TryOpenConnection() {
    uint64_t open = open_.fetch_add(1, std::memory_order_relaxed);
    if (limits_.max_connections != 0 && open >= limits_.max_connections) {
      open_.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    accepted_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void CloseConnection() { open_.fetch_sub(1, std::memory_order_relaxed); }
  uint64_t open_connections() const { return open_.load(std::memory_order_relaxed); }
  uint64_t accepted_connections() const { return accepted_.load(std::memory_order_relaxed); }

  void Count(Rejection rejection) {
    rejected_[static_cast<size_t>(rejection)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t rejected(Rejection rejection) const {
    return rejected_[static_cast<size_t>(rejection)].load(std::memory_order_relaxed);
  }

  BufferBudget& budget() { return budget_; }
  const BufferBudget& budget() const { return budget_; }

 private:
  const ServerResourceLimits limits_;
  std::atomic<uint64_t> open_{0};
  std::atomic<uint64_t> accepted_{0};
  std::array<std::atomic<uint64_t>, kRejectionCount> rejected_{};
  BufferBudget budget_;
};

// When a connection waiting for a request head gives up on it. The first request's head must
// be complete within header_timeout of the accept; a later request's within header_timeout of
// its first byte; before that first byte, a keep-alive connection is idle and closes
// idle_timeout after its last answer. The deadline does not move as more bytes arrive, so a
// client sending a byte at a time cannot keep a connection forever (slowloris).
struct HeadClock {
  MonoNanos accepted = 0;      // when the connection was accepted
  bool first_request = true;   // no request has been answered on this connection yet
  MonoNanos idle_since = 0;    // when the previous answer was written (later requests)
  MonoNanos head_started = 0;  // when the head's first byte arrived; 0: not yet
};
MonoNanos HeadDeadline(const HeadClock& clock, Nanos header_timeout, Nanos idle_timeout);

// The default cap on client connections, given the open-file limit: what remains after a
// reserve for listeners, event loops, resolvers and files, divided by the descriptors each
// client connection may need at once (1 for a server that answers itself; 3 for a proxy: the
// client's, one to the upstream, and room for dark copies and pooled connections).
uint64_t DefaultMaxConnections(uint64_t open_file_limit, unsigned descriptors_per_connection);

// The resources of a server about to start with `options`: the open-file limit is raised to
// its hard limit first (RaiseOpenFileLimit), and an unset max_connections is derived from it.
std::shared_ptr<ServerResources> CreateServerResources(const ServerLimitOptions& options,
                                                       unsigned descriptors_per_connection);

}  // namespace hammer::http
