// Everything `hammer dark` is told to do; filled from flags (static membership) and kept up
// to date by a membership source.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/dark/capture_options.h"
#include "hammer/dark/upstream_pool.h"
#include "hammer/dark/verdict_rules.h"
#include "hammer/http/server_resources.h"
#include "hammer/http/tls.h"
#include "hammer/http/tls_server.h"
#include "hammer/http/url.h"

namespace hammer::dark {

enum class ForkStrategyKind : uint8_t { kRelative, kIdentical, kConstantQps };

struct DarkClusterOptions {
  std::string name;
  std::vector<http::Url> urls;  // the dark instances to send to (round robin)
  uint32_t instances = 0;       // Nd; 0 means the number of urls
  double multiplier = 1.0;
  ForkStrategyKind strategy = ForkStrategyKind::kRelative;
  double target_rate = 0;         // constant-qps: requests per second each dark instance gets
  size_t buffer_capacity = 1000;  // constant-qps ring buffer
  Nanos buffer_ttl = 10 * kSecond;

  uint32_t dark_instances() const {
    return instances != 0 ? instances : static_cast<uint32_t>(urls.size());
  }
};

// --health-check PATH and its companions: active health checks of the regular instances
// (health_checker.h); off while `path` is empty.
struct HealthCheckOptions {
  std::string path;                  // --health-check: the target checked ("/healthz")
  Nanos interval = 5 * kSecond;      // --health-check-interval
  Nanos timeout = kSecond;           // --health-check-timeout
  uint32_t healthy_threshold = 2;    // --healthy-threshold: passes in a row to be healthy again
  uint32_t unhealthy_threshold = 3;  // --unhealthy-threshold: failures in a row to be unhealthy
  int status_min = 200;              // --health-check-status: 200, or a range 200-399
  int status_max = 200;

  bool enabled() const { return !path.empty(); }
};

struct DarkOptions {
  std::string listen = "127.0.0.1:8080";
  // The regular cluster this proxy serves from (--upstream): fixed URLs, and URLs naming a
  // host, each address of which is an instance (re-resolved every upstream_dns_interval).
  std::vector<http::Url> upstreams;
  std::vector<uint32_t> upstream_weights;  // one per upstreams entry (--upstream-weight; 1)
  // --upstream zk://HOSTS/PATH/clusters/NAME: the members of a cluster in ZooKeeper, each an
  // instance (upstream_zookeeper.h).
  std::vector<std::string> upstream_zookeeper;
  // --upstream-dns-interval: how often named upstreams are resolved again; 0: a name is one
  // instance, resolved when each connection opens.
  Nanos upstream_dns_interval = 5 * kSecond;
  HealthCheckOptions health_check;
  // Which regular instance serves a request, and which are left out while they fail
  // (upstream_pool.h): --lb, --eject-connect-failures, --eject-resets, --eject-5xx,
  // --ejection-time, --max-ejection-percent.
  BalancePolicy balance = BalancePolicy::kLeastRequest;
  OutlierOptions outliers;
  // --retries: a request that failed before any byte of its answer reached the client, and is
  // safe to repeat, is sent to another instance up to this many times (0: never), within a
  // budget of retries in flight (--retry-budget percent of the requests in flight, at least 3).
  uint32_t retries = 2;
  uint32_t retry_budget_percent = 20;
  // --per-try-timeout: each try's own limit within --upstream-timeout (0: the whole of it).
  Nanos per_try_timeout = 0;
  // --tunnel-idle-timeout: a tunnel (an upgraded connection: WebSocket, ...) with no byte
  // moving either way for this long is closed.
  Nanos tunnel_idle_timeout = 3600 * kSecond;
  uint32_t regular_instances = 1;  // Ns: instances of the regular cluster (proxies)
  std::vector<DarkClusterOptions> clusters;
  bool bernoulli = false;          // rest.li parity: a coin per request instead of the accumulator
  std::string identical_header;    // identical strategy: derive the shared number from this header
  std::vector<std::string> allow;  // path regexes that make unsafe methods eligible
  std::vector<std::string> deny;   // path regexes never forked
  // --dark-grpc-methods: globs of the gRPC methods that are read-only (eligibility.h); their
  // calls are forked when the request is one message.
  std::vector<std::string> dark_grpc_methods;
  Nanos upstream_timeout = 30 * kSecond;
  Nanos dark_timeout = 5 * kSecond;
  Nanos connect_timeout = 5 * kSecond;
  Nanos drain_timeout = 10 * kSecond;  // graceful stop: how long requests in flight may finish
  uint32_t dark_max_in_flight = 256;   // per dark cluster and thread; beyond it copies are dropped
  size_t max_response_bytes = 64u << 20;
  // --max-request-body-bytes: the largest request body, held or streamed (413 above; nginx's
  // client_max_body_size).
  size_t max_request_body_bytes = 16u << 20;
  // --stream-threshold: request and response bodies above this many bytes are passed on as
  // they arrive (with back-pressure) rather than kept whole; requests streamed are not copied
  // to dark clusters. 0: every body is kept whole. 1 MiB: most API bodies stay whole (and
  // forkable) while a large upload or download holds a 256 KiB window per direction instead of
  // its size (docs/dark.md).
  size_t stream_threshold = 1u << 20;
  // --http2: clients may speak HTTP/2 (h2c with prior knowledge on a cleartext --listen, ALPN
  // "h2" with --tls-cert). Each stream is one request like an HTTP/1.1 request (bodies up to
  // max_request_body_bytes); a body over stream_threshold is passed on as it arrives, as an
  // HTTP/1.1 one is: the client's stream window (256 KiB) is reopened only as the upstream
  // takes the bytes, and the request is not copied to dark clusters.
  // Upstreams and dark clusters are spoken to in HTTP/1.1 (but see upstream_http2 and
  // dark_http2).
  bool http2 = false;
  // --upstream-http2: the regular upstreams, and the --compare-secondary instances (a second
  // regular instance speaks what the regular ones speak), are spoken to in HTTP/2 (h2c with
  // prior knowledge on http://, ALPN "h2" on https://; no fallback: an upstream that does not
  // speak it answers 502, a secondary that does not leaves each pair uncompared),
  // whatever the client spoke. Bodies over stream_threshold pass with back-pressure as over
  // HTTP/1.1: a request body is its stream's DATA, sent as it arrives within the upstream's
  // flow-control windows (a slow upstream stops the proxy reading the client); a response is
  // read at most a paused stream's window (the same 256 KiB) ahead of a slow client, the
  // connection's other streams going on.
  bool upstream_http2 = false;
  // --dark-http2 NAME (repeatable): the copies to these dark clusters go over HTTP/2, by the
  // same rules as upstream_http2 and with no fallback either: an instance that does not speak
  // it fails each copy as `protocol` in the cluster's failure counters, which never touches the
  // primary. Copies keep everything else (in-flight budget, dark timeout, strategies,
  // comparison); their answers are discarded as the DATA arrives, or kept up to
  // compare_max_body_bytes. By name, whatever the membership source: with ZooKeeper a cluster
  // named here that appears later speaks HTTP/2 from its first copy. Other clusters: HTTP/1.1.
  std::vector<std::string> dark_http2;
  uint32_t http2_max_concurrent_streams = 100;  // --max-concurrent-streams, per connection
  bool preserve_host = false;
  // Method override headers decide eligibility only when trusted (rest.li query tunnelling).
  bool trust_method_override = false;
  // Append the client's IP to X-Forwarded-For (and Forwarded) on everything forwarded.
  bool forwarded_for = true;
  // What clients may make the proxy hold: --max-connections, --max-buffered-bytes,
  // --header-timeout (see hammer/http/server_resources.h).
  http::ServerLimitOptions client_limits;
  int threads = 1;
  // "/metrics", "/hammer/dark/report", "/hammer/dark/membership"; empty: no admin listener.
  // "PORT" alone binds 127.0.0.1; a non-loopback address requires admin_token_file.
  std::string admin_listen;
  std::string admin_token_file;  // bearer token every admin request must present
  // TLS termination on `listen` (--tls-cert, --tls-key); off when no certificate is given.
  http::TlsServerOptions listener_tls;
  // https to every upstream: the regular ones, the dark clusters and the comparison secondary
  // share these settings (--cacert, --insecure, --client-cert, --client-key).
  http::TlsOptions upstream_tls;
  // --capture and its companions: the exchanges served, recorded for `hammer load --replay`.
  CaptureOptions capture;
  // Comparison (--compare).
  bool compare = false;
  std::vector<http::Url> compare_secondary;  // a second regular instance, for noise
  std::vector<std::string> compare_headers;  // response headers compared besides status and body
  std::vector<std::string> compare_ignore;   // field path prefixes never reported
  size_t compare_max_body_bytes = 1u << 20;
  VerdictRules verdict;              // how /hammer/dark/verdict judges the comparison (--judge)
  Nanos verdict_interval = kSecond;  // latency_increase: intervals a slowdown must persist over
  uint64_t seed = 0;                 // 0: random

  // Whether the dark cluster `name`'s copies go over HTTP/2 (dark_http2 names it).
  bool DarkClusterSpeaksHttp2(std::string_view name) const {
    return std::find(dark_http2.begin(), dark_http2.end(), name) != dark_http2.end();
  }
};

}  // namespace hammer::dark
