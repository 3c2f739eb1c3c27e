#include "hammer/http/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <utility>

#include "hammer/net/socket.h"

namespace hammer::http {

namespace {

std::string OpenSslErrors() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    if (!text.empty()) text += "; ";
    text += buf;
  }
  return text;
}

bool IsIpLiteral(const std::string& host) {
  return net::SocketAddress::FromIp(host, 0).ok();
}

}  // namespace

class TlsTransport final : public net::Transport {
 public:
  TlsTransport(TlsClientContext* context, std::unique_ptr<net::Transport> plain, SSL* ssl,
               std::string host)
      : context_(context), plain_(std::move(plain)), ssl_(ssl), host_(std::move(host)) {
    SSL_set_app_data(ssl_, this);
  }
  ~TlsTransport() override {
    // Closing a healthy connection without close_notify would make OpenSSL mark its session
    // not resumable; a quiet shutdown keeps it for the next connection to the host (TLS
    // resumption). A connection that failed keeps OpenSSL's default: no resumption.
    if (established_ && !failed_) SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(ssl_);
  }

  int fd() const override { return plain_->fd(); }
  const std::string& host() const { return host_; }
  TlsClientContext* context() const { return context_; }

  net::IoResult Handshake() override {
    ERR_clear_error();
    int rc = SSL_connect(ssl_);
    if (rc == 1) {
      established_ = true;
      ++context_->counters_.handshakes;
      if (SSL_session_reused(ssl_)) ++context_->counters_.resumed;
      return {};
    }
    return Translate(rc);
  }

  net::IoResult Read(char* buf, size_t len) override {
    ERR_clear_error();
    size_t n = 0;
    int rc = SSL_read_ex(ssl_, buf, len, &n);
    if (rc == 1) return {net::IoResult::Kind::kOk, n, 0};
    return Translate(rc);
  }

  net::IoResult Write(const iovec* iov, int count) override {
    size_t total = 0;
    for (int i = 0; i < count; ++i) {
      if (iov[i].iov_len == 0) continue;
      ERR_clear_error();
      size_t n = 0;
      int rc = SSL_write_ex(ssl_, iov[i].iov_base, iov[i].iov_len, &n);
      if (rc != 1) {
        if (total > 0) break;  // report progress; the next call sees the same condition
        return Translate(rc);
      }
      total += n;
      if (n < iov[i].iov_len) break;
    }
    return {net::IoResult::Kind::kOk, total, 0};
  }

  std::string last_error() const override { return error_; }

 private:
  net::IoResult Translate(int rc) {
    int error = SSL_get_error(ssl_, rc);
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE &&
        error != SSL_ERROR_ZERO_RETURN) {
      failed_ = true;
    }
    switch (error) {
      case SSL_ERROR_WANT_READ:
        return {net::IoResult::Kind::kWantRead, 0, 0};
      case SSL_ERROR_WANT_WRITE:
        return {net::IoResult::Kind::kWantWrite, 0, 0};
      case SSL_ERROR_ZERO_RETURN:
        return {net::IoResult::Kind::kEof, 0, 0};
      default:
        break;
    }
    long verify = SSL_get_verify_result(ssl_);
    error_ = OpenSslErrors();
    if (verify != X509_V_OK) {
      error_ =
          std::string("certificate verification failed: ") + X509_verify_cert_error_string(verify);
    } else if (error_.empty()) {
      error_ = error == SSL_ERROR_SYSCALL ? "connection reset during TLS" : "TLS error";
      if (error == SSL_ERROR_SYSCALL) return {net::IoResult::Kind::kEof, 0, 0};
    }
    return {net::IoResult::Kind::kError, 0, 0};
  }

  TlsClientContext* context_;
  std::unique_ptr<net::Transport> plain_;
  SSL* ssl_;
  std::string host_;
  std::string error_;
  bool established_ = false;
  bool failed_ = false;
};

namespace {

int OnNewSession(SSL* ssl, SSL_SESSION* session) {
  auto* transport = static_cast<TlsTransport*>(SSL_get_app_data(ssl));
  if (transport == nullptr) return 0;
  transport->context()->StoreSession(transport->host(), session);
  return 1;  // we keep the reference
}

}  // namespace

Result<std::unique_ptr<TlsClientContext>> TlsClientContext::Create(const TlsOptions& options) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status::Error("TLS: " + OpenSslErrors());
  std::unique_ptr<TlsClientContext> context(new TlsClientContext(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
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
                           OpenSslErrors());
    }
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }
  return context;
}

TlsClientContext::~TlsClientContext() {
  for (auto& [host, session] : sessions_)
    SSL_SESSION_free(session);
  SSL_CTX_free(ctx_);
}

void TlsClientContext::StoreSession(const std::string& host, SSL_SESSION* session) {
  auto [it, inserted] = sessions_.emplace(host, session);
  if (!inserted) {
    SSL_SESSION_free(it->second);
    it->second = session;
  }
}

SSL_SESSION* TlsClientContext::FindSession(const std::string& host) const {
  auto it = sessions_.find(host);
  return it == sessions_.end() ? nullptr : it->second;
}

Result<std::unique_ptr<net::Transport>> TlsClientContext::Wrap(
    std::unique_ptr<net::Transport> plain, const std::string& host) {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return Status::Error("TLS: " + OpenSslErrors());
  if (SSL_set_fd(ssl, plain->fd()) != 1) {
    SSL_free(ssl);
    return Status::Error("TLS: " + OpenSslErrors());
  }
  if (IsIpLiteral(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(host.c_str()));  // SSL_set_tlsext_host_name, without its C cast
    SSL_set1_host(ssl, host.c_str());
  }
  if (SSL_SESSION* session = FindSession(host)) SSL_set_session(ssl, session);
  return std::unique_ptr<net::Transport>(
      std::make_unique<TlsTransport>(this, std::move(plain), ssl, host));
}

}  // namespace hammer::http
