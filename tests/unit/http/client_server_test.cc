// HttpClient against the real `hammer serve` routes (TargetServerGroup) and against an
// HttpListener with a custom handler, over loopback sockets on ports chosen by the kernel.
// The client's loop runs on the test thread; the servers run on their own threads.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "client_loop.h"
#include "hammer/http/client.h"
#include "hammer/http/request_writer.h"
#include "hammer/http/server.h"
#include "hammer/http/url.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/resolver.h"
#include "hammer/net/socket.h"
#include "hammer/serve/serve_group.h"

namespace hammer::http {
namespace {

// The safety net of every test: a loop that has not finished by then is stopped and the test
// fails. Tests end their loops themselves, on real events.
constexpr Nanos kGuard = 10 * kSecond;

// One request and everything the client reported about it.
class Exchange final : public ResponseHandler {
 public:
  Exchange(HttpClient* client, std::string_view method, const std::string& url_text,
           std::string request_body = "", HeaderList headers = {}, Nanos timeout = 0)
      : client_(client), body_(std::move(request_body)), timeout_(timeout) {
    Result<Url> url = ParseUrl(url_text);
    EXPECT_TRUE(url.ok()) << url_text << ": " << url.status().message();
    if (!url.ok()) return;
    head_ = SerializeRequestHead(method, *url, headers, body_.size());
    request_.origin = client->GetOrigin(*url);
    request_.head = head_;
    request_.body = body_;
    request_.head_method = method == "HEAD";
    request_.idempotent = IsIdempotentMethod(method);
  }
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  void Send() {
    if (timeout_ > 0) request_.deadline = client_->loop()->UpdateNow() + timeout_;
    sent_at_ = client_->loop()->now();
    client_->Send(request_, this);
  }

  void OnResponseHead(const ResponseHead& head) override {
    ++heads;
    head_status = head.status;
    auto type = FindHeader(head.headers, "Content-Type");
    content_type = type ? std::string(*type) : "";
  }
  void OnResponseBody(std::string_view data) override { body.append(data); }
  void OnResponseComplete(const ExchangeResult& r) override {
    ++completions;
    result = r;
    if (then) then();
  }

  MonoNanos sent_at() const { return sent_at_; }

  // What the handler saw.
  int heads = 0;
  int completions = 0;
  int head_status = 0;
  std::string content_type;
  std::string body;
  ExchangeResult result;
  std::function<void()> then;  // runs after completion, on the loop

 private:
  HttpClient* client_;
  std::string head_;
  std::string body_;
  Nanos timeout_;
  ClientRequest request_;
  MonoNanos sent_at_ = 0;
};

class ClientServerTest : public testing::TargetClientTest {
 protected:
  ClientServerTest() : TargetClientTest(kGuard) {}

  std::string Url(std::string_view path) const { return TargetUrl(path); }

  std::unique_ptr<Exchange> Make(std::string_view method, std::string_view path,
                                 std::string body = "", HeaderList headers = {},
                                 Nanos timeout = 0) {
    return std::make_unique<Exchange>(client_.get(), method, Url(path), std::move(body),
                                      std::move(headers), timeout);
  }

  // Sends the exchanges one after another, each from the previous one's completion callback,
  // and runs the loop until the last has completed. False if the guard had to stop the loop.
  bool RunInOrder(const std::vector<Exchange*>& exchanges) {
    for (size_t i = 0; i < exchanges.size(); ++i) {
      Exchange* next = i + 1 < exchanges.size() ? exchanges[i + 1] : nullptr;
      exchanges[i]->then = [this, next] {
        if (next != nullptr) {
          next->Send();
        } else {
          loop_.Stop();
        }
      };
    }
    exchanges.front()->Send();
    return RunLoop();
  }
};

TEST_F(ClientServerTest, GetRootDeliversOk) {
  auto get = Make("GET", "/");
  ASSERT_TRUE(RunInOrder({get.get()}));
  EXPECT_EQ(get->completions, 1);
  EXPECT_EQ(get->heads, 1);
  EXPECT_FALSE(get->result.failure) << get->result.detail;
  EXPECT_EQ(get->result.detail, "");
  EXPECT_EQ(get->result.status, 200);
  EXPECT_EQ(get->head_status, 200);
  EXPECT_EQ(get->content_type, "text/plain");
  EXPECT_EQ(get->body, "ok\n");
  EXPECT_FALSE(get->result.reused_connection);
  EXPECT_EQ(get->result.bytes_sent,
            0u + SerializeRequestHead("GET", *ParseUrl(Url("/")), {}, 0).size());
  EXPECT_GT(get->result.bytes_received, get->body.size());
  // The timeline is ordered.
  EXPECT_GE(get->result.connect_start, get->sent_at());
  EXPECT_GE(get->result.connect_end, get->result.connect_start);
  EXPECT_GE(get->result.first_byte, get->result.connect_end);
  EXPECT_GE(get->result.end, get->result.first_byte);
  EXPECT_EQ(client_->counters().connections_opened, 1u);
  EXPECT_EQ(client_->counters().connections_reused, 0u);
  EXPECT_EQ(client_->counters().stale_retries, 0u);
}

TEST_F(ClientServerTest, KeepAliveConnectionIsReused) {
  auto first = Make("GET", "/");
  auto second = Make("GET", "/bytes/5");
  ASSERT_TRUE(RunInOrder({first.get(), second.get()}));
  EXPECT_FALSE(first->result.failure);
  EXPECT_FALSE(second->result.failure) << second->result.detail;
  EXPECT_FALSE(first->result.reused_connection);
  EXPECT_TRUE(second->result.reused_connection);
  EXPECT_EQ(second->result.connect_start, 0);  // no connect for a pooled connection
  EXPECT_EQ(second->body, "xxxxx");
  EXPECT_EQ(client_->counters().connections_opened, 1u);
  EXPECT_EQ(client_->counters().connections_reused, 1u);
  EXPECT_EQ(client_->counters().stale_retries, 0u);
  EXPECT_EQ(client_->open_connections(), 1u);  // idle in the pool
  client_->CloseIdle();
  EXPECT_EQ(client_->open_connections(), 0u);
}

// After StopReuse the idle connection is closed, and a later exchange's connection is closed as
// the exchange ends instead of being pooled.
TEST_F(ClientServerTest, StopReuseClosesConnectionsAsTheirExchangesEnd) {
  auto first = Make("GET", "/");
  auto second = Make("GET", "/bytes/3");
  auto third = Make("GET", "/bytes/4");
  size_t pooled = 0;
  size_t after_stop = 0;
  size_t after_second = 0;
  first->then = [&] {
    pooled = client_->open_connections();  // idle in the pool
    client_->StopReuse();
    after_stop = client_->open_connections();
    second->Send();
  };
  // When the second ends, its connection is already gone: the third opens one of its own.
  second->then = [&] {
    after_second = client_->open_connections();
    third->Send();
  };
  third->then = [&] { loop_.Stop(); };
  first->Send();
  ASSERT_TRUE(RunLoop());
  EXPECT_EQ(pooled, 1u);
  EXPECT_EQ(after_stop, 0u);
  EXPECT_EQ(after_second, 0u);
  EXPECT_FALSE(first->result.failure) << first->result.detail;
  EXPECT_EQ(second->body, "xxx");
  EXPECT_EQ(third->body, "xxxx");
  EXPECT_FALSE(third->result.reused_connection);
  EXPECT_EQ(client_->counters().connections_opened, 3u);
  EXPECT_EQ(client_->counters().connections_reused, 0u);
  EXPECT_EQ(client_->open_connections(), 0u);
  client_->StopReuse();  // idempotent
  EXPECT_EQ(client_->open_connections(), 0u);
}

TEST_F(ClientServerTest, ServerErrorStatusIsNotAFailure) {
  auto get = Make("GET", "/status/503");
  ASSERT_TRUE(RunInOrder({get.get()}));
  EXPECT_FALSE(get->result.failure) << get->result.detail;
  EXPECT_EQ(get->result.status, 503);
  EXPECT_EQ(get->body, "503 Service Unavailable\n");
}

TEST_F(ClientServerTest, DeadlineBeforeTheResponseIsATimeout) {
  auto slow = Make("GET", "/delay/200", "", {}, 50 * kMillisecond);
  ASSERT_TRUE(RunInOrder({slow.get()}));
  ASSERT_TRUE(slow->result.failure);
  EXPECT_EQ(*slow->result.failure, Failure::kTimeout);
  EXPECT_EQ(slow->result.detail, "timeout waiting for the response");
  EXPECT_EQ(slow->heads, 0);
  EXPECT_GE(slow->result.end - slow->sent_at(), 50 * kMillisecond);
  EXPECT_LT(slow->result.end - slow->sent_at(), 200 * kMillisecond);
}

TEST_F(ClientServerTest, ClosedPortIsAConnectFailure) {
  // A bound socket that does not listen: its port refuses connections, and stays ours.
  net::Fd bound(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  Result<net::SocketAddress> any = net::SocketAddress::Parse("127.0.0.1:0");
  ASSERT_TRUE(any.ok());
  ASSERT_EQ(bind(bound.get(), any->sockaddr_ptr(), any->length()), 0);
  Result<net::SocketAddress> closed = net::LocalAddress(bound.get());
  ASSERT_TRUE(closed.ok());
  Exchange get(client_.get(), "GET", "http://" + closed->ToString() + "/");
  ASSERT_TRUE(RunInOrder({&get}));
  EXPECT_EQ(get.completions, 1);
  ASSERT_TRUE(get.result.failure);
  EXPECT_EQ(*get.result.failure, Failure::kConnect);
  EXPECT_EQ(get.result.detail, "connect " + closed->ToString() + ": Connection refused");
  EXPECT_EQ(get.heads, 0);
  EXPECT_EQ(client_->open_connections(), 0u);
}

TEST_F(ClientServerTest, UnresolvableHostIsADnsFailure) {
  // A 64-byte label is not a valid DNS name: the resolver fails without asking any server, so
  // the test stays hermetic.
  const std::string host = std::string(64, 'a') + ".invalid";
  Exchange get(client_.get(), "GET", "http://" + host + "/");
  get.Send();
  EXPECT_EQ(get.completions, 0);  // never called back from inside Send
  get.then = [this] { loop_.Stop(); };
  ASSERT_TRUE(RunLoop());
  EXPECT_EQ(get.completions, 1);
  ASSERT_TRUE(get.result.failure);
  EXPECT_EQ(*get.result.failure, Failure::kDns);
  EXPECT_EQ(get.result.detail.rfind("resolve '" + host + "': ", 0), 0u) << get.result.detail;
  EXPECT_EQ(client_->counters().connections_opened, 0u);
}

TEST_F(ClientServerTest, ResetMidBodyIsAResetFailure) {
  auto get = Make("GET", "/fault/reset-mid-body");
  ASSERT_TRUE(RunInOrder({get.get()}));
  ASSERT_TRUE(get->result.failure);
  EXPECT_EQ(*get->result.failure, Failure::kReset) << get->result.detail;
  // Whatever arrived before the reset is part of the declared 1000 bytes of 'x'.
  EXPECT_LE(get->body.size(), 100u);
  EXPECT_EQ(get->body, std::string(get->body.size(), 'x'));
  EXPECT_EQ(client_->counters().stale_retries, 0u);  // a fresh connection is never retried
}

TEST_F(ClientServerTest, EndlessHeaderIsAProtocolFailure) {
  auto get = Make("GET", "/fault/endless-header");
  ASSERT_TRUE(RunInOrder({get.get()}));
  ASSERT_TRUE(get->result.failure);
  EXPECT_EQ(*get->result.failure, Failure::kProtocol);
  EXPECT_EQ(get->result.detail, "invalid response: head_too_large");
  EXPECT_EQ(get->heads, 0);
  EXPECT_EQ(client_->open_connections(), 0u);  // never pooled
}

TEST_F(ClientServerTest, HeadResponseHasNoBodyAndTheConnectionStaysUsable) {
  auto head = Make("HEAD", "/");
  auto get = Make("GET", "/");
  ASSERT_TRUE(RunInOrder({head.get(), get.get()}));
  EXPECT_FALSE(head->result.failure) << head->result.detail;
  EXPECT_EQ(head->result.status, 200);
  EXPECT_EQ(head->body, "");
  // The HEAD response declared Content-Length: 3 without sending it; had the client waited
  // for those bytes, the GET would have failed or read garbage.
  EXPECT_FALSE(get->result.failure) << get->result.detail;
  EXPECT_TRUE(get->result.reused_connection);
  EXPECT_EQ(get->body, "ok\n");
}

TEST_F(ClientServerTest, PostBodyIsEchoed) {
  const std::string payload = "{\"query\": \"hammer\", \"n\": 1}";
  auto post = Make("POST", "/echo?x=1", payload, {{"X-Test", "yes"}});
  ASSERT_TRUE(RunInOrder({post.get()}));
  ASSERT_FALSE(post->result.failure) << post->result.detail;
  EXPECT_EQ(post->result.status, 200);
  EXPECT_EQ(post->content_type, "application/json");
  nlohmann::json echo = nlohmann::json::parse(post->body);
  EXPECT_EQ(echo["method"], "POST");
  EXPECT_EQ(echo["path"], "/echo?x=1");
  EXPECT_EQ(echo["body"], payload);
  EXPECT_EQ(echo["headers"]["Content-Length"], std::to_string(payload.size()));
  EXPECT_EQ(echo["headers"]["X-Test"], "yes");
  EXPECT_EQ(echo["headers"]["Host"], server_->address().ToString());
  EXPECT_FALSE(post->result.reused_connection);
}

// What SerializeRequestHead puts on the wire, as the server received it.
TEST_F(ClientServerTest, DefaultRequestHeadersAndOverrides) {
  auto plain = Make("GET", "/echo");
  auto custom = Make("GET", "/echo", "", {{"host", "example.test"}, {"Accept", "text/html"}});
  auto empty_post = Make("POST", "/echo");
  auto delete_with_body = Make("DELETE", "/echo", "gone");
  ASSERT_TRUE(RunInOrder({plain.get(), custom.get(), empty_post.get(), delete_with_body.get()}));
  nlohmann::json expected_plain = {{"Host", server_->address().ToString()},
                                   {"User-Agent", "hammer/" HAMMER_VERSION},
                                   {"Accept", "*/*"}};
  EXPECT_EQ(nlohmann::json::parse(plain->body)["headers"], expected_plain) << plain->body;
  nlohmann::json expected_custom = {
      {"host", "example.test"}, {"User-Agent", "hammer/" HAMMER_VERSION}, {"Accept", "text/html"}};
  EXPECT_EQ(nlohmann::json::parse(custom->body)["headers"], expected_custom) << custom->body;
  nlohmann::json post = nlohmann::json::parse(empty_post->body);
  EXPECT_EQ(post["headers"]["Content-Length"], "0");  // POST always declares its length
  EXPECT_EQ(post["body"], "");
  nlohmann::json del = nlohmann::json::parse(delete_with_body->body);
  EXPECT_EQ(del["method"], "DELETE");
  EXPECT_EQ(del["headers"]["Content-Length"], "4");
  EXPECT_EQ(del["body"], "gone");
}

TEST_F(ClientServerTest, LargeBodyArrivesWhole) {
  auto get = Make("GET", "/bytes/1000000");
  ASSERT_TRUE(RunInOrder({get.get()}));
  ASSERT_FALSE(get->result.failure) << get->result.detail;
  EXPECT_EQ(get->body.size(), 1'000'000u);
  EXPECT_EQ(get->body.find_first_not_of('x'), std::string::npos);
}

TEST_F(ClientServerTest, ServerStatsCountRequestsByMethod) {
  std::vector<std::unique_ptr<Exchange>> owned;
  owned.push_back(Make("GET", "/"));
  owned.push_back(Make("GET", "/status/404"));
  owned.push_back(Make("HEAD", "/"));
  owned.push_back(Make("POST", "/echo", "a=b"));
  owned.push_back(Make("PUT", "/x", "y"));
  owned.push_back(Make("DELETE", "/x"));
  owned.push_back(Make("OPTIONS", "/"));
  owned.push_back(Make("PURGE", "/cache"));
  owned.push_back(Make("GET", "/", "", {{"X-Hammer-Dark", "1"}}));
  owned.push_back(Make("GET", "/_hammer/stats"));
  std::vector<Exchange*> order;
  for (auto& e : owned)
    order.push_back(e.get());
  ASSERT_TRUE(RunInOrder(order));
  for (auto& e : owned)
    EXPECT_FALSE(e->result.failure) << e->result.detail;
  const Exchange& stats = *owned.back();
  EXPECT_EQ(stats.result.status, 200);
  EXPECT_EQ(stats.content_type, "application/json");
  nlohmann::json counts = nlohmann::json::parse(stats.body);
  // What clients make the server hold: one connection, open; nothing refused.
  nlohmann::json server = counts["server"];
  EXPECT_EQ(server["connections_open"], 1);
  EXPECT_EQ(server["connections_accepted"], 1);
  EXPECT_GT(server["connections_max"].get<uint64_t>(), 0u);
  EXPECT_EQ(server["buffered_bytes_limit"], 256u << 20);
  EXPECT_LT(server["buffered_bytes"].get<uint64_t>(), 64u << 10);  // one idle connection
  ASSERT_EQ(server["rejected"].size(), kRejectionCount);
  for (const auto& [reason, n] : server["rejected"].items())
    EXPECT_EQ(n, 0) << reason;
  counts.erase("server");
  nlohmann::json expected = {{"requests", 9},
                             {"by_method",
                              {{"GET", 3},
                               {"HEAD", 1},
                               {"POST", 1},
                               {"PUT", 1},
                               {"DELETE", 1},
                               {"OPTIONS", 1},
                               {"OTHER", 1}}},
                             {"by_protocol", {{"HTTP/1.1", 9}, {"HTTP/2", 0}}},
                             {"by_header", {{"X-Hammer-Dark", 1}}}};
  EXPECT_EQ(counts, expected) << stats.body;
  EXPECT_EQ(server_->counts().requests(), 9u);  // reading the stats is not counted
  EXPECT_EQ(client_->counters().connections_opened, 1u);
  EXPECT_EQ(client_->counters().connections_reused, 9u);
}

TEST_F(ClientServerTest, ConcurrentExchangesOpenOneConnectionEach) {
  constexpr int kParallel = 8;
  std::vector<std::unique_ptr<Exchange>> exchanges;
  int done = 0;
  for (int i = 0; i < kParallel; ++i) {
    exchanges.push_back(Make("GET", "/bytes/" + std::to_string(i)));
    exchanges.back()->then = [&] {
      if (++done == kParallel) loop_.Stop();
    };
  }
  for (auto& e : exchanges)
    e->Send();
  ASSERT_TRUE(RunLoop());
  for (int i = 0; i < kParallel; ++i) {
    EXPECT_FALSE(exchanges[static_cast<size_t>(i)]->result.failure);
    EXPECT_EQ(exchanges[static_cast<size_t>(i)]->body, std::string(static_cast<size_t>(i), 'x'));
  }
  EXPECT_EQ(client_->counters().connections_opened, static_cast<uint64_t>(kParallel));
  EXPECT_EQ(client_->open_connections(), static_cast<size_t>(kParallel));
}

// A handler that answers every request with 200 "fresh".
class FreshHandler final : public RequestHandler {
 public:
  void OnRequest(const IncomingRequest& /*request*/, Responder responder) override {
    responder.Respond(200, "text/plain", "fresh\n");
  }
};

// A handler that answers 200 "slow" some time after the request arrived.
class SlowHandler final : public RequestHandler {
 public:
  SlowHandler(net::EventLoop* loop, Nanos delay)
      : delay_(delay), timer_(loop, [this] { pending_.Respond(200, "text/plain", "slow\n"); }) {}
  void OnRequest(const IncomingRequest& /*request*/, Responder responder) override {
    pending_ = responder;
    timer_.ArmAfter(delay_);
  }

 private:
  Nanos delay_;
  Responder pending_;
  net::Timer timer_;
};

// An HttpListener with a short idle timeout on its own loop thread.
struct ShortIdleServer {
  static constexpr Nanos kIdleTimeout = 50 * kMillisecond;

  // Answers with FreshHandler, or with the handler `make_handler` builds for the loop.
  explicit ShortIdleServer(
      std::function<std::unique_ptr<RequestHandler>(net::EventLoop*)> make_handler = nullptr)
      : loops(1) {
    EXPECT_TRUE(loops.Init().ok());
    handler = make_handler ? make_handler(loops.loop(0)) : std::make_unique<FreshHandler>();
    ServerOptions options;
    options.idle_timeout = kIdleTimeout;
    listener = std::make_unique<HttpListener>(loops.loop(0), handler.get(), options);
    Status s = listener->Listen(*net::SocketAddress::Parse("127.0.0.1:0"), false);
    EXPECT_TRUE(s.ok()) << s.message();
    loops.Start();
  }
  ~ShortIdleServer() {
    loops.StopAll();
    loops.Join();
  }
  std::string Url() const { return "http://" + listener->local_address().ToString() + "/"; }
  net::EventLoop* loop() { return loops.loop(0); }

  // Resolves once a connection answered just before this call has been closed for idleness.
  // On the server's loop: a timer due no earlier than that connection's idle timer (it was
  // armed when the request was answered, before this), then a post, which runs after the
  // iteration that destroyed (and so closed) the connection.
  std::future<void> IdleCloseDone() {
    loop()->Post([this] {
      after_idle = std::make_unique<net::Timer>(
          loop(), [this] { loop()->Post([this] { idle_closed.set_value(); }); });
      after_idle->ArmAfter(kIdleTimeout);
    });
    return idle_closed.get_future();
  }

  net::LoopGroup loops;
  std::unique_ptr<RequestHandler> handler;
  std::unique_ptr<HttpListener> listener;
  std::unique_ptr<net::Timer> after_idle;
  std::promise<void> idle_closed;
};

// The server closes a pooled keep-alive connection between two requests. The client only
// finds out when it sends on it, and retries once on a new connection: the request succeeds.
TEST_F(ClientServerTest, StaleKeepAliveConnectionIsRetriedOnce) {
  ShortIdleServer server;
  const std::string url = server.Url();
  Exchange first(client_.get(), "GET", url);
  Exchange second(client_.get(), "GET", url);
  bool idle_close_seen = false;
  first.then = [&] {
    // Block the client's loop (so it cannot notice the close on its idle connection) until
    // the server has closed it, then send on the pooled connection.
    std::future<void> closed = server.IdleCloseDone();
    idle_close_seen = closed.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
    second.Send();
  };
  second.then = [&] { loop_.Stop(); };
  first.Send();
  ASSERT_TRUE(RunLoop());
  ASSERT_TRUE(idle_close_seen);
  EXPECT_FALSE(first.result.failure) << first.result.detail;
  ASSERT_FALSE(second.result.failure) << second.result.detail;
  EXPECT_EQ(second.completions, 1);
  EXPECT_EQ(second.result.status, 200);
  EXPECT_EQ(second.body, "fresh\n");
  EXPECT_EQ(client_->counters().stale_retries, 1u);
  EXPECT_EQ(client_->counters().connections_reused, 1u);
  EXPECT_EQ(client_->counters().connections_opened, 2u);
  server.loops.StopAll();
  server.loops.Join();
  EXPECT_EQ(server.listener->resources().accepted_connections(), 2u);
  EXPECT_EQ(server.listener->requests(), 2u);
}

// A non-idempotent request is not retried on a stale connection: it fails as a reset.
TEST_F(ClientServerTest, StaleConnectionIsNotRetriedForPost) {
  ShortIdleServer server;
  const std::string url = server.Url();
  Exchange first(client_.get(), "GET", url);
  Exchange post(client_.get(), "POST", url, "payload");
  first.then = [&] {
    std::future<void> closed = server.IdleCloseDone();
    ASSERT_EQ(closed.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    post.Send();
  };
  post.then = [&] { loop_.Stop(); };
  first.Send();
  ASSERT_TRUE(RunLoop());
  ASSERT_TRUE(post.result.failure);
  EXPECT_EQ(*post.result.failure, Failure::kReset) << post.result.detail;
  EXPECT_EQ(client_->counters().stale_retries, 0u);
}

// An idle pooled connection that the server closes while the client's loop is running is
// noticed and dropped: the next request opens a new connection without any retry.
TEST_F(ClientServerTest, IdleConnectionClosedByTheServerIsDropped) {
  ShortIdleServer server;
  const std::string url = server.Url();
  Exchange first(client_.get(), "GET", url);
  Exchange second(client_.get(), "GET", url);
  std::future<void> closed;
  net::Timer poll(&loop_, [&] {
    if (client_->open_connections() == 0) {
      second.Send();  // the client saw the close on its own
    } else {
      poll.ArmAfter(kMillisecond);
    }
  });
  first.then = [&] { poll.ArmAfter(kMillisecond); };
  second.then = [&] { loop_.Stop(); };
  first.Send();
  ASSERT_TRUE(RunLoop());
  EXPECT_FALSE(second.result.failure) << second.result.detail;
  EXPECT_FALSE(second.result.reused_connection);
  EXPECT_EQ(client_->counters().stale_retries, 0u);
  EXPECT_EQ(client_->counters().connections_reused, 0u);
  EXPECT_EQ(client_->counters().connections_opened, 2u);
}

// The idle timeout is for connections without a request in progress: a handler that takes
// longer than it to answer is not cut off.
TEST_F(ClientServerTest, SlowAnswerOutlivesTheIdleTimeout) {
  ShortIdleServer server([](net::EventLoop* loop) {
    return std::make_unique<SlowHandler>(loop, 3 * ShortIdleServer::kIdleTimeout);
  });
  Exchange get(client_.get(), "GET", server.Url(), "", {}, 5 * kSecond);
  get.then = [&] { loop_.Stop(); };
  get.Send();
  ASSERT_TRUE(RunLoop());
  ASSERT_FALSE(get.result.failure) << get.result.detail;
  EXPECT_EQ(get.result.status, 200);
  EXPECT_EQ(get.body, "slow\n");
  EXPECT_GE(get.result.end - get.sent_at(), 3 * ShortIdleServer::kIdleTimeout);
}

}  // namespace
}  // namespace hammer::http
