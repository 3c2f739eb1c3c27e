// HttpListener's streamed bodies: a request body above stream_body_above reaches the handler
// as a BodyStream while it is still being read, and a response body goes out from one
// (Responder::RespondStream). The handler here is a streaming echo: it moves the request's
// bytes into the response as both streams allow, so both directions' back-pressure is used.
// The client is HttpClient (its own streamed body) or a raw socket that leaves mid-body.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client_loop.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/client.h"
#include "hammer/http/server.h"
#include "hammer/http/url.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/resolver.h"
#include "hammer/net/socket.h"

namespace hammer::http {
namespace {

constexpr Nanos kGuard = 20 * kSecond;
constexpr size_t kThreshold = 64 * 1024;
constexpr size_t kWindow = 128 * 1024;

using testing::PatternByte;
using testing::PatternSource;

// Moves a request stream into a response stream, as far as both allow.
class StreamEcho final : public BodyStream::Consumer, public BodyStream::Producer {
 public:
  StreamEcho(net::EventLoop* loop, std::shared_ptr<BodyStream> in, Responder responder,
             std::atomic<int>* failures)
      : in_(std::move(in)), failures_(failures) {
    out_ = std::make_shared<BodyStream>(loop, in_->length(), kWindow, nullptr);
    in_->SetConsumer(this);
    out_->SetProducer(this);
    std::string head = "HTTP/1.1 200 OK\r\n";
    head += in_->length() ? "Content-Length: " + std::to_string(*in_->length()) + "\r\n\r\n"
                          : "Transfer-Encoding: chunked\r\n\r\n";
    responder.RespondStream(head, out_, /*keep_alive=*/true);
    Move();
  }
  ~StreamEcho() override { Detach(); }
  void OnBodyStreamReady() override { Move(); }
  void OnBodyStreamDrained() override { Move(); }

 private:
  void Move() {
    if (in_ == nullptr) return;
    if (in_->failed() || out_->cancelled()) {
      failures_->fetch_add(1);
      out_->Fail();
      Detach();
      return;
    }
    while (!out_->full() && !in_->available().empty()) {
      std::string_view piece = in_->available();
      out_->Append(piece);
      in_->Consume(piece.size());
    }
    if (in_->finished()) {
      out_->End();
      Detach();
    }
  }
  void Detach() {
    if (in_ == nullptr) return;
    in_->SetConsumer(nullptr);
    out_->SetProducer(nullptr);
    in_.reset();
  }

  std::shared_ptr<BodyStream> in_;
  std::shared_ptr<BodyStream> out_;
  std::atomic<int>* failures_;
};

class EchoHandler final : public RequestHandler {
 public:
  explicit EchoHandler(net::EventLoop* loop) : loop_(loop) {}
  void OnRequest(const IncomingRequest& request, Responder responder) override {
    if (request.body_stream == nullptr) {
      buffered.fetch_add(1);
      responder.Respond(200, "text/plain", request.body);
      return;
    }
    streamed.fetch_add(1);
    echoes_.push_back(
        std::make_unique<StreamEcho>(loop_, request.body_stream, responder, &failures));
  }
  std::atomic<int> buffered{0};
  std::atomic<int> streamed{0};
  std::atomic<int> failures{0};

 private:
  net::EventLoop* loop_;
  std::vector<std::unique_ptr<StreamEcho>> echoes_;
};

class Collect final : public ResponseHandler {
 public:
  explicit Collect(net::EventLoop* loop) : loop_(loop) {}
  void OnResponseHead(const ResponseHead& head) override {
    status = head.status;
    major_version = head.major_version;
  }
  void OnResponseBody(std::string_view data) override {
    for (char c : data) {
      if (c != PatternByte(received)) ++wrong;
      ++received;
    }
  }
  void OnResponseComplete(const ExchangeResult& r) override {
    result = r;
    loop_->Stop();
  }
  net::EventLoop* loop_;
  int status = 0;
  int major_version = 0;
  uint64_t received = 0;
  uint64_t wrong = 0;
  ExchangeResult result;
};

class ServerStreamTest : public testing::ClientLoopTest {
 protected:
  ServerStreamTest() : ClientLoopTest(kGuard) {}

  void SetUp() override {
    ASSERT_TRUE(server_loops_.Init().ok());
    handler_ = std::make_unique<EchoHandler>(server_loops_.loop(0));
    ServerOptions options;
    options.stream_body_above = kThreshold;
    options.stream_window = kWindow;
    options.http2.enabled = true;  // h2c with prior knowledge too (ServerH2StreamTest)
    listener_ = std::make_unique<HttpListener>(server_loops_.loop(0), handler_.get(), options);
    Status s = listener_->Listen(*net::SocketAddress::Parse("127.0.0.1:0"), false);
    ASSERT_TRUE(s.ok()) << s.message();
    server_loops_.Start();
    ClientLoopTest::SetUp();
    if (HasFatalFailure()) return;
    origin_ =
        client_->GetOrigin(*ParseUrl("http://" + listener_->local_address().ToString() + "/"));
  }
  void TearDown() override {
    client_.reset();
    server_loops_.StopAll();
    server_loops_.Join();
  }

  // Streams `size` bytes of the pattern to the echo and checks what comes back.
  void EchoThrough(std::optional<uint64_t> length, uint64_t size, int major_version = 1) {
    auto stream = std::make_shared<BodyStream>(&loop_, length, kWindow, nullptr);
    PatternSource source(&loop_, stream.get(), size);
    std::string head = "POST /echo HTTP/1.1\r\nHost: x\r\n";
    head += length ? "Content-Length: " + std::to_string(*length) + "\r\n\r\n"
                   : "Transfer-Encoding: chunked\r\n\r\n";
    Collect collect(&loop_);
    ClientRequest request;
    request.origin = origin_;
    request.head = head;
    request.body_stream = stream.get();
    client_->Send(request, &collect);
    source.Start();
    ASSERT_TRUE(RunLoop());
    ASSERT_FALSE(collect.result.failure) << collect.result.detail;
    EXPECT_EQ(collect.status, 200);
    EXPECT_EQ(collect.major_version, major_version);
    EXPECT_EQ(collect.received, size);
    EXPECT_EQ(collect.wrong, 0u);
  }

  // Polls (the server runs on its own thread) until `done` or the guard.
  template <typename Predicate>
  bool Eventually(Predicate done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(kGuard);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  net::LoopGroup server_loops_{1};
  std::unique_ptr<EchoHandler> handler_;
  std::unique_ptr<HttpListener> listener_;
  const Origin* origin_ = nullptr;
};

TEST_F(ServerStreamTest, BodyWithALengthIsStreamedBothWays) {
  const uint64_t size = 4 * 1024 * 1024 + 3;
  EchoThrough(size, size);
  EXPECT_EQ(handler_->streamed.load(), 1);
  EXPECT_EQ(handler_->failures.load(), 0);
  // Every buffer is given back once the connection closes (an idle one keeps a small output
  // buffer, charged).
  client_->CloseIdle();
  EXPECT_TRUE(Eventually([&] { return listener_->resources().budget().used() == 0; }));
}

TEST_F(ServerStreamTest, ChunkedBodyIsStreamedOncePastTheThreshold) {
  const uint64_t size = 2 * 1024 * 1024 + 1;
  EchoThrough(std::nullopt, size);
  EXPECT_EQ(handler_->streamed.load(), 1);
  EXPECT_EQ(handler_->buffered.load(), 0);
}

TEST_F(ServerStreamTest, BodyUnderTheThresholdIsBufferedWhole) {
  EchoThrough(kThreshold, kThreshold);
  EXPECT_EQ(handler_->streamed.load(), 0);
  EXPECT_EQ(handler_->buffered.load(), 1);
}

TEST_F(ServerStreamTest, ClientLeavingMidBodyFailsTheRequestStream) {
  net::Fd sock(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  net::SocketAddress address = listener_->local_address();
  ASSERT_EQ(connect(sock.get(), address.sockaddr_ptr(), address.length()), 0);
  std::string out = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4194304\r\n\r\n";
  out.append(512 * 1024, 'a');
  size_t sent = 0;
  while (sent < out.size()) {
    ssize_t n = send(sock.get(), out.data() + sent, out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) break;  // the server stopped reading (its window is full): enough
    sent += static_cast<size_t>(n);
  }
  ASSERT_TRUE(Eventually([&] { return handler_->streamed.load() == 1; }));
  sock = net::Fd();  // leaves with most of the body unsent
  EXPECT_TRUE(Eventually([&] { return handler_->failures.load() == 1; }));
  EXPECT_TRUE(Eventually([&] { return listener_->resources().budget().used() == 0; }));
}

// The second read brings both the bytes that take a chunked body past the threshold and its
// end: the request goes to the handler with the whole body in an ended stream.
TEST_F(ServerStreamTest, ChunkedBodyPassingTheThresholdAndEndingInOneReadArrivesWhole) {
  net::Fd sock(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  net::SocketAddress address = listener_->local_address();
  ASSERT_EQ(connect(sock.get(), address.sockaddr_ptr(), address.length()), 0);
  const size_t size = kThreshold + 6 * 1024;
  char hex[16];
  std::snprintf(hex, sizeof(hex), "%zx", size);
  std::string out =
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
      "Connection: close\r\n\r\n" +
      std::string(hex) + "\r\n" + std::string(size, 'z') + "\r\n0\r\n\r\n";
  ASSERT_EQ(send(sock.get(), out.data(), out.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(out.size()));
  std::string answer;
  char buffer[16384];
  for (ssize_t n; (n = recv(sock.get(), buffer, sizeof(buffer), 0)) > 0;)
    answer.append(buffer, static_cast<size_t>(n));
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer.substr(0, 200);
  EXPECT_NE(answer.find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_EQ(static_cast<size_t>(std::count(answer.begin(), answer.end(), 'z')), size);
  EXPECT_EQ(handler_->streamed.load(), 1);
  EXPECT_EQ(handler_->failures.load(), 0);
}

// The same over HTTP/2 (h2c): the client's streamed body is its stream's DATA, and the server
// passes a body over the threshold on as it arrives, reopening the client's stream window only
// as the handler takes the bytes (H2RequestStream); the answer goes back as DATA.
class ServerH2StreamTest : public ServerStreamTest {
 protected:
  ClientOptions MakeClientOptions() const override {
    ClientOptions options;
    options.http2.enabled = true;
    return options;
  }
};

TEST_F(ServerH2StreamTest, BodyWithALengthIsStreamedBothWays) {
  const uint64_t size = 4 * 1024 * 1024 + 3;
  EchoThrough(size, size, /*major_version=*/2);
  EXPECT_EQ(handler_->streamed.load(), 1);
  EXPECT_EQ(handler_->failures.load(), 0);
  client_->CloseIdle();
  EXPECT_TRUE(Eventually([&] { return listener_->resources().budget().used() == 0; }));
}

TEST_F(ServerH2StreamTest, BodyOfUnknownLengthIsStreamedOncePastTheThreshold) {
  const uint64_t size = 2 * 1024 * 1024 + 1;
  EchoThrough(std::nullopt, size, /*major_version=*/2);
  EXPECT_EQ(handler_->streamed.load(), 1);
  EXPECT_EQ(handler_->buffered.load(), 0);
}

TEST_F(ServerH2StreamTest, BodyUnderTheThresholdIsHeldWhole) {
  EchoThrough(kThreshold, kThreshold, /*major_version=*/2);
  EXPECT_EQ(handler_->streamed.load(), 0);
  EXPECT_EQ(handler_->buffered.load(), 1);
}

}  // namespace
}  // namespace hammer::http
