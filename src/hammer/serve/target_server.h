// TargetServer: the routes of `hammer serve`, the embedded target for demos, tests and
// calibration. One TargetServer is shared by every loop of the server; each loop has its own
// TargetHandler (RequestHandler), so routing state is per thread and the only shared state is
// ReceivedCounts (per-loop slots of relaxed atomics, summed when /_hammer/stats is read).
//
// Routes:
//   /                 and any unlisted path: 200 "ok"
//   /status/N         status N (100-999)
//   /delay/MS         200 after MS milliseconds (timer; the loop keeps serving meanwhile)
//   /bytes/N          200 with N bytes (N <= 1 GiB)
//   /error-content    200 "something went wrong" (the seed's error-like body)
//   /redirect/N       302 to /redirect/N-1 ... /redirect/1 -> "/"; /redirect-loop -> itself
//   /cookie/set       200 with Set-Cookie: hammer=1; /cookie/check 200 if it comes back, else 401
//   /echo             200 with the request as JSON: method, path, headers, body
//   /json/N           200 with {"id":N,"name":"item N","price":N*100,"updated_at":<ns clock>}:
//                     the clock field differs on every call (noise); --mutate price=0.1 makes
//                     a fraction of answers differ in one field (a canary's regression)
//   /_hammer/stats    JSON counts of what this server received (requests, by_method,
//                     by_protocol ("HTTP/1.1", "HTTP/2"), by_header; with TLS, "tls": handshakes,
//                     resumed, failures by reason, reloads and the certificate in force), and of
//                     what clients make it hold and what it refused ("server": connections_open,
//                     connections_max, connections_accepted, buffered_bytes, buffered_bytes_limit,
//                     rejected by reason)
//   /fault/reset-mid-body    declares 1000 bytes, sends 100, then resets the connection
//   /fault/endless-header    sends header bytes without end (until the client gives up)
// --latency adds a delay drawn from a distribution to every request; --error-rate answers that
// fraction of requests with 500.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/http/server.h"

namespace hammer::serve {

// A latency distribution: "5ms" (constant), "uniform:1ms,10ms", "exp:5ms" (mean),
// "normal:10ms,2ms" (mean, standard deviation; negative draws become 0).
class LatencyDistribution {
 public:
  static Result<LatencyDistribution> Parse(std::string_view spec);
  Nanos Sample(std::mt19937_64& rng) const;
  bool zero() const { return kind_ == Kind::kConstant && a_ == 0; }

 private:
  enum class Kind : uint8_t { kConstant, kUniform, kExponential, kNormal };
  Kind kind_ = Kind::kConstant;
  Nanos a_ = 0;
  Nanos b_ = 0;
};

struct TargetOptions {
  LatencyDistribution latency;
  double error_rate = 0;     // 0..1
  std::string mutate_field;  // /json/N: this field (id, name or price) changes ...
  double mutate_rate = 0;    // ... in this fraction of answers
};

// --mutate FIELD=RATE (RATE in 0..1) into `options`. Errors: "--mutate: expected FIELD=RATE
// (0..1), got '<text>'".
Status ParseMutateFlag(const std::string& text, TargetOptions* options);

// A URL list over this server's routes at `base` ("127.0.0.1:41234"), weighted as the seed
// weighted its lists (a line repeated is hit more often): mostly fast answers, some delays, a
// few 404/503 and error-like bodies. `hammer demo` loads it.
std::string DemoUrlList(const std::string& base);

// What the server received, across all loops (and, with TLS, its handshake counters, which
// `tls` keeps, and what clients make it hold, which `resources` keeps; both must outlive this
// object).
class ReceivedCounts {
 public:
  static constexpr std::array<std::string_view, 8> kMethods = {
      "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "OTHER"};
  explicit ReceivedCounts(int loops, const http::TlsServerContext* tls = nullptr,
                          const http::ServerResources* resources = nullptr);
  // `http2`: the request came on an HTTP/2 stream (counted in "by_protocol").
  void Record(int loop, std::string_view method, bool dark_header, bool http2 = false);
  std::string ToJson() const;
  uint64_t requests() const;

 private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> requests{0};
    std::array<std::atomic<uint64_t>, kMethods.size()> by_method{};
    std::atomic<uint64_t> dark{0};
    std::atomic<uint64_t> http2{0};
  };
  std::vector<Slot> slots_;
  const http::TlsServerContext* tls_;
  const http::ServerResources* resources_;
};

class TargetHandler final : public http::RequestHandler {
 public:
  TargetHandler(net::EventLoop* loop, int loop_index, const TargetOptions* options,
                ReceivedCounts* counts, uint64_t seed);
  ~TargetHandler() override;
  void OnRequest(const http::IncomingRequest& request, http::Responder responder) override;

 private:
  class Delayed;
  void Route(const http::IncomingRequest& request, http::Responder& responder);
  void RespondLater(Nanos delay, http::Responder responder, int status, std::string body,
                    std::string content_type);

  net::EventLoop* loop_;
  int loop_index_;
  const TargetOptions* options_;
  ReceivedCounts* counts_;
  std::mt19937_64 rng_;
  std::string bytes_;  // reused body for /bytes/N
  std::vector<std::unique_ptr<Delayed>> delayed_;
};

}  // namespace hammer::serve
