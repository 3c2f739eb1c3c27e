// What a client can make an HttpListener hold, over real loopback sockets: input read only
// while there is room (back-pressure through TCP), answers to pipelined requests that the
// client does not read, the head deadline, the connection cap and the buffer budget. The
// server runs on its own loop thread; the test is the client, writing raw bytes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hammer/http/server.h"
#include "hammer/net/loop_group.h"
#include "raw_client.h"

namespace hammer::http {
namespace {

using testing::CountResponses;
using testing::RawClient;

// Polls `condition` every millisecond for up to 10 s (a hang guard, not a timing assertion).
bool WaitFor(const std::function<bool()>& condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return condition();
}

// Answers "/" at once ("ok"), "/big" at once with 4 KiB, and holds "/hold" until released.
class HoldingHandler final : public RequestHandler {
 public:
  explicit HoldingHandler(net::EventLoop* loop) : loop_(loop) {}
  void OnRequest(const IncomingRequest& request, Responder responder) override {
    if (request.head.target.starts_with("/hold")) {
      held_.push_back(responder);
      held.fetch_add(1);
      return;
    }
    if (request.head.target.starts_with("/big")) {
      responder.Respond(200, "text/plain", std::string(4096, 'b'));
      return;
    }
    responder.Respond(200, "text/plain", "ok\n");
  }
  // Thread-safe: answers every held request on the loop.
  void ReleaseAll() {
    loop_->Post([this] {
      for (Responder& r : held_)
        r.Respond(200, "text/plain", "released\n");
      held_.clear();
    });
  }
  std::atomic<int> held{0};

 private:
  net::EventLoop* loop_;
  std::vector<Responder> held_;
};

// An HttpListener with `options` on a loop thread of its own.
class LimitServer {
 public:
  explicit LimitServer(ServerOptions options = {}) : loops_(1) {
    EXPECT_TRUE(loops_.Init().ok());
    if (!options.resources) options.resources = std::make_shared<ServerResources>();
    resources_ = options.resources;
    handler_ = std::make_unique<HoldingHandler>(loops_.loop(0));
    listener_ = std::make_unique<HttpListener>(loops_.loop(0), handler_.get(), options);
    Status s = listener_->Listen(*net::SocketAddress::Parse("127.0.0.1:0"), false);
    EXPECT_TRUE(s.ok()) << s.message();
    loops_.Start();
  }
  ~LimitServer() {
    loops_.StopAll();
    loops_.Join();
  }
  net::SocketAddress address() const { return listener_->local_address(); }
  ServerResources& resources() { return *resources_; }
  HoldingHandler& handler() { return *handler_; }

 private:
  net::LoopGroup loops_;
  std::shared_ptr<ServerResources> resources_;
  std::unique_ptr<HoldingHandler> handler_;
  std::unique_ptr<HttpListener> listener_;
};

// A request padded to about 1 KiB, so a flood of them is a few thousand requests.
std::string PaddedRequest(std::string_view path) {
  return "GET " + std::string(path) + "?" + std::string(960, 'p') + " HTTP/1.1\r\nHost: t\r\n\r\n";
}

// Most a connection should hold: its input buffer (a head plus one read) and its output buffer,
// whose unsent part stays below the high-water mark plus one answer (and a string's capacity
// may be twice its size).
constexpr uint64_t kPerConnectionBound = 64 * 1024 + kReadChunk + 2 * (kOutputHighWater + 8192);

TEST(ServerLimitsTest, AFloodBehindASlowRequestWaitsInTcpNotInMemory) {
  LimitServer server;
  RawClient client(server.address());
  client.Write("GET /hold HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(WaitFor([&] { return server.handler().held.load() == 1; }));

  // Pipelined requests behind the slow one, as fast as the socket takes them.
  const std::string request = PaddedRequest("/");
  size_t sent = client.Flood(request, 256u << 20, /*stall_ms=*/300);
  EXPECT_LT(sent, 64u << 20) << "the server kept reading";
  EXPECT_LE(server.resources().budget().used(), kPerConnectionBound);

  // Once the slow request is answered, every request behind it is: nothing was dropped.
  server.handler().ReleaseAll();
  const int expected = 1 + static_cast<int>(client.FinishUnit(request, sent));
  std::string answers = client.ReadResponses(expected);
  EXPECT_EQ(CountResponses(answers), expected);
  EXPECT_NE(answers.find("released\n"), std::string::npos);
}

TEST(ServerLimitsTest, PipelinedRequestsWhoseAnswersAreNotReadStopBeingTaken) {
  LimitServer server;
  RawClient client(server.address());
  const std::string request = PaddedRequest("/big");
  // The client never reads: the answers fill the socket, then the server stops parsing, then
  // stops reading, and the client cannot send more.
  size_t sent = client.Flood(request, 256u << 20, /*stall_ms=*/300);
  EXPECT_LT(sent, 64u << 20) << "the server kept taking requests";
  EXPECT_LE(server.resources().budget().used(), kPerConnectionBound);
  // Reading the answers lets the rest through (the writes of FinishUnit need a reader).
  std::thread finish([&] { client.FinishUnit(request, sent); });
  const int expected = static_cast<int>((sent + request.size() - 1) / request.size());
  std::string answers = client.ReadResponses(expected);
  finish.join();
  EXPECT_EQ(CountResponses(answers), expected);
}

TEST(ServerLimitsTest, AHeadTricklingInIsCutOffAtItsDeadlineAndCounted) {
  ServerOptions options;
  options.header_timeout = 300 * kMillisecond;
  LimitServer server(options);
  RawClient client(server.address());
  ASSERT_TRUE(client.TrySend("GET / HTTP/1.1\r\n"));
  // A byte every 20 ms (slowloris): each one would have re-armed an idle timer.
  for (int i = 0; i < 500 && !client.Readable(); ++i) {
    if (!client.TrySend("X")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string answer = client.ReadAll();
  EXPECT_TRUE(client.closed());
  EXPECT_EQ(answer.substr(0, 32), "HTTP/1.1 408 Request Timeout\r\nCo");
  EXPECT_EQ(server.resources().rejected(Rejection::kHeaderTimeout), 1u);
}

TEST(ServerLimitsTest, AConnectionThatNeverSendsAHeadIsClosedAtTheHeaderTimeout) {
  ServerOptions options;
  options.header_timeout = 100 * kMillisecond;
  LimitServer server(options);
  RawClient client(server.address());
  EXPECT_EQ(client.ReadAll(), "");  // nothing was asked, so nothing is answered
  EXPECT_TRUE(client.closed());
  EXPECT_EQ(server.resources().rejected(Rejection::kHeaderTimeout), 1u);
}

TEST(ServerLimitsTest, AnIdleKeepAliveConnectionClosesWithoutCountingARejection) {
  ServerOptions options;
  options.header_timeout = 100 * kMillisecond;
  options.idle_timeout = 200 * kMillisecond;
  LimitServer server(options);
  RawClient client(server.address());
  client.Write("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  std::string answers = client.ReadAll();  // the answer, then the idle close
  EXPECT_TRUE(client.closed());
  EXPECT_EQ(CountResponses(answers), 1);
  for (size_t i = 0; i < kRejectionCount; ++i)
    EXPECT_EQ(server.resources().rejected(static_cast<Rejection>(i)), 0u) << i;
}

TEST(ServerLimitsTest, AClientThatClosesItsSideAfterItsRequestGetsTheAnswer) {
  LimitServer server;
  RawClient client(server.address());
  client.Write("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  client.CloseWrite();
  std::string answers = client.ReadAll();  // the answer, then the close
  EXPECT_TRUE(client.closed());
  EXPECT_EQ(CountResponses(answers), 1);
}

TEST(ServerLimitsTest, OverTheConnectionCapNewConnectionsAreClosedAtOnce) {
  ServerOptions options;
  options.resources = std::make_shared<ServerResources>(
      ServerResourceLimits{.max_connections = 2, .max_buffered_bytes = 0});
  LimitServer server(options);
  // Two connections being served (not waiting for a head): nothing may be evicted.
  RawClient a(server.address()), b(server.address());
  a.Write("GET /hold HTTP/1.1\r\nHost: t\r\n\r\n");
  b.Write("GET /hold HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(WaitFor([&] { return server.handler().held.load() == 2; }));
  RawClient c(server.address());
  EXPECT_EQ(c.ReadAll(), "");
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(server.resources().rejected(Rejection::kConnectionLimit), 1u);
  EXPECT_EQ(server.resources().open_connections(), 2u);
  // The two served connections were not disturbed.
  server.handler().ReleaseAll();
  EXPECT_EQ(CountResponses(a.ReadResponses(1)), 1);
  EXPECT_EQ(CountResponses(b.ReadResponses(1)), 1);
}

TEST(ServerLimitsTest, AtTheCapIdleConnectionsMakeRoomFirstThenTheOldestHead) {
  ServerOptions options;
  options.resources = std::make_shared<ServerResources>(
      ServerResourceLimits{.max_connections = 3, .max_buffered_bytes = 0});
  LimitServer server(options);
  RawClient trickling(server.address());  // the oldest: a head still coming in
  ASSERT_TRUE(trickling.TrySend("GET / HTT"));
  ASSERT_TRUE(WaitFor([&] { return server.resources().open_connections() == 1; }));
  RawClient fresh(server.address());  // a newer one with nothing sent yet
  ASSERT_TRUE(WaitFor([&] { return server.resources().open_connections() == 2; }));
  RawClient idle(server.address());  // the newest: answered once, now an idle keep-alive
  idle.Write("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_EQ(CountResponses(idle.ReadResponses(1)), 1);

  // The idle connection goes first although it is the newest.
  RawClient first(server.address());
  EXPECT_EQ(idle.ReadAll(), "");
  EXPECT_TRUE(idle.closed());
  // Then the connections waiting for a head, oldest first (`first` is the newest of them),
  // without any grace: `fresh` waited only as long as this test took.
  RawClient second(server.address());
  EXPECT_EQ(trickling.ReadAll(), "");
  RawClient third(server.address());
  EXPECT_EQ(fresh.ReadAll(), "");
  EXPECT_EQ(server.resources().rejected(Rejection::kEvicted), 3u);
  EXPECT_EQ(server.resources().rejected(Rejection::kConnectionLimit), 0u);
}

TEST(ServerLimitsTest, ARequestWhoseBodyWouldOverrunTheBudgetGets503) {
  ServerOptions options;
  options.resources = std::make_shared<ServerResources>(
      ServerResourceLimits{.max_connections = 0, .max_buffered_bytes = 32 * 1024});
  LimitServer server(options);
  RawClient client(server.address());
  client.Write("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 65536\r\n\r\n");
  std::string answer = client.ReadAll();
  EXPECT_EQ(answer.substr(0, 36), "HTTP/1.1 503 Service Unavailable\r\nCo");
  EXPECT_NE(answer.find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(server.resources().rejected(Rejection::kOverBudget), 1u);
}

TEST(ServerLimitsTest, NewRequestsGet503WhileTheBudgetIsExhausted) {
  ServerOptions options;
  options.resources = std::make_shared<ServerResources>(
      ServerResourceLimits{.max_connections = 0, .max_buffered_bytes = 32 * 1024});
  LimitServer server(options);
  {
    BufferCharge someone_else(&server.resources().budget());
    someone_else.Set(32 * 1024);
    RawClient client(server.address());
    client.Write("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    EXPECT_EQ(client.ReadAll().substr(0, 12), "HTTP/1.1 503");
    EXPECT_EQ(server.resources().rejected(Rejection::kOverBudget), 1u);
  }
  RawClient client(server.address());
  client.Write("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(client.ReadResponses(1).substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_EQ(server.resources().rejected(Rejection::kOverBudget), 1u);
}

}  // namespace
}  // namespace hammer::http
