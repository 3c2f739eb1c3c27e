// DarkProxyGroup in process, over loopback sockets: who owns what is in flight when the proxy
// stops, and which protocol each side is spoken to in. The regular upstream and the dark
// clusters are HttpListeners whose handler keeps every request unanswered (the fault under
// test: answers that never come), so requests and copies are still in flight when Stop()
// runs. Run under ASan with detect_leaks=1, a leaked exchange or copy fails the test binary.
#include "hammer/dark/proxy_group.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "hammer/http/server.h"
#include "hammer/net/loop_group.h"

namespace hammer::dark {
namespace {

constexpr Nanos kGuard = 10 * kSecond;

// Accepts requests and never answers them (keeps the Responders); counts them by HTTP major
// version (read from any thread).
class SilentHandler final : public http::RequestHandler {
 public:
  void OnRequest(const http::IncomingRequest& request, http::Responder responder) override {
    (request.head.major_version == 2 ? http2_ : http1_).fetch_add(1);
    held_.push_back(std::move(responder));
  }
  int http1() const { return http1_.load(); }
  int http2() const { return http2_.load(); }

 private:
  std::vector<http::Responder> held_;
  std::atomic<int> http1_{0};
  std::atomic<int> http2_{0};
};

// An HttpListener with a SilentHandler on its own loop thread; `http2`: it also speaks h2c.
class SilentServer {
 public:
  explicit SilentServer(bool http2 = false) : loops_(1) {
    EXPECT_TRUE(loops_.Init().ok());
    http::ServerOptions server_options;
    server_options.http2.enabled = http2;
    listener_ = std::make_unique<http::HttpListener>(loops_.loop(0), &handler_, server_options);
    Result<net::SocketAddress> any = net::SocketAddress::Parse("127.0.0.1:0");
    EXPECT_TRUE(any.ok());
    EXPECT_TRUE(listener_->Listen(*any, /*reuse_port=*/false).ok());
    loops_.Start();
  }
  ~SilentServer() {
    loops_.StopAll();
    loops_.Join();
    listener_.reset();
  }
  http::Url url() const {
    Result<http::Url> url = http::ParseUrl("http://" + listener_->local_address().ToString());
    EXPECT_TRUE(url.ok());
    return *url;
  }
  const SilentHandler& handler() const { return handler_; }

 private:
  net::LoopGroup loops_;
  SilentHandler handler_;
  std::unique_ptr<http::HttpListener> listener_;
};

// A blocking client socket that sends one request and never reads.
int SendRequest(const net::SocketAddress& to, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(to.port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  return fd;
}

// The value of one Prometheus sample line, or -1.
double Sample(const std::string& metrics, const std::string& name) {
  std::regex line("(^|\n)" +
                  std::regex_replace(name, std::regex(R"([{}\[\]"().*+?^$|\\])"), R"(\$&)") +
                  " ([0-9.e+-]+)");
  std::smatch m;
  return std::regex_search(metrics, m, line) ? std::stod(m[2]) : -1;
}

// Polls `value` until it equals `want` or the guard expires.
bool WaitForValue(const std::function<int()>& value, int want) {
  MonoNanos deadline = MonoNow() + kGuard;
  while (MonoNow() < deadline) {
    if (value() == want) return true;
    usleep(5000);
  }
  return false;
}

// Polls the group's metrics until `name` equals `want` or the guard expires.
bool WaitFor(DarkProxyGroup& group, const std::string& name, double want) {
  MonoNanos deadline = MonoNow() + kGuard;
  while (MonoNow() < deadline) {
    if (Sample(group.MetricsText(), name) == want) return true;
    usleep(5000);
  }
  return false;
}

TEST(DarkProxyGroupTest, StopAbandonsAndCountsWhatIsInFlight) {
  SilentServer regular, canary;
  DarkOptions options;
  options.listen = "127.0.0.1:0";
  options.upstreams = {regular.url()};
  options.threads = 2;
  StaticMembershipOptions membership_options;
  StaticDarkCluster cluster;
  cluster.config.name = "canary";
  cluster.urls = {canary.url()};
  membership_options.dark.push_back(cluster);
  StaticMembership membership(membership_options);
  Result<std::unique_ptr<DarkProxyGroup>> started = DarkProxyGroup::Start(options, &membership);
  ASSERT_TRUE(started.ok()) << started.status().message();
  DarkProxyGroup& group = **started;

  constexpr int kRequests = 6;
  std::vector<int> clients;
  for (int i = 0; i < kRequests; ++i) {
    clients.push_back(SendRequest(
        group.address(), "GET /item/" + std::to_string(i) + " HTTP/1.1\r\nHost: client\r\n\r\n"));
  }
  // Ns = Nd = 1, multiplier 1: one copy per request, all waiting for the silent canary.
  ASSERT_TRUE(WaitFor(group, R"(hammer_dark_copies_in_flight{cluster="canary"})", kRequests));
  ASSERT_TRUE(WaitFor(group, R"(hammer_dark_sent_total{cluster="canary"})", kRequests));
  group.Stop();

  std::string metrics = group.MetricsText();
  EXPECT_EQ(Sample(metrics, "hammer_dark_requests_total"), kRequests);
  EXPECT_EQ(Sample(metrics, "hammer_dark_responses_total"), 0);
  EXPECT_EQ(Sample(metrics, "hammer_dark_requests_abandoned_total"), kRequests);
  EXPECT_EQ(Sample(metrics, R"(hammer_dark_abandoned_total{cluster="canary"})"), kRequests);
  EXPECT_EQ(Sample(metrics, R"(hammer_dark_copies_in_flight{cluster="canary"})"), 0);
  for (int fd : clients)
    close(fd);
}

TEST(DarkProxyGroupTest, CopiesInFlightSettleToZeroWhenAnswered) {
  // The dark cluster refuses connections: every copy fails fast and the gauge returns to 0.
  SilentServer regular;
  net::SocketAddress closed;
  {
    Result<net::SocketAddress> any = net::SocketAddress::Parse("127.0.0.1:0");
    ASSERT_TRUE(any.ok());
    Result<net::Fd> fd = net::Listen(*any, false);
    ASSERT_TRUE(fd.ok());
    closed = *net::LocalAddress(fd->get());
  }  // closed again: nothing listens there
  DarkOptions options;
  options.listen = "127.0.0.1:0";
  options.upstreams = {regular.url()};
  StaticMembershipOptions membership_options;
  StaticDarkCluster cluster;
  cluster.config.name = "canary";
  cluster.urls = {*http::ParseUrl("http://" + closed.ToString())};
  membership_options.dark.push_back(cluster);
  StaticMembership membership(membership_options);
  Result<std::unique_ptr<DarkProxyGroup>> started = DarkProxyGroup::Start(options, &membership);
  ASSERT_TRUE(started.ok()) << started.status().message();
  DarkProxyGroup& group = **started;
  int client = SendRequest(group.address(), "GET / HTTP/1.1\r\nHost: client\r\n\r\n");
  ASSERT_TRUE(WaitFor(group, R"(hammer_dark_failed_total{cluster="canary",type="connect"})", 1));
  EXPECT_EQ(Sample(group.MetricsText(), R"(hammer_dark_copies_in_flight{cluster="canary"})"), 0);
  group.Stop();
  std::string metrics = group.MetricsText();
  EXPECT_EQ(Sample(metrics, R"(hammer_dark_abandoned_total{cluster="canary"})"), 0);
  EXPECT_EQ(Sample(metrics, "hammer_dark_requests_abandoned_total"), 1);
  close(client);
}

TEST(DarkProxyGroupTest, DarkHttp2ChoosesHttp2ForTheNamedClustersOnly) {
  // Every side is silent: the copies are still in flight (as HTTP/2 streams for "h2") when
  // Stop() abandons them, which ASan checks for leaks.
  SilentServer regular, plain, h2(/*http2=*/true), secondary(/*http2=*/true);
  DarkOptions options;
  options.listen = "127.0.0.1:0";
  options.upstreams = {regular.url()};
  options.dark_http2 = {"h2"};
  options.compare = true;
  options.compare_secondary = {secondary.url()};
  StaticMembershipOptions membership_options;
  for (const auto& [name, server] : {std::pair{"h2", &h2}, std::pair{"plain", &plain}}) {
    StaticDarkCluster cluster;
    cluster.config.name = name;
    cluster.urls = {server->url()};
    membership_options.dark.push_back(cluster);
  }
  StaticMembership membership(membership_options);
  Result<std::unique_ptr<DarkProxyGroup>> started = DarkProxyGroup::Start(options, &membership);
  ASSERT_TRUE(started.ok()) << started.status().message();
  DarkProxyGroup& group = **started;
  constexpr int kRequests = 3;
  std::vector<int> clients;
  for (int i = 0; i < kRequests; ++i) {
    clients.push_back(SendRequest(group.address(), "GET / HTTP/1.1\r\nHost: client\r\n\r\n"));
  }
  EXPECT_TRUE(WaitForValue([&] { return h2.handler().http2(); }, kRequests));
  EXPECT_TRUE(WaitForValue([&] { return plain.handler().http1(); }, kRequests));
  // Without --upstream-http2 the regular side, and so the secondary, speak HTTP/1.1.
  EXPECT_TRUE(WaitForValue([&] { return regular.handler().http1(); }, kRequests));
  EXPECT_TRUE(WaitForValue([&] { return secondary.handler().http1(); }, kRequests));
  group.Stop();
  EXPECT_EQ(h2.handler().http1(), 0);
  EXPECT_EQ(plain.handler().http2(), 0);
  EXPECT_EQ(Sample(group.MetricsText(), R"(hammer_dark_abandoned_total{cluster="h2"})"), kRequests);
  for (int fd : clients)
    close(fd);
}

TEST(DarkProxyGroupTest, UpstreamHttp2TakesTheSecondaryAlong) {
  SilentServer regular(/*http2=*/true), canary, secondary(/*http2=*/true);
  DarkOptions options;
  options.listen = "127.0.0.1:0";
  options.upstreams = {regular.url()};
  options.upstream_http2 = true;
  options.compare = true;
  options.compare_secondary = {secondary.url()};
  StaticMembershipOptions membership_options;
  StaticDarkCluster cluster;
  cluster.config.name = "canary";
  cluster.urls = {canary.url()};
  membership_options.dark.push_back(cluster);
  StaticMembership membership(membership_options);
  Result<std::unique_ptr<DarkProxyGroup>> started = DarkProxyGroup::Start(options, &membership);
  ASSERT_TRUE(started.ok()) << started.status().message();
  DarkProxyGroup& group = **started;
  int client = SendRequest(group.address(), "GET / HTTP/1.1\r\nHost: client\r\n\r\n");
  EXPECT_TRUE(WaitForValue([&] { return regular.handler().http2(); }, 1));
  EXPECT_TRUE(WaitForValue([&] { return secondary.handler().http2(); }, 1));
  EXPECT_TRUE(WaitForValue([&] { return canary.handler().http1(); }, 1));
  group.Stop();
  EXPECT_EQ(secondary.handler().http1(), 0);
  close(client);
}

}  // namespace
}  // namespace hammer::dark
