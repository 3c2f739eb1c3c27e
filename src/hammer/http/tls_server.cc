#include "hammer/http/tls_server.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <ctime>
#include <utility>

namespace hammer::http {

namespace {

// TLS 1.2 suites of Mozilla's "intermediate" configuration without the DHE ones (every client
// that speaks TLS 1.2 has ECDHE): forward secrecy and AEAD only. TLS 1.3 suites are OpenSSL's
// defaults, all of which are AEAD.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

constexpr unsigned char kSessionIdContext[] = "hammer";

int SelectAlpn(SSL* /*ssl*/, const unsigned char** out, unsigned char* out_length,
               const unsigned char* offered, unsigned int offered_length, void* arg) {
  const std::string& ours = static_cast<TlsServerContext*>(arg)->alpn_wire();
  unsigned char* selected = nullptr;
  // Walks our list in order and takes the first protocol the client offers: our preference.
  int rc = SSL_select_next_proto(&selected, out_length,
                                 reinterpret_cast<const unsigned char*>(ours.data()),
                                 static_cast<unsigned int>(ours.size()), offered, offered_length);
  if (rc != OPENSSL_NPN_NEGOTIATED) return SSL_TLSEXT_ERR_ALERT_FATAL;  // RFC 7301, 3.2
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

// "subject /CN=localhost, serial 1A2B, expires 2025-01-31 12:00:00 UTC" and the expiry.
std::pair<std::string, int64_t> DescribeCertificate(SSL_CTX* ctx) {
  X509* cert = SSL_CTX_get0_certificate(ctx);
  if (cert == nullptr) return {"", 0};
  std::string text;
  char subject[256];
  X509_NAME_oneline(X509_get_subject_name(cert), subject, sizeof(subject));
  text += std::string("subject ") + subject;
  if (BIGNUM* serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr)) {
    if (char* hex = BN_bn2hex(serial)) {
      text += std::string(", serial ") + hex;
      OPENSSL_free(hex);
    }
    BN_free(serial);
  }
  int64_t not_after = 0;
  tm expiry{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &expiry) == 1) {
    not_after = static_cast<int64_t>(timegm(&expiry));
    char when[32];
    std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &expiry);
    text += std::string(", expires ") + when;
  }
  return {text, not_after};
}

}  // namespace

TlsServerContext::TlsServerContext(TlsServerOptions options) : options_(std::move(options)) {}

TlsServerContext::~TlsServerContext() {
  SSL_CTX_free(current_);
}

Result<std::shared_ptr<TlsServerContext>> TlsServerContext::Create(TlsServerOptions options) {
  if (options.cert_file.empty()) return Status::Error("a TLS listener needs a certificate");
  if (options.alpn.empty()) return Status::Error("the ALPN list is empty");
  std::shared_ptr<TlsServerContext> context(new TlsServerContext(std::move(options)));
  for (const std::string& protocol : context->options_.alpn) {
    if (protocol.empty() || protocol.size() > 255) {
      return Status::Error("ALPN protocol name must be 1-255 bytes: '" + protocol + "'");
    }
    context->alpn_wire_.push_back(static_cast<char>(protocol.size()));
    context->alpn_wire_ += protocol;
  }
  Result<SSL_CTX*> ctx = context->Build(nullptr);
  if (!ctx.ok()) return ctx.status();
  context->current_ = *ctx;
  std::tie(context->certificate_, context->not_after_unix_) = DescribeCertificate(*ctx);
  return context;
}

Result<SSL_CTX*> TlsServerContext::Build(SSL_CTX* previous) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Status::Error("TLS: " + OpenSslErrorText());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  // Partial writes: the connection keeps its own output buffer and continues where a write
  // stopped. Released buffers: an idle keep-alive connection holds no TLS record buffers.
  // Read-ahead: one read(2) takes every record that has arrived instead of a header and a
  // body per record (and a short one tells the connection the socket is drained).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_read_ahead(ctx, 1);
  if (SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1) {
    SSL_CTX_free(ctx);
    return Status::Error("TLS: " + OpenSslErrorText());
  }
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
  SSL_CTX_set_session_id_context(ctx, kSessionIdContext, sizeof(kSessionIdContext) - 1);
  SSL_CTX_set_alpn_select_cb(ctx, SelectAlpn, this);
  if (previous != nullptr) {
    // Tickets issued before a reload still decrypt after it.
    unsigned char keys[80];
    if (SSL_CTX_get_tlsext_ticket_keys(previous, keys, sizeof(keys)) == 1) {
      SSL_CTX_set_tlsext_ticket_keys(ctx, keys, sizeof(keys));
    }
  }
  if (Status s = UseCertificateAndKey(ctx, options_.cert_file, options_.key_file); !s.ok()) {
    SSL_CTX_free(ctx);
    return s;
  }
  return ctx;
}

Status TlsServerContext::Reload() {
  SSL_CTX* previous;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    previous = current_;
    SSL_CTX_up_ref(previous);
  }
  Result<SSL_CTX*> built = Build(previous);
  SSL_CTX_free(previous);
  if (!built.ok()) {
    reload_failures_.fetch_add(1, std::memory_order_relaxed);
    return built.status();
  }
  auto [description, not_after] = DescribeCertificate(*built);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::swap(current_, *built);
    certificate_ = std::move(description);
    not_after_unix_ = not_after;
  }
  // The replaced SSL_CTX lives on while connections made with it do (they hold references).
  SSL_CTX_free(*built);
  reloads_.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

Result<std::unique_ptr<net::Transport>> TlsServerContext::Wrap(
    std::unique_ptr<net::Transport> plain) {
  SSL* ssl;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ssl = SSL_new(current_);
  }
  if (ssl == nullptr) return Status::Error("TLS: " + OpenSslErrorText());
  if (!AttachSocket(ssl, plain->fd())) {
    SSL_free(ssl);
    return Status::Error("TLS: " + OpenSslErrorText());
  }
  SSL_set_accept_state(ssl);
  return std::unique_ptr<net::Transport>(std::make_unique<TlsTransport>(
      TlsTransport::Role::kServer, this, std::move(plain), ssl, std::string()));
}

void TlsServerContext::OnHandshakeDone(const TlsTransport& transport) {
  handshakes_.fetch_add(1, std::memory_order_relaxed);
  if (transport.resumed()) resumed_.fetch_add(1, std::memory_order_relaxed);
}

void TlsServerContext::OnHandshakeFailed(const TlsTransport& /*transport*/,
                                         net::IoResult::Kind kind) {
  auto& counter = kind == net::IoResult::Kind::kEof ? failed_closed_ : failed_error_;
  counter.fetch_add(1, std::memory_order_relaxed);
}

TlsServerStats TlsServerContext::stats() const {
  TlsServerStats s;
  s.handshakes = handshakes_.load(std::memory_order_relaxed);
  s.resumed = resumed_.load(std::memory_order_relaxed);
  s.failed_error = failed_error_.load(std::memory_order_relaxed);
  s.failed_closed = failed_closed_.load(std::memory_order_relaxed);
  s.failed_timeout = failed_timeout_.load(std::memory_order_relaxed);
  s.reloads = reloads_.load(std::memory_order_relaxed);
  s.reload_failures = reload_failures_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mutex_);
  s.certificate = certificate_;
  s.not_after_unix = not_after_unix_;
  return s;
}

}  // namespace hammer::http
