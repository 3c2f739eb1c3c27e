#include "hammer/http/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <utility>

#include "hammer/net/socket.h"

namespace hammer::http {

namespace {

bool IsIpLiteral(const std::string& host) {
  return net::SocketAddress::FromIp(host, 0).ok();
}

// OpenSSL's new-session callback: the transport's context keeps the session for its host.
int OnNewSession(SSL* ssl, SSL_SESSION* session) {
  TlsTransport* transport = TlsTransport::FromSsl(ssl);
  if (transport == nullptr || transport->role() != TlsTransport::Role::kClient) return 0;
  static_cast<TlsClientContext*>(transport->endpoint())
      ->StoreSession(transport->session_key(), session);
  return 1;  // we keep the reference
}

}  // namespace

Result<std::shared_ptr<const TlsClientConfig>> TlsClientConfig::Create(const TlsOptions& options) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status::Error("TLS: " + OpenSslErrorText());
  std::shared_ptr<const TlsClientConfig> config(new TlsClientConfig(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
  // One read(2) takes every record that has arrived (instead of a header and a body per
  // record), and a short one tells the connection the socket is drained.
  SSL_CTX_set_read_ahead(ctx, 1);
  static const unsigned char kAlpn[] = "\x08http/1.1";
  SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof(kAlpn) - 1);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, OnNewSession);
  if (options.verify) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    int ok = options.ca_file.empty()
                 ? SSL_CTX_set_default_verify_paths(ctx)
                 : SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr);
    if (ok != 1) {
      return Status::Error("cannot load CA certificates" +
                           (options.ca_file.empty() ? "" : " from " + options.ca_file) + ": " +
                           OpenSslErrorText());
    }
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }
  if (!options.client_cert.empty()) {
    if (Status s = UseCertificateAndKey(ctx, options.client_cert, options.client_key); !s.ok()) {
      return Status::Error("client certificate: " + s.message());
    }
  } else if (!options.client_key.empty()) {
    return Status::Error("a client key needs its certificate (--client-cert)");
  }
  return config;
}

TlsClientConfig::~TlsClientConfig() {
  SSL_CTX_free(ctx_);
}

Result<std::unique_ptr<TlsClientContext>> TlsClientContext::Create(const TlsOptions& options) {
  Result<std::shared_ptr<const TlsClientConfig>> config = TlsClientConfig::Create(options);
  if (!config.ok()) return config.status();
  return std::make_unique<TlsClientContext>(std::move(*config));
}

TlsClientContext::TlsClientContext(std::shared_ptr<const TlsClientConfig> config)
    : config_(std::move(config)) {}

TlsClientContext::~TlsClientContext() {
  for (auto& [key, session] : sessions_)
    SSL_SESSION_free(session);
}

void TlsClientContext::OnHandshakeDone(const TlsTransport& transport) {
  ++counters_.handshakes;
  if (transport.resumed()) ++counters_.resumed;
}

void TlsClientContext::StoreSession(const std::string& key, SSL_SESSION* session) {
  auto [it, inserted] = sessions_.emplace(key, session);
  if (!inserted) {
    SSL_SESSION_free(it->second);
    it->second = session;
  }
}

SSL_SESSION* TlsClientContext::FindSession(const std::string& key) const {
  auto it = sessions_.find(key);
  return it == sessions_.end() ? nullptr : it->second;
}

std::string AlpnWire(std::initializer_list<std::string_view> names) {
  std::string wire;
  for (std::string_view name : names) {
    wire.push_back(static_cast<char>(name.size()));
    wire.append(name);
  }
  return wire;
}

Result<std::unique_ptr<net::Transport>> TlsClientContext::Wrap(
    std::unique_ptr<net::Transport> plain, const std::string& host, uint16_t port,
    std::string_view alpn) {
  SSL* ssl = SSL_new(config_->ssl_ctx());
  if (ssl == nullptr) return Status::Error("TLS: " + OpenSslErrorText());
  if (!AttachSocket(ssl, plain->fd())) {
    SSL_free(ssl);
    return Status::Error("TLS: " + OpenSslErrorText());
  }
  SSL_set_connect_state(ssl);
  if (!alpn.empty() && SSL_set_alpn_protos(ssl, reinterpret_cast<const unsigned char*>(alpn.data()),
                                           static_cast<unsigned>(alpn.size())) != 0) {
    SSL_free(ssl);
    return Status::Error("TLS: cannot set ALPN: " + OpenSslErrorText());
  }
  if (IsIpLiteral(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(host.c_str()));  // SSL_set_tlsext_host_name, without its C cast
    SSL_set1_host(ssl, host.c_str());
  }
  std::string key = host + ":" + std::to_string(port);
  if (SSL_SESSION* session = FindSession(key)) SSL_set_session(ssl, session);
  return std::unique_ptr<net::Transport>(std::make_unique<TlsTransport>(
      TlsTransport::Role::kClient, this, std::move(plain), ssl, std::move(key)));
}

}  // namespace hammer::http
