#include "hammer/http/tls_transport.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <cerrno>
#include <utility>

namespace hammer::http {

namespace {

// OpenSSL's socket BIO writes with write(2): a peer that reset the connection would raise
// SIGPIPE and end the process (nothing in hammer ignores it, so that `hammer load | head` ends
// as Unix tools do). This BIO is the socket BIO with send(MSG_NOSIGNAL) for writes, so a gone
// peer is an EPIPE error on that connection only, and reads that note a drained socket.
int SendNoSignal(BIO* bio, const char* data, int length) {
  int fd = -1;
  BIO_get_fd(bio, &fd);
  BIO_clear_retry_flags(bio);
  ssize_t n = send(fd, data, static_cast<size_t>(length), MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    BIO_set_retry_write(bio);
  }
  return static_cast<int>(n);
}

// The socket BIO's read, noting in the BIO's data (a bool of the TlsTransport) whether the
// socket gave less than asked: then it was drained, and with read-ahead the SSL object holds
// everything that had arrived (see TlsTransport::short_read_drains).
int ReadNotingDrain(BIO* bio, char* out, int length) {
  static const auto socket_read = BIO_meth_get_read(BIO_s_socket());
  int n = socket_read(bio, out, length);
  if (auto* drained = static_cast<bool*>(BIO_get_data(bio))) *drained = n < length;
  return n;
}

const BIO_METHOD* NoSignalSocketMethod() {
  static const BIO_METHOD* method = [] {
    const BIO_METHOD* socket = BIO_s_socket();
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                                 "hammer socket");
    BIO_meth_set_write(m, SendNoSignal);
    BIO_meth_set_read(m, ReadNotingDrain);
    BIO_meth_set_puts(m, BIO_meth_get_puts(socket));
    BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(socket));
    BIO_meth_set_create(m, BIO_meth_get_create(socket));
    BIO_meth_set_destroy(m, BIO_meth_get_destroy(socket));
    return m;
  }();
  return method;
}

}  // namespace

std::string OpenSslErrorText() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    if (!text.empty()) text += "; ";
    text += buf;
  }
  return text;
}

bool AttachSocket(SSL* ssl, int fd) {
  BIO* bio = BIO_new(NoSignalSocketMethod());
  if (bio == nullptr) return false;
  BIO_set_fd(bio, fd, BIO_NOCLOSE);
  SSL_set_bio(ssl, bio, bio);  // the SSL owns the BIO from here
  return true;
}

Status UseCertificateAndKey(SSL_CTX* ctx, const std::string& cert_file,
                            const std::string& key_file) {
  const std::string& key = key_file.empty() ? cert_file : key_file;
  // No passphrase prompt on the terminal: an encrypted key fails to load, with an error.
  SSL_CTX_set_default_passwd_cb(ctx, [](char*, int, int, void*) { return 0; });
  ERR_clear_error();
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return Status::Error("cannot load certificate from " + cert_file + ": " + OpenSslErrorText());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      return Status::Error("private key " + key + " does not match certificate " + cert_file +
                           ": " + OpenSslErrorText());
    }
    return Status::Error("cannot load private key from " + key +
                         " (PEM, not encrypted): " + OpenSslErrorText());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Status::Error("private key " + key + " does not match certificate " + cert_file + ": " +
                         OpenSslErrorText());
  }
  return Status::Ok();
}

TlsTransport::TlsTransport(Role role, TlsEndpoint* endpoint, std::unique_ptr<net::Transport> plain,
                           SSL* ssl, std::string session_key)
    : role_(role),
      endpoint_(endpoint),
      plain_(std::move(plain)),
      ssl_(ssl),
      session_key_(std::move(session_key)) {
  SSL_set_app_data(ssl_, this);
  // The socket BIO leaves its data pointer unused; ours records drained reads there.
  BIO_set_data(SSL_get_rbio(ssl_), &socket_drained_);
}

bool TlsTransport::short_read_drains() const {
  return socket_drained_ && !holds_input();
}

bool TlsTransport::holds_input() const {
  return SSL_has_pending(ssl_) == 1;
}

TlsTransport::~TlsTransport() {
  if (established_ && !failed_) {
    if (role_ == Role::kServer) {
      // close_notify, best effort (non-blocking, never waited for): the client learns that
      // the response was not truncated, and the session stays resumable.
      ERR_clear_error();
      SSL_shutdown(ssl_);
      ERR_clear_error();
    } else {
      // Closing a healthy connection without close_notify would make OpenSSL mark its session
      // not resumable; a quiet shutdown keeps it for the next connection to the host (TLS
      // resumption) without a write.
      SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    }
  }
  SSL_free(ssl_);
}

TlsTransport* TlsTransport::FromSsl(const SSL* ssl) {
  return static_cast<TlsTransport*>(SSL_get_app_data(ssl));
}

bool TlsTransport::resumed() const {
  return established_ && SSL_session_reused(ssl_) == 1;
}

std::string_view TlsTransport::application_protocol() const {
  const unsigned char* data = nullptr;
  unsigned int length = 0;
  SSL_get0_alpn_selected(ssl_, &data, &length);
  if (data == nullptr) return {};
  return {reinterpret_cast<const char*>(data), length};
}

net::IoResult TlsTransport::Handshake() {
  if (established_) return {};
  ERR_clear_error();
  int rc = SSL_do_handshake(ssl_);
  if (rc == 1) {
    established_ = true;
    if (endpoint_ != nullptr) endpoint_->OnHandshakeDone(*this);
    return {};
  }
  net::IoResult r = Translate(rc);
  if (endpoint_ != nullptr &&
      (r.kind == net::IoResult::Kind::kError || r.kind == net::IoResult::Kind::kEof)) {
    endpoint_->OnHandshakeFailed(*this, r.kind);
  }
  return r;
}

net::IoResult TlsTransport::Read(char* buf, size_t len) {
  ERR_clear_error();
  size_t n = 0;
  int rc = SSL_read_ex(ssl_, buf, len, &n);
  if (rc == 1) return {net::IoResult::Kind::kOk, n, 0};
  return Translate(rc);
}

net::IoResult TlsTransport::Write(const iovec* iov, int count) {
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

net::IoResult TlsTransport::Translate(int rc) {
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
  unsigned long first = ERR_peek_error();
  // OpenSSL 3 reports a peer that closed without close_notify as an error. During the
  // handshake that is a peer that went away (a TCP probe, a client giving up): kEof.
  bool unexpected_eof = ERR_GET_LIB(first) == ERR_LIB_SSL &&
                        ERR_GET_REASON(first) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
  error_ = OpenSslErrorText();
  if (unexpected_eof && !established_) {
    error_ = "connection closed during the TLS handshake";
    return {net::IoResult::Kind::kEof, 0, 0};
  }
  if (verify != X509_V_OK && role_ == Role::kClient) {
    error_ =
        std::string("certificate verification failed: ") + X509_verify_cert_error_string(verify);
  } else if (error_.empty()) {
    error_ = error == SSL_ERROR_SYSCALL ? "connection reset during TLS" : "TLS error";
    if (error == SSL_ERROR_SYSCALL) return {net::IoResult::Kind::kEof, 0, 0};
  }
  return {net::IoResult::Kind::kError, 0, 0};
}

}  // namespace hammer::http
