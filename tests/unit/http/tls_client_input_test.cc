// A response that TLS holds while the socket is empty, on the client side: HttpClient's
// connection reads until OpenSSL has nothing left (no read budget), and a response whose
// reading was paused (ResponseFlow) is read again from a deferred task when it resumes, since
// the records OpenSSL read ahead while it was paused raise no epoll event.
//
// The server is written here (blocking OpenSSL on a thread of its own) so that it can encrypt
// its answer as many small records into memory and send them in one send(2).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "hammer/http/client.h"
#include "hammer/http/url.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/resolver.h"
#include "tls_harness.h"

namespace hammer::http {
namespace {

constexpr Nanos kGuard = 10 * kSecond;

// Accepts one connection on 127.0.0.1 (a port the kernel chose), completes the TLS handshake
// with `leaf`, reads one request head and answers 200 with a body of `pieces` records of
// `piece_size` bytes ('a' to 'z' in turn, one letter a record), all sent in one send(2). Then
// waits for the client to close, never first (a close would raise the event the test is about),
// with 30 s as the safety net.
class RecordedAnswerServer {
 public:
  RecordedAnswerServer(const hammer::testing::LeafFiles& leaf, int pieces, size_t piece_size)
      : leaf_(leaf), pieces_(pieces), piece_size_(piece_size) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), length), 0);
    EXPECT_EQ(listen(listen_fd_, 1), 0);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~RecordedAnswerServer() {
    shutdown(listen_fd_, SHUT_RDWR);  // wakes an accept still waiting
    thread_.join();
    close(listen_fd_);
  }
  RecordedAnswerServer(const RecordedAnswerServer&) = delete;
  RecordedAnswerServer& operator=(const RecordedAnswerServer&) = delete;

  std::string Body() const {
    std::string body;
    for (int i = 0; i < pieces_; ++i)
      body.append(piece_size_, static_cast<char>('a' + i % 26));
    return body;
  }

  uint16_t port = 0;

 private:
  void Serve() {
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    timeval timeout{30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_use_certificate_chain_file(ctx, leaf_.cert.c_str());
    SSL_CTX_use_PrivateKey_file(ctx, leaf_.key.c_str(), SSL_FILETYPE_PEM);
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) == 1) {
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        int n = SSL_read(ssl, buf, sizeof(buf));
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      SSL_set0_wbio(ssl, BIO_new(BIO_s_mem()));
      const std::string body = Body();
      const std::string head =
          "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
      SSL_write(ssl, head.data(), static_cast<int>(head.size()));
      for (size_t at = 0; at < body.size(); at += piece_size_)
        SSL_write(ssl, body.data() + at, static_cast<int>(piece_size_));
      char* data = nullptr;
      long size = BIO_get_mem_data(SSL_get_wbio(ssl), &data);
      send(fd, data, static_cast<size_t>(size), MSG_NOSIGNAL);
      while (recv(fd, buf, sizeof(buf), 0) > 0) {
      }
    }
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
  }

  hammer::testing::LeafFiles leaf_;
  int pieces_;
  size_t piece_size_;
  int listen_fd_ = -1;
  std::thread thread_;
};

// Pauses the response at its first piece of body and resumes it from the loop right after.
class PauseOnce final : public ResponseHandler {
 public:
  PauseOnce(net::EventLoop* loop, ResponseFlow* flow) : loop_(loop), flow_(flow) {}
  void OnResponseHead(const ResponseHead& head) override { status = head.status; }
  void OnResponseBody(std::string_view data) override {
    body.append(data);
    if (paused_at != 0) return;
    paused_at = body.size();
    flow_->Pause();
    loop_->Defer([this] { flow_->Resume(); });
  }
  void OnResponseComplete(const ExchangeResult& r) override {
    result = r;
    loop_->Stop();
  }

  int status = 0;
  size_t paused_at = 0;
  std::string body;
  ExchangeResult result;

 private:
  net::EventLoop* loop_;
  ResponseFlow* flow_;
};

using TlsClientInputTest = hammer::testing::TlsSuite;

// The head and 100 records of 100 bytes arrive in one segment: the client's first reads take
// them all into OpenSSL and return the head and the first record, where the handler pauses.
// The other 99 records are in OpenSSL's buffer, the socket is empty: resuming must read them.
TEST_F(TlsClientInputTest, PausedResponseHeldByTlsIsReadWhenResumed) {
  RecordedAnswerServer server(leaf_, 100, 100);
  net::EventLoop loop;
  ASSERT_TRUE(loop.Init().ok());
  net::Resolver resolver(1);
  ClientOptions options;
  options.tls.ca_file = pki_->ca_file();
  HttpClient client(&loop, &resolver, options);
  Result<Url> url = ParseUrl("https://localhost:" + std::to_string(server.port) + "/");
  ASSERT_TRUE(url.ok());
  const std::string head = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ResponseFlow flow;
  PauseOnce handler(&loop, &flow);
  ClientRequest request;
  request.origin = client.GetOrigin(*url);
  request.head = head;
  request.flow = &flow;
  client.Send(request, &handler);
  bool guard_fired = false;
  net::Timer guard(&loop, [&] {
    guard_fired = true;
    loop.Stop();
  });
  guard.ArmAt(loop.UpdateNow() + kGuard);
  loop.Run();
  ASSERT_FALSE(guard_fired) << "the response stalled after " << handler.body.size() << " bytes";
  ASSERT_FALSE(handler.result.failure) << handler.result.detail;
  EXPECT_EQ(handler.status, 200);
  EXPECT_GT(handler.paused_at, 0u);
  EXPECT_LT(handler.paused_at, server.Body().size());  // it paused before the end
  EXPECT_EQ(handler.body, server.Body());
  client.CloseIdle();
}

}  // namespace
}  // namespace hammer::http
