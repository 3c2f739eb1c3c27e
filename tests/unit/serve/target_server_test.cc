// The `hammer serve` routes and the HTTP server under them, spoken to over plain blocking
// sockets on loopback (so the bytes on the wire are exactly what the test wrote).
#include "hammer/serve/target_server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "../http/raw_client.h"
#include "hammer/net/socket.h"
#include "hammer/serve/serve_group.h"

namespace hammer::serve {
namespace {

TEST(LatencyDistributionTest, Constant) {
  Result<LatencyDistribution> d = LatencyDistribution::Parse("5ms");
  ASSERT_TRUE(d.ok()) << d.status().message();
  std::mt19937_64 rng(1);
  EXPECT_EQ(d->Sample(rng), 5 * kMillisecond);
  EXPECT_FALSE(d->zero());
  Result<LatencyDistribution> named = LatencyDistribution::Parse("const:2s");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->Sample(rng), 2 * kSecond);
  Result<LatencyDistribution> zero = LatencyDistribution::Parse("0ms");
  ASSERT_TRUE(zero.ok());
  EXPECT_TRUE(zero->zero());
}

TEST(LatencyDistributionTest, UniformStaysInItsRange) {
  Result<LatencyDistribution> d = LatencyDistribution::Parse("uniform:1ms,10ms");
  ASSERT_TRUE(d.ok()) << d.status().message();
  std::mt19937_64 rng(2);
  Nanos lowest = kSecond;
  Nanos highest = 0;
  for (int i = 0; i < 10000; ++i) {
    Nanos v = d->Sample(rng);
    ASSERT_GE(v, kMillisecond);
    ASSERT_LE(v, 10 * kMillisecond);
    lowest = std::min(lowest, v);
    highest = std::max(highest, v);
  }
  EXPECT_LT(lowest, 2 * kMillisecond);
  EXPECT_GT(highest, 9 * kMillisecond);
}

TEST(LatencyDistributionTest, ExponentialAndNormalMeans) {
  std::mt19937_64 rng(3);
  Result<LatencyDistribution> exp = LatencyDistribution::Parse("exp:5ms");
  ASSERT_TRUE(exp.ok());
  Result<LatencyDistribution> normal = LatencyDistribution::Parse("normal:10ms,2ms");
  ASSERT_TRUE(normal.ok());
  double exp_sum = 0;
  double normal_sum = 0;
  constexpr int kSamples = 20000;
  for (int i = 0; i < kSamples; ++i) {
    Nanos e = exp->Sample(rng);
    Nanos n = normal->Sample(rng);
    ASSERT_GE(e, 0);
    ASSERT_GE(n, 0);
    exp_sum += static_cast<double>(e);
    normal_sum += static_cast<double>(n);
  }
  EXPECT_NEAR(exp_sum / kSamples, 5.0 * kMillisecond, 0.2 * kMillisecond);
  EXPECT_NEAR(normal_sum / kSamples, 10.0 * kMillisecond, 0.1 * kMillisecond);
}

TEST(LatencyDistributionTest, NormalNeverNegative) {
  Result<LatencyDistribution> d = LatencyDistribution::Parse("normal:1ms,10ms");
  ASSERT_TRUE(d.ok());
  std::mt19937_64 rng(4);
  int zeros = 0;
  for (int i = 0; i < 1000; ++i) {
    Nanos v = d->Sample(rng);
    ASSERT_GE(v, 0);
    zeros += v == 0;
  }
  EXPECT_GT(zeros, 300);  // about 46% of draws are negative and become 0
}

TEST(LatencyDistributionTest, InvalidSpecsShowExamples) {
  for (std::string_view spec :
       {"", "fast", "5parsecs", "uniform:10ms,1ms", "uniform:1ms", "exp:5ms,1ms", "normal:10ms",
        "const:1ms,2ms", "5ms,6ms", "gauss:1ms,2ms", "uniform:-1ms,2ms"}) {
    Result<LatencyDistribution> d = LatencyDistribution::Parse(spec);
    ASSERT_FALSE(d.ok()) << spec;
    EXPECT_EQ(d.status().message(),
              "invalid --latency '" + std::string(spec) +
                  "' (examples: 5ms, uniform:1ms,10ms, exp:5ms, normal:10ms,2ms)");
  }
}

TEST(ReceivedCountsTest, SumsLoopsAndMapsUnknownMethodsToOther) {
  ReceivedCounts counts(2);
  counts.Record(0, "GET", false);
  counts.Record(1, "GET", true);
  counts.Record(1, "POST", false);
  counts.Record(0, "BREW", false);
  counts.Record(1, "get", false);  // methods are case-sensitive
  counts.Record(0, "GET", false, /*http2=*/true);
  EXPECT_EQ(counts.requests(), 6u);
  nlohmann::json expected = {{"requests", 6},
                             {"by_method", {{"GET", 3}, {"POST", 1}, {"OTHER", 2}}},
                             {"by_protocol", {{"HTTP/1.1", 5}, {"HTTP/2", 1}}},
                             {"by_header", {{"X-Hammer-Dark", 1}}}};
  EXPECT_EQ(nlohmann::json::parse(counts.ToJson()), expected);
  EXPECT_EQ(counts.ToJson().back(), '\n');
}

TEST(ReceivedCountsTest, EmptyCounts) {
  ReceivedCounts counts(1);
  EXPECT_EQ(counts.ToJson(),
            "{\"by_header\":{\"X-Hammer-Dark\":0},\"by_method\":{},\"by_protocol\":{\"HTTP/1.1\":0,"
            "\"HTTP/2\":0},\"requests\":0}\n");
}

TEST(TargetServerGroupTest, StartRejectsBadOptions) {
  ServeOptions no_threads;
  no_threads.listen = "127.0.0.1:0";
  no_threads.threads = 0;
  Result<std::unique_ptr<TargetServerGroup>> a = TargetServerGroup::Start(no_threads);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(), "--threads must be at least 1");
  ServeOptions bad_listen;
  bad_listen.listen = "nonsense";
  Result<std::unique_ptr<TargetServerGroup>> b = TargetServerGroup::Start(bad_listen);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), "--listen: expected HOST:PORT, got 'nonsense'");
}

using http::testing::RawClient;

class TargetRoutesTest : public ::testing::Test {
 protected:
  void Start(ServeOptions options = {}) {
    options.listen = "127.0.0.1:0";
    Result<std::unique_ptr<TargetServerGroup>> server = TargetServerGroup::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(*server);
  }

  // One request with "Connection: close"; the whole response.
  std::string Get(std::string_view target, std::string_view extra_headers = "") {
    RawClient client(server_->address());
    client.Write("GET " + std::string(target) + " HTTP/1.1\r\nHost: t\r\n" +
                 std::string(extra_headers) + "Connection: close\r\n\r\n");
    return client.ReadAll();
  }

  std::unique_ptr<TargetServerGroup> server_;
};

TEST_F(TargetRoutesTest, RootAndUnknownPathsAreOk) {
  Start();
  EXPECT_EQ(Get("/"),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
            "Connection: close\r\n\r\nok\n");
  EXPECT_EQ(Get("/anything/else?q=1"),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
            "Connection: close\r\n\r\nok\n");
}

TEST_F(TargetRoutesTest, StatusRoute) {
  Start();
  EXPECT_EQ(Get("/status/404"),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 14\r\n"
            "Connection: close\r\n\r\n404 Not Found\n");
  EXPECT_EQ(Get("/status/599"),
            "HTTP/1.1 599 \r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
            "Connection: close\r\n\r\n599 \n");
  for (std::string_view bad : {"/status/99", "/status/1000", "/status/abc", "/status/"}) {
    std::string response = Get(bad);
    EXPECT_EQ(response.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << bad;
    EXPECT_NE(response.find("\r\n\r\nstatus must be 100-999\n"), std::string::npos) << bad;
  }
}

TEST_F(TargetRoutesTest, BytesRoute) {
  Start();
  std::string response = Get("/bytes/10");
  EXPECT_EQ(response,
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
            "Content-Length: 10\r\nConnection: close\r\n\r\nxxxxxxxxxx");
  EXPECT_NE(Get("/bytes/0").find("Content-Length: 0\r\n"), std::string::npos);
  EXPECT_EQ(Get("/bytes/1073741825").rfind("HTTP/1.1 400 ", 0), 0u);
}

TEST_F(TargetRoutesTest, ErrorContentMatchesTheSeedPattern) {
  Start();
  std::string response = Get("/error-content");
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_EQ(response.substr(response.size() - 20), "something went wrong");
}

TEST_F(TargetRoutesTest, Redirects) {
  Start();
  std::string three = Get("/redirect/3");
  EXPECT_EQ(three.rfind("HTTP/1.1 302 Found\r\n", 0), 0u);
  EXPECT_NE(three.find("\r\nLocation: /redirect/2\r\n"), std::string::npos);
  EXPECT_NE(Get("/redirect/1").find("\r\nLocation: /\r\n"), std::string::npos);
  EXPECT_NE(Get("/redirect-loop").find("\r\nLocation: /redirect-loop\r\n"), std::string::npos);
  EXPECT_EQ(Get("/redirect/0").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);  // not a redirect route
}

TEST_F(TargetRoutesTest, Cookies) {
  Start();
  EXPECT_NE(Get("/cookie/set").find("\r\nSet-Cookie: hammer=1; Path=/\r\n"), std::string::npos);
  EXPECT_EQ(Get("/cookie/check").rfind("HTTP/1.1 401 Unauthorized\r\n", 0), 0u);
  EXPECT_EQ(Get("/cookie/check", "Cookie: a=b; hammer=1\r\n").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_EQ(Get("/cookie/check", "Cookie: hammer=10\r\n").rfind("HTTP/1.1 401 ", 0), 0u);
}

TEST_F(TargetRoutesTest, DelayRouteWaitsWithoutBlockingOthers) {
  Start();
  RawClient slow(server_->address());
  const MonoNanos start = MonoNow();
  slow.Write("GET /delay/300 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  // While the slow request waits, the same (single) loop answers another client: its answer
  // comes first, before anything of the slow one.
  EXPECT_EQ(Get("/").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_FALSE(slow.Readable());
  std::string response = slow.ReadAll();
  EXPECT_GE(MonoNow() - start, 300 * kMillisecond);
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_EQ(Get("/delay/3600001").rfind("HTTP/1.1 400 ", 0), 0u);
}

TEST_F(TargetRoutesTest, ErrorRateOneAnswersEverything500) {
  ServeOptions options;
  options.target.error_rate = 1.0;
  Start(options);
  EXPECT_EQ(Get("/"),
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
            "Content-Length: 15\r\nConnection: close\r\n\r\ninjected error\n");
  EXPECT_EQ(Get("/_hammer/stats").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);  // stats never fail
}

TEST_F(TargetRoutesTest, LatencyDelaysEveryResponse) {
  ServeOptions options;
  Result<LatencyDistribution> latency = LatencyDistribution::Parse("30ms");
  ASSERT_TRUE(latency.ok());
  options.target.latency = *latency;
  Start(options);
  const MonoNanos start = MonoNow();
  EXPECT_EQ(Get("/bytes/3").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_GE(MonoNow() - start, 30 * kMillisecond);
}

TEST_F(TargetRoutesTest, KeepAliveAndPipelinedRequestsAreAnsweredInOrder) {
  Start();
  RawClient client(server_->address());
  client.Write(
      "GET /status/201 HTTP/1.1\r\nHost: t\r\n\r\n"
      "GET /delay/20 HTTP/1.1\r\nHost: t\r\n\r\n"
      "GET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n");
  std::string responses = client.ReadResponses(3);
  size_t first = responses.find("HTTP/1.1 201 Created");
  size_t second = responses.find("HTTP/1.1 200 OK\r\nContent-Type: text/plain");
  size_t third = responses.find("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream");
  ASSERT_NE(first, std::string::npos) << responses;
  ASSERT_NE(second, std::string::npos) << responses;
  ASSERT_NE(third, std::string::npos) << responses;
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);  // the delayed answer is not overtaken
  EXPECT_EQ(responses.find("Connection: close"), std::string::npos);
}

TEST_F(TargetRoutesTest, MalformedRequestIsAnswered400AndClosed) {
  Start();
  RawClient client(server_->address());
  client.Write("GET / HTTP/1.1\r\nHost: a\r\nno colon in this field\r\n\r\n");
  std::string response = client.ReadAll();
  EXPECT_EQ(response.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << response;
  EXPECT_NE(response.find("Connection: close\r\n"), std::string::npos);
}

// The port also speaks h2c: a first line that is neither HTTP/1.x nor the HTTP/2 preface has
// no protocol to be answered in (RFC 9113 §3.4), so the connection is closed, and counted.
TEST_F(TargetRoutesTest, FirstLineOfNeitherProtocolIsClosedWithoutAnAnswer) {
  Start();
  RawClient client(server_->address());
  client.Write("INVALID CONNECTION PREFACE\r\n\r\n");
  EXPECT_EQ(client.ReadAll(), "");
  EXPECT_TRUE(client.closed());
  EXPECT_EQ(server_->resources().rejected(http::Rejection::kBadRequest), 1u);
}

TEST_F(TargetRoutesTest, OversizedHeadIsAnswered431) {
  Start();
  RawClient client(server_->address());
  client.Write("GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(70 * 1024, 'b') + "\r\n\r\n");
  std::string response = client.ReadAll();
  EXPECT_EQ(response.rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0), 0u)
      << response.substr(0, 200);
}

TEST_F(TargetRoutesTest, TwoThreadsShareOnePort) {
  ServeOptions options;
  options.threads = 2;
  Start(options);
  EXPECT_NE(server_->address().port(), 0);
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(Get("/").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_EQ(server_->counts().requests(), 20u);
  server_->Stop();
  server_->Stop();  // idempotent
}

}  // namespace
}  // namespace hammer::serve
