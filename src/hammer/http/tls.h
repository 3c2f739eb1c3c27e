// TLS for the client engine (OpenSSL). TlsClientContext holds the verification settings and a
// per-host session cache, and wraps a connected TCP transport in a TLS transport.
//
// Verification is on by default against the system trust store (or --cacert), with hostname
// checks and SNI; ALPN offers only "http/1.1". Sessions are cached per host name so reconnects
// resume (fewer round trips and much less CPU). One context per event loop: it is not
// thread-safe (the SSL_CTX underneath is, but the session cache is not).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "hammer/base/status.h"
#include "hammer/net/transport.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_session_st SSL_SESSION;

namespace hammer::http {

struct TlsOptions {
  bool verify = true;   // false: --insecure
  std::string ca_file;  // --cacert; empty: the system store
};

struct TlsCounters {
  uint64_t handshakes = 0;
  uint64_t resumed = 0;
  void Merge(const TlsCounters& o) {
    handshakes += o.handshakes;
    resumed += o.resumed;
  }
};

class TlsClientContext {
 public:
  static Result<std::unique_ptr<TlsClientContext>> Create(const TlsOptions& options);
  ~TlsClientContext();
  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;

  // Wraps a connected socket; the handshake runs in the returned transport's Handshake().
  Result<std::unique_ptr<net::Transport>> Wrap(std::unique_ptr<net::Transport> plain,
                                               const std::string& host);

  TlsCounters& counters() { return counters_; }
  const TlsCounters& counters() const { return counters_; }

  // Called from OpenSSL's new-session callback; takes ownership of `session`.
  void StoreSession(const std::string& host, SSL_SESSION* session);

 private:
  friend class TlsTransport;
  explicit TlsClientContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_SESSION* FindSession(const std::string& host) const;

  SSL_CTX* ctx_;
  std::unordered_map<std::string, SSL_SESSION*> sessions_;
  TlsCounters counters_;
};

}  // namespace hammer::http
