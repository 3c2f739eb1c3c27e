// HealthChecker against `hammer serve`'s routes in process: the first check judges a new
// instance, thresholds of passes and failures in a row change the state of a judged one, the
// expected status may be a range, and checks go to an instance's pinned address while naming
// its URL's host.
#include "hammer/dark/health_checker.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <string>

#include "../http/client_loop.h"

namespace hammer::dark {
namespace {

// A loopback port bound and never listened on: connections to it are refused.
class RefusingPort {
 public:
  RefusingPort() : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
  }
  ~RefusingPort() { close(fd_); }
  uint16_t port() const { return port_; }

 private:
  int fd_;
  uint16_t port_ = 0;
};

UpstreamAddress Instance(const std::string& url) {
  Result<http::Url> parsed = http::ParseUrl(url);
  EXPECT_TRUE(parsed.ok()) << url;
  return UpstreamAddress{*parsed, std::nullopt, 1};
}

class HealthCheckerTest : public http::testing::ClientLoopTest {
 protected:
  HealthCheckerTest() : ClientLoopTest(20 * kSecond) {}

  void SetUp() override {
    ClientLoopTest::SetUp();
    Result<std::unique_ptr<serve::TargetServerGroup>> server = http::testing::StartTargetServer();
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(*server);
    options_.interval = 20 * kMillisecond;
    options_.timeout = 2 * kSecond;
  }

  std::string ServerUrl() const { return "http://" + server_->address().ToString(); }

  std::unique_ptr<HealthChecker> Checker(UpstreamPool& pool) {
    return std::make_unique<HealthChecker>(&loop_, &resolver_, &pool, options_,
                                           http::ClientOptions{});
  }

  // Runs the loop until `done` holds (polled every 5 ms); false if the guard stopped it. Once a
  // test: a stopped loop does not run again.
  bool RunUntil(const std::function<bool()>& done) {
    std::function<void()> poll;
    net::Timer timer(&loop_, [&] { poll(); });
    poll = [&] {
      if (done()) {
        loop_.Stop();
        return;
      }
      timer.ArmAfter(5 * kMillisecond);
    };
    timer.ArmAfter(0);
    return RunLoop();
  }

  std::unique_ptr<serve::TargetServerGroup> server_;
  HealthCheckOptions options_;
};

TEST_F(HealthCheckerTest, TheFirstCheckJudgesThenThresholdsInARowChangeTheState) {
  options_.path = "/";
  options_.healthy_threshold = 2;
  options_.unhealthy_threshold = 3;
  RefusingPort refusing;
  UpstreamPool pool(1, OutlierOptions{}, BalancePolicy::kRoundRobin, /*health_checked=*/true);
  pool.SetInstances(
      0, {Instance(ServerUrl()), Instance("http://127.0.0.1:" + std::to_string(refusing.port()))});
  std::shared_ptr<const UpstreamSet> set = pool.Current();
  UpstreamInstance& serving = *set->instances[0];
  UpstreamInstance& refused = *set->instances[1];
  EXPECT_EQ(serving.health(), Health::kUnchecked);
  std::unique_ptr<HealthChecker> checker = Checker(pool);
  checker->Start();
  // Both judged by their first check; then the server goes away, and three failures in a row
  // make the healthy instance unhealthy.
  bool judged = false;
  uint64_t failed_when_judged = 0;
  ASSERT_TRUE(RunUntil([&] {
    if (!judged) {
      if (serving.health() == Health::kUnchecked || refused.health() == Health::kUnchecked) {
        return false;
      }
      judged = true;
      EXPECT_EQ(serving.health(), Health::kHealthy);
      EXPECT_EQ(refused.health(), Health::kUnhealthy);
      EXPECT_EQ(pool.counters().became_healthy.load(), 1u);
      EXPECT_EQ(pool.counters().became_unhealthy.load(), 1u);
      failed_when_judged = pool.counters().checks_failed.load();
      server_->Stop();
      return false;
    }
    return serving.health() == Health::kUnhealthy;
  }));
  // The refusing instance failed along; the serving one failed three times to change.
  EXPECT_GE(pool.counters().checks_failed.load() - failed_when_judged, 3u);
  EXPECT_EQ(pool.counters().became_unhealthy.load(), 2u);
  EXPECT_EQ(pool.counters().became_healthy.load(), 1u);
}

TEST_F(HealthCheckerTest, AStatusRangeAndAnInstanceAddedLaterAreChecked) {
  options_.path = "/status/302";
  options_.status_min = 200;
  options_.status_max = 399;
  UpstreamPool pool(1, OutlierOptions{}, BalancePolicy::kRoundRobin, true);
  std::unique_ptr<HealthChecker> checker = Checker(pool);
  pool.OnChange([&] { checker->Notify(); });
  checker->Start();
  // Added after the checker started, and named for a host that does not resolve: the check
  // goes to the pinned address with that name as its Host.
  UpstreamAddress pinned =
      Instance("http://upstream.invalid:" + std::to_string(server_->address().port()));
  pinned.address = *net::SocketAddress::FromIp("127.0.0.1", 0);
  pool.SetInstances(0, {pinned});
  UpstreamInstance& instance = *pool.Current()->instances[0];
  ASSERT_TRUE(RunUntil([&] { return instance.health() != Health::kUnchecked; }));
  EXPECT_EQ(instance.health(), Health::kHealthy);
  EXPECT_EQ(pool.counters().checks_failed.load(), 0u);
}

TEST_F(HealthCheckerTest, AStatusOutsideTheExpectedOneFails) {
  options_.path = "/status/503";
  UpstreamPool pool(1, OutlierOptions{}, BalancePolicy::kRoundRobin, true);
  pool.SetInstances(0, {Instance(ServerUrl())});
  UpstreamInstance& instance = *pool.Current()->instances[0];
  std::unique_ptr<HealthChecker> checker = Checker(pool);
  checker->Start();
  ASSERT_TRUE(RunUntil([&] { return instance.health() != Health::kUnchecked; }));
  EXPECT_EQ(instance.health(), Health::kUnhealthy);
  EXPECT_EQ(pool.counters().checks_passed.load(), 0u);
}

}  // namespace
}  // namespace hammer::dark
