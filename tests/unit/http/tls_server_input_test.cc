// Requests that TLS holds while the socket is empty. OpenSSL reads ahead (each socket read
// takes whatever has arrived into the SSL object) and SSL_read returns at most one record, so
// after a read the SSL object may hold requests that no epoll event will ever announce.
// ServerConnection reads at most a fixed number of times per event, and stops reading while
// its input buffer is full; in both cases it must come back to that input by itself.
//
// The client (TlsProbe, holding its writes) encrypts its requests into memory and sends them
// in one send(2), so that they reach the server's SSL object together.
#include <gtest/gtest.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <atomic>
#include <optional>
#include <string>

#include "hammer/http/server.h"
#include "hammer/http/tls_server.h"
#include "raw_client.h"
#include "tls_harness.h"

namespace hammer::http {
namespace {

using hammer::testing::Eventually;
using hammer::testing::TlsProbe;
using hammer::testing::TlsTestServer;
using testing::CountResponses;

// The local port of a socket (0 when it has none).
uint16_t LocalPort(int fd) {
  Result<net::SocketAddress> local = net::LocalAddress(fd);
  return local.ok() ? local->port() : 0;
}

// The server's end of a connection of this process: the socket whose local port is
// `server_port` and whose peer is `client_fd`'s local port; -1 if there is none.
int ServerEnd(uint16_t server_port, int client_fd) {
  const uint16_t client_port = LocalPort(client_fd);
  for (int fd = 0; fd < 4096; ++fd) {
    if (fd == client_fd || LocalPort(fd) != server_port) continue;
    Result<net::SocketAddress> peer = net::PeerAddress(fd);
    if (peer.ok() && peer->port() == client_port) return fd;
  }
  return -1;
}

// True when everything the client sent has left the server's socket (the server's SSL object
// or its buffers have it): nothing unacknowledged on the client, nothing unread on the server.
bool ServerTookEverything(int client_fd, int server_fd) {
  int unsent = 0;
  int unread = 0;
  return ioctl(client_fd, SIOCOUTQ, &unsent) == 0 && unsent == 0 &&
         ioctl(server_fd, FIONREAD, &unread) == 0 && unread == 0;
}

std::string Request(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
}

// Answers each request at once with its target as the body, except /hold, which is answered
// only when the test calls Release (on the server's loop thread).
class HoldingHandler final : public RequestHandler {
 public:
  void OnRequest(const IncomingRequest& request, Responder responder) override {
    if (request.head.target == "/hold") {
      held_ = responder;
      holding.store(true);
      return;
    }
    responder.Respond(200, "text/plain", request.head.target);
  }
  void Release() {
    held_->Respond(200, "text/plain", "/hold");
    held_.reset();
  }

  std::atomic<bool> holding{false};

 private:
  std::optional<Responder> held_;
};

using TlsServerInputTest = hammer::testing::TlsSuite;

// 200 requests, one record each, arrive in one segment: the server's first socket read takes
// them all, and it parses 16 per event. The rest raise no event: they are in OpenSSL's buffer.
TEST_F(TlsServerInputTest, PipelinedRequestsLeftInTheTlsBufferAfterTheReadBudgetAreServed) {
  HoldingHandler handler;
  TlsTestServer server(Options(), &handler);
  TlsProbe client(server.port, pki_->ca_file());
  ASSERT_TRUE(client.ok());
  client.HoldWrites();
  constexpr int kRequests = 200;
  for (int i = 0; i < kRequests; ++i)
    ASSERT_TRUE(client.Write(Request("/r" + std::to_string(i))));
  ASSERT_TRUE(client.SendHeld());
  std::string responses = client.ReadResponses(kRequests);
  EXPECT_EQ(CountResponses(responses), kRequests);
  EXPECT_TRUE(responses.ends_with("/r199")) << responses.substr(responses.size() - 100);
}

// While /hold is served, the server reads the pipelined requests behind it until its input
// buffer (max_head_bytes + 64 KiB) is full and stops reading. Its last read took part of the
// last record, so the rest of that record (about 4 KiB of requests) waits, decrypted, in the
// SSL object, and the socket is empty: answering /hold must bring the server back to them.
TEST_F(TlsServerInputTest, RequestsLeftInTheTlsBufferWhenReadingPausedAreServedOnResume) {
  HoldingHandler handler;
  ServerOptions options;
  options.limits.max_head_bytes = 1024;
  const size_t input_cap = options.limits.max_head_bytes + kReadChunk;
  TlsTestServer server(Options(), &handler, options);
  TlsProbe client(server.port, pki_->ca_file());
  ASSERT_TRUE(client.ok());
  client.HoldWrites();
  ASSERT_TRUE(client.Write(Request("/hold")));
  ASSERT_TRUE(client.SendHeld());
  ASSERT_TRUE(Eventually([&] { return handler.holding.load(); }));

  std::string pipelined;
  int requests = 0;
  while (pipelined.size() < input_cap + 4096)
    pipelined += Request("/p" + std::to_string(requests++));
  // 16 KiB records: the fifth is only partly read before the pause.
  ASSERT_TRUE(client.Write(pipelined));
  ASSERT_TRUE(client.SendHeld());
  const int server_fd = ServerEnd(server.port, client.fd());
  ASSERT_GE(server_fd, 0);
  ASSERT_TRUE(Eventually([&] { return ServerTookEverything(client.fd(), server_fd); }));

  server.loop()->Post([&] { handler.Release(); });
  std::string responses = client.ReadResponses(1 + requests);
  EXPECT_EQ(CountResponses(responses), 1 + requests);
  const std::string last = "/p" + std::to_string(requests - 1);
  EXPECT_TRUE(responses.ends_with(last)) << responses.substr(responses.size() - 100);
}

}  // namespace
}  // namespace hammer::http
