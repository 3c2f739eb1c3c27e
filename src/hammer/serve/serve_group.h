// TargetServerGroup: `hammer serve` as a library. Starts N loops on N threads, each with its
// own SO_REUSEPORT listener on the same address and its own TargetHandler, and stops them.
// Used by the serve command, by `hammer demo`, and by tests. Start() returns once every
// listener is bound, so address() is immediately usable (port 0 resolves to the real port).
// With options.tls every loop's listener terminates TLS through one shared TlsServerContext.
// With options.http2 (the default) the same routes answer HTTP/2 too (server.h).
// Start() raises the open-file limit; the listeners share one ServerResources (connection
// cap derived from the open-file limit unless given, buffer budget), reported by
// /_hammer/stats.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/http/server.h"
#include "hammer/net/loop_group.h"
#include "hammer/serve/target_server.h"

namespace hammer::serve {

struct ServeOptions {
  std::string listen = "127.0.0.1:8080";
  int threads = 1;
  TargetOptions target;
  http::TlsServerOptions tls;  // --tls-cert/--tls-key; off without a certificate
  // HTTP/2 besides HTTP/1.1: h2c with prior knowledge on cleartext, ALPN h2 with TLS.
  bool http2 = true;
  uint32_t http2_max_concurrent_streams = 100;  // --max-concurrent-streams
  // What clients may make the server hold: --max-connections, --max-buffered-bytes,
  // --header-timeout (see hammer/http/server_resources.h).
  http::ServerLimitOptions client_limits;
};

class TargetServerGroup {
 public:
  static Result<std::unique_ptr<TargetServerGroup>> Start(const ServeOptions& options);
  ~TargetServerGroup();

  const net::SocketAddress& address() const { return address_; }
  const ReceivedCounts& counts() const { return counts_; }
  const http::ServerResources& resources() const { return *resources_; }
  // Stops the loops and joins their threads. Idempotent.
  void Stop();

  // Reads the certificate and key again (SIGHUP; see TlsServerContext::Reload) and returns a
  // description of the certificate now in force. Thread-safe.
  Result<std::string> ReloadTls();
  // One line about TLS for the end of a run: handshakes, resumptions, failures by reason
  // ("" without TLS). Thread-safe.
  std::string TlsSummary() const;

 private:
  TargetServerGroup(const ServeOptions& options, std::shared_ptr<http::TlsServerContext> tls,
                    std::shared_ptr<http::ServerResources> resources);

  ServeOptions options_;
  std::shared_ptr<http::TlsServerContext> tls_;
  std::shared_ptr<http::ServerResources> resources_;  // before counts_, which reports it
  net::LoopGroup loops_;
  ReceivedCounts counts_;
  std::vector<std::unique_ptr<TargetHandler>> handlers_;
  std::vector<std::unique_ptr<http::HttpListener>> listeners_;
  net::SocketAddress address_;
  bool stopped_ = false;
};

}  // namespace hammer::serve
