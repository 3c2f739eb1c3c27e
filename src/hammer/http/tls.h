// TLS for the client engine (OpenSSL), in two parts:
//
// TlsClientConfig is what the user asked for, loaded once: an SSL_CTX with the trust store
// (the system's, or --cacert), the verification mode (--insecure turns it off), the ALPN offer
// ("http/1.1") and an optional client certificate for servers that require one (mTLS). It is
// immutable after Create and thread-safe, so every loop's clients can share one (loading the
// system store costs about 20 ms of CPU).
//
// TlsClientContext is one loop's use of a config: it wraps connected sockets in TLS
// transports, keeps a session cache per host and port so reconnects resume (fewer round trips
// and much less CPU), and counts handshakes. Not thread-safe: one per HttpClient.
//
// Verification checks the chain and the host name (or IP address) of the URL, and SNI carries
// that name, whatever Host header the request itself sends.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "hammer/base/status.h"
#include "hammer/http/tls_transport.h"
#include "hammer/net/transport.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_session_st SSL_SESSION;

namespace hammer::http {

struct TlsOptions {
  bool verify = true;   // false: --insecure
  std::string ca_file;  // --cacert; empty: the system store
  // --client-cert / --client-key: presented when the server asks for a certificate. The key
  // may be in the certificate's file (then client_key stays empty).
  std::string client_cert;
  std::string client_key;
};

struct TlsCounters {
  uint64_t handshakes = 0;
  uint64_t resumed = 0;
  void Merge(const TlsCounters& o) {
    handshakes += o.handshakes;
    resumed += o.resumed;
  }
};

// ALPN protocol names in TLS wire format: each name prefixed by its length ({"h2",
// "http/1.1"} -> "\x02h2\x08http/1.1"). Names must be 1 to 255 bytes long.
std::string AlpnWire(std::initializer_list<std::string_view> names);

class TlsClientConfig {
 public:
  // Errors name the file that could not be used: an unreadable CA file, a certificate or key
  // that does not load, a key that does not match the certificate.
  static Result<std::shared_ptr<const TlsClientConfig>> Create(const TlsOptions& options);
  ~TlsClientConfig();
  TlsClientConfig(const TlsClientConfig&) = delete;
  TlsClientConfig& operator=(const TlsClientConfig&) = delete;

  SSL_CTX* ssl_ctx() const { return ctx_; }

 private:
  explicit TlsClientConfig(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

class TlsClientContext final : public TlsEndpoint {
 public:
  // A context with a config of its own.
  static Result<std::unique_ptr<TlsClientContext>> Create(const TlsOptions& options);
  explicit TlsClientContext(std::shared_ptr<const TlsClientConfig> config);
  ~TlsClientContext() override;
  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;

  // Wraps a connected socket for `host` (SNI and verification); the handshake runs in the
  // returned transport's Handshake(). Sessions are cached per host and port. `alpn` (wire
  // format: length-prefixed names, see AlpnWire) replaces the config's offer of "http/1.1"
  // for this connection when not empty; the choice is the transport's application_protocol().
  Result<std::unique_ptr<net::Transport>> Wrap(std::unique_ptr<net::Transport> plain,
                                               const std::string& host, uint16_t port,
                                               std::string_view alpn = {});

  TlsCounters& counters() { return counters_; }
  const TlsCounters& counters() const { return counters_; }

  // TlsEndpoint
  void OnHandshakeDone(const TlsTransport& transport) override;
  void OnHandshakeFailed(const TlsTransport&, net::IoResult::Kind) override {}

  // Called from OpenSSL's new-session callback; takes ownership of `session`.
  void StoreSession(const std::string& key, SSL_SESSION* session);

 private:
  SSL_SESSION* FindSession(const std::string& key) const;

  std::shared_ptr<const TlsClientConfig> config_;
  std::unordered_map<std::string, SSL_SESSION*> sessions_;  // "host:port" -> session
  TlsCounters counters_;
};

}  // namespace hammer::http
