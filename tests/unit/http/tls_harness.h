// For tests of TLS termination: an HttpListener with TLS on its own loop thread (a
// kernel-chosen port on 127.0.0.1), a blocking OpenSSL client that controls ALPN, sessions and
// how its records reach the socket, a suite fixture with a throw-away CA, and small helpers.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hammer/http/server.h"
#include "hammer/http/tls_server.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/socket.h"
#include "raw_client.h"
#include "test_pki.h"

namespace hammer::testing {

// Polls `condition` until it holds or five seconds pass (the server counts on its own thread).
inline bool Eventually(const std::function<bool()>& condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

// A blocking TCP connection to 127.0.0.1:port with 5 s send/receive timeouts; -1 on failure.
inline int ConnectTcp(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A blocking TLS client: connects, runs the handshake offering `alpn` (nothing when empty),
// verifies the server as "localhost" against `ca_file`, and can send GETs on the connection.
class TlsProbe {
 public:
  TlsProbe(uint16_t port, const std::string& ca_file, std::vector<std::string> alpn = {"http/1.1"},
           SSL_SESSION* session = nullptr) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_load_verify_locations(ctx_, ca_file.c_str(), nullptr);
    fd_ = ConnectTcp(port);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    SSL_set1_host(ssl_, "localhost");
    if (!alpn.empty()) {
      std::string wire;
      for (const std::string& p : alpn)
        wire += static_cast<char>(p.size()) + p;
      SSL_set_alpn_protos(ssl_, reinterpret_cast<const unsigned char*>(wire.data()),
                          static_cast<unsigned int>(wire.size()));
    }
    if (session != nullptr) SSL_set_session(ssl_, session);
    ok_ = fd_ >= 0 && SSL_connect(ssl_) == 1;
  }
  ~TlsProbe() {
    if (ok_) SSL_shutdown(ssl_);  // close_notify: OpenSSL keeps only such sessions resumable
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    if (fd_ >= 0) close(fd_);
  }

  bool ok() const { return ok_; }
  bool resumed() const { return SSL_session_reused(ssl_) == 1; }
  std::string alpn() const {
    const unsigned char* data = nullptr;
    unsigned int length = 0;
    SSL_get0_alpn_selected(ssl_, &data, &length);
    return data == nullptr ? "" : std::string(reinterpret_cast<const char*>(data), length);
  }
  // The server certificate's serial number in hex ("" without one).
  std::string serial() const {
    X509* cert = SSL_get1_peer_certificate(ssl_);
    if (cert == nullptr) return "";
    BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
    char* hex = BN_bn2hex(bn);
    std::string text = hex;
    OPENSSL_free(hex);
    BN_free(bn);
    X509_free(cert);
    return text;
  }
  // A resumable session of this connection (the caller frees it), once a response was read.
  SSL_SESSION* TakeSession() const { return SSL_get1_session(ssl_); }
  int fd() const { return fd_; }

  // From here on, Write encrypts into memory and SendHeld writes all of it in one send(2), so
  // that many records reach the server together. The socket still serves reads.
  void HoldWrites() { SSL_set0_wbio(ssl_, BIO_new(BIO_s_mem())); }
  // Encrypts `bytes` as records of at most 16 KiB (one record when shorter); false on failure.
  bool Write(std::string_view bytes) {
    return SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) ==
           static_cast<int>(bytes.size());
  }
  // After HoldWrites: sends what Write encrypted since the last SendHeld; false on failure.
  bool SendHeld() {
    char* data = nullptr;
    long size = BIO_get_mem_data(SSL_get_wbio(ssl_), &data);
    bool sent = send(fd_, data, static_cast<size_t>(size), MSG_NOSIGNAL) == size;
    (void)BIO_reset(SSL_get_wbio(ssl_));
    return sent;
  }
  // Reads until `count` complete responses (Content-Length framed) have arrived, the server
  // closes, or 5 s pass without a byte; returns what was read.
  std::string ReadResponses(int count) {
    std::string out;
    char buf[16384];
    while (http::testing::CountResponses(out) < count) {
      int n = SSL_read(ssl_, buf, sizeof(buf));
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }

  // GET `path` on this connection; the response body, or "" when anything failed.
  std::string Get(const std::string& path) {
    std::string request = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
    if (SSL_write(ssl_, request.data(), static_cast<int>(request.size())) <= 0) return "";
    std::string response;
    char buf[4096];
    while (true) {
      size_t head_end = response.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        size_t at = response.find("Content-Length: ");
        if (at == std::string::npos) return "";
        size_t length = std::stoul(response.substr(at + 16));
        if (response.size() >= head_end + 4 + length) return response.substr(head_end + 4, length);
      }
      int n = SSL_read(ssl_, buf, sizeof(buf));
      if (n <= 0) return "";
      response.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool ok_ = false;
};

// The listener serves `handler` (not owned; it must outlive the server) on loop(), which is
// started by the constructor and stopped and joined by the destructor. Failures to create the
// TLS context or to listen are test failures (port stays 0).
class TlsTestServer {
 public:
  TlsTestServer(const http::TlsServerOptions& options, http::RequestHandler* handler,
                http::ServerOptions server = {}) {
    Result<std::shared_ptr<http::TlsServerContext>> created =
        http::TlsServerContext::Create(options);
    EXPECT_TRUE(created.ok()) << created.status().message();
    if (!created.ok()) return;
    context = *created;
    EXPECT_TRUE(loops_.Init().ok());
    resources = std::make_shared<http::ServerResources>();
    server.resources = resources;
    server.tls = context;
    listener_ = std::make_unique<http::HttpListener>(loops_.loop(0), handler, server);
    EXPECT_TRUE(listener_->Listen(*net::SocketAddress::Parse("127.0.0.1:0"), false).ok());
    port = listener_->local_address().port();
    loops_.Start();
  }
  ~TlsTestServer() {
    loops_.StopAll();
    loops_.Join();
    listener_.reset();
  }
  TlsTestServer(const TlsTestServer&) = delete;
  TlsTestServer& operator=(const TlsTestServer&) = delete;

  net::EventLoop* loop() { return loops_.loop(0); }

  std::shared_ptr<http::TlsServerContext> context;
  std::shared_ptr<http::ServerResources> resources;
  uint16_t port = 0;

 private:
  net::LoopGroup loops_{1};
  std::unique_ptr<http::HttpListener> listener_;
};

// A suite whose tests share a throw-away CA (pki_) and a server certificate it signed for
// localhost and 127.0.0.1 with serial number 1001 (leaf_), made once for the suite.
class TlsSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new TestPki();
    leaf_ = pki_->IssueLeaf("server", "DNS:localhost,IP:127.0.0.1", 0x1001);
  }
  static void TearDownTestSuite() {
    delete pki_;
    pki_ = nullptr;
  }
  // Server options with leaf_'s certificate and key, the rest defaults.
  static http::TlsServerOptions Options() {
    http::TlsServerOptions options;
    options.cert_file = leaf_.cert;
    options.key_file = leaf_.key;
    return options;
  }

  inline static TestPki* pki_ = nullptr;
  inline static LeafFiles leaf_;
};

}  // namespace hammer::testing
