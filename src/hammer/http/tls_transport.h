// TlsTransport: TLS (OpenSSL) over a connected TCP transport, for both sides of a connection.
// The client engine gets one from TlsClientContext::Wrap, the server from
// TlsServerContext::Wrap; the HTTP code above sees only net::Transport.
//
// The handshake is non-blocking: Handshake() returns kWantRead/kWantWrite until it is done
// (kOk) or has failed (kError with last_error(), or kEof when the peer closed during it). The
// owner of the transport (a TlsEndpoint: the client or server context) is told when a
// handshake ends, so it can count handshakes and resumptions. One transport is used by one
// loop thread; it owns its SSL object and the plain transport (hence the descriptor).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "hammer/base/status.h"
#include "hammer/net/transport.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace hammer::http {

class TlsTransport;

// The context that made a TlsTransport, told about its handshakes (on the transport's thread).
class TlsEndpoint {
 public:
  virtual ~TlsEndpoint() = default;
  virtual void OnHandshakeDone(const TlsTransport& transport) = 0;
  // `kind` is kError (a TLS alert, a verification failure, a protocol error) or kEof (the peer
  // closed or reset the connection before the handshake completed).
  virtual void OnHandshakeFailed(const TlsTransport& transport, net::IoResult::Kind kind) = 0;
};

class TlsTransport final : public net::Transport {
 public:
  enum class Role : uint8_t { kClient, kServer };

  // Takes ownership of `ssl`, whose descriptor is already plain's. `endpoint` must outlive the
  // transport. `session_key` names the server for the client's session cache ("host:port";
  // "" on the server side).
  TlsTransport(Role role, TlsEndpoint* endpoint, std::unique_ptr<net::Transport> plain, SSL* ssl,
               std::string session_key);
  ~TlsTransport() override;
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  int fd() const override { return plain_->fd(); }
  net::IoResult Handshake() override;
  net::IoResult Read(char* buf, size_t len) override;
  net::IoResult Write(const iovec* iov, int count) override;
  std::string last_error() const override { return error_; }
  std::string_view application_protocol() const override;
  // True when the socket read behind the last Read gave less than asked (the socket was empty
  // then; with read-ahead every byte that had arrived is in the SSL object) and the SSL object
  // holds no further record: the next bytes come with a new edge. Saves the read(2) that would
  // only return EAGAIN, once per request on each side.
  bool short_read_drains() const override;
  // SSL_has_pending: a record read ahead, or plaintext of a record not yet returned.
  bool holds_input() const override;

  Role role() const { return role_; }
  TlsEndpoint* endpoint() const { return endpoint_; }
  const std::string& session_key() const { return session_key_; }
  bool established() const { return established_; }
  // True once a handshake completed by resuming an earlier session.
  bool resumed() const;
  SSL* ssl() const { return ssl_; }

  // The transport an SSL object belongs to (from OpenSSL callbacks); null if none.
  static TlsTransport* FromSsl(const SSL* ssl);

 private:
  net::IoResult Translate(int rc);

  Role role_;
  TlsEndpoint* endpoint_;
  std::unique_ptr<net::Transport> plain_;
  SSL* ssl_;
  std::string session_key_;
  std::string error_;
  bool established_ = false;
  bool failed_ = false;
  bool socket_drained_ = false;  // written by the BIO's read
};

// Drains this thread's OpenSSL error queue into one line ("" when it is empty).
std::string OpenSslErrorText();

// Gives `ssl` the socket `fd` (not owned) through a socket BIO whose writes use
// send(MSG_NOSIGNAL): a peer that went away is an error on its connection, never a SIGPIPE for
// the process. False when OpenSSL cannot allocate the BIO.
bool AttachSocket(SSL* ssl, int fd);

// Loads a PEM certificate chain (leaf first) and its private key (from key_file, or from
// cert_file when key_file is empty) into `ctx` and checks that they match. Encrypted keys are
// refused rather than prompting on the terminal. Errors name the file at fault.
Status UseCertificateAndKey(SSL_CTX* ctx, const std::string& cert_file,
                            const std::string& key_file);

}  // namespace hammer::http
