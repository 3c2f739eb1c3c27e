// TLS termination for the HTTP server (`hammer serve`, the `hammer dark` listener).
//
// TlsServerContext holds the certificate and key (an OpenSSL SSL_CTX) and wraps each accepted
// socket in a TlsTransport; the ServerConnection then runs the handshake without blocking,
// under a deadline (TlsServerOptions::handshake_timeout). Defaults follow current practice
// (Mozilla's "intermediate" server configuration,
// https://wiki.mozilla.org/Security/Server_Side_TLS): TLS 1.2 and 1.3 only, forward-secret AEAD
// cipher suites for TLS 1.2, no compression, no client-initiated renegotiation; sessions resume
// through session tickets (TLS 1.3 and 1.2) and a server-side session cache (TLS 1.2 session ids).
//
// ALPN: the server chooses the first protocol of its preference list (`alpn`) that the client
// offers. Today the list is {"http/1.1"}; h2 will be added in front of it once the server
// speaks HTTP/2, and the connection reads the choice from Transport::application_protocol(). A
// client offering ALPN without any protocol of the list is refused with the
// no_application_protocol alert (RFC 7301, section 3.2); a client offering no ALPN at all gets
// HTTP/1.1.
//
// Reload: Reload() reads the certificate and key files again into a new SSL_CTX. On success,
// new handshakes use it; connections already established keep the SSL_CTX they were made with
// (OpenSSL counts its references), so nothing is dropped. The session ticket keys carry over,
// so clients still resume after a reload. On failure the previous certificate stays in force
// and the error is returned and counted.
//
// Threads: Wrap, Reload and stats may be called from any thread (the SSL_CTX is swapped under
// a mutex; counters are relaxed atomics). The context must outlive the listeners using it
// (they hold it by shared_ptr).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/http/tls_transport.h"
#include "hammer/net/transport.h"

namespace hammer::http {

struct TlsServerOptions {
  std::string cert_file;  // --tls-cert: PEM certificate chain, leaf first
  std::string key_file;   // --tls-key: PEM private key (empty: read from cert_file)
  // ALPN protocols in the server's order of preference.
  std::vector<std::string> alpn = {"http/1.1"};
  // A connection must complete its handshake this soon after it is accepted, or is closed.
  Nanos handshake_timeout = 10 * kSecond;

  bool enabled() const { return !cert_file.empty(); }
};

// A snapshot of what the context counted since it was created.
struct TlsServerStats {
  uint64_t handshakes = 0;       // completed
  uint64_t resumed = 0;          // ... of which resumed an earlier session
  uint64_t failed_error = 0;     // refused: TLS alert, protocol error, no common ALPN/version
  uint64_t failed_closed = 0;    // the client closed or reset the connection mid-handshake
  uint64_t failed_timeout = 0;   // no complete handshake within handshake_timeout
  uint64_t reloads = 0;          // successful Reload() calls
  uint64_t reload_failures = 0;  // Reload() calls that kept the previous certificate
  std::string certificate;       // the certificate in force: "subject, serial, expiry"
  int64_t not_after_unix = 0;    // its expiry (seconds since the epoch)

  uint64_t handshake_failures() const { return failed_error + failed_closed + failed_timeout; }
};

class TlsServerContext final : public TlsEndpoint {
 public:
  // Errors name the file at fault (unreadable, not PEM, key not matching the certificate) or
  // the ALPN list (empty, or a name longer than 255 bytes).
  static Result<std::shared_ptr<TlsServerContext>> Create(TlsServerOptions options);
  ~TlsServerContext() override;
  TlsServerContext(const TlsServerContext&) = delete;
  TlsServerContext& operator=(const TlsServerContext&) = delete;

  // Reads the certificate and key files again (see the file comment).
  Status Reload();

  // Wraps an accepted socket with the certificate currently in force; the handshake runs in
  // the returned transport's Handshake().
  Result<std::unique_ptr<net::Transport>> Wrap(std::unique_ptr<net::Transport> plain);

  // The connection's handshake deadline passed.
  void CountHandshakeTimeout() { failed_timeout_.fetch_add(1, std::memory_order_relaxed); }

  TlsServerStats stats() const;
  const TlsServerOptions& options() const { return options_; }

  // TlsEndpoint (loop threads)
  void OnHandshakeDone(const TlsTransport& transport) override;
  void OnHandshakeFailed(const TlsTransport& transport, net::IoResult::Kind kind) override;

  // The ALPN list in wire format (length-prefixed names), for OpenSSL's selection callback.
  const std::string& alpn_wire() const { return alpn_wire_; }

 private:
  explicit TlsServerContext(TlsServerOptions options);
  // A new SSL_CTX from the files, with every setting applied; `previous` (may be null) gives
  // its session ticket keys.
  Result<SSL_CTX*> Build(SSL_CTX* previous);

  const TlsServerOptions options_;
  std::string alpn_wire_;
  mutable std::mutex mutex_;
  SSL_CTX* current_ = nullptr;  // guarded by mutex_
  std::string certificate_;     // guarded by mutex_
  int64_t not_after_unix_ = 0;  // guarded by mutex_
  std::atomic<uint64_t> handshakes_{0};
  std::atomic<uint64_t> resumed_{0};
  std::atomic<uint64_t> failed_error_{0};
  std::atomic<uint64_t> failed_closed_{0};
  std::atomic<uint64_t> failed_timeout_{0};
  std::atomic<uint64_t> reloads_{0};
  std::atomic<uint64_t> reload_failures_{0};
};

}  // namespace hammer::http
