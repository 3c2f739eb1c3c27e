// ZkMembership when ZooKeeper goes away (zk_test_server.h): the server killed and restarted on
// its data, and a network cut long enough for ZooKeeper to expire the sessions (TcpRelay). The
// last known values stay in force, marked stale, until the proxy and the dark instance are back
// with their registrations.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hammer/dark/zk_announcer.h"
#include "hammer/dark/zk_membership.h"
#include "zk_test_server.h"

namespace hammer::dark {
namespace {

using testing::ConnectLoopback;
using testing::PollUntil;
using testing::TestClient;
using testing::ZkMembershipTest;

// A TCP relay between clients and ZooKeeper that can cut the network: blocked, it drops every
// connection and refuses new ones, while ZooKeeper keeps running (and expires sessions).
class TcpRelay {
 public:
  explicit TcpRelay(uint16_t target) : target_(target) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(listener_, 16);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~TcpRelay() {
    stop_ = true;
    thread_.join();
    for (auto& [a, b] : pairs_) {
      close(a);
      close(b);
    }
    close(listener_);
  }
  std::string hosts() const { return "127.0.0.1:" + std::to_string(port_); }
  void SetBlocked(bool blocked) { blocked_ = blocked; }

 private:
  void Run() {
    char buffer[65536];
    while (!stop_) {
      if (blocked_) {
        for (auto& [a, b] : pairs_) {
          close(a);
          close(b);
        }
        pairs_.clear();
      }
      std::vector<pollfd> fds = {{listener_, POLLIN, 0}};
      for (auto& [a, b] : pairs_) {
        fds.push_back({a, POLLIN, 0});
        fds.push_back({b, POLLIN, 0});
      }
      if (poll(fds.data(), fds.size(), 10) <= 0) continue;
      std::vector<std::pair<int, int>> alive;
      if (fds[0].revents & POLLIN) {
        int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        int server = blocked_ || client < 0 ? -1 : ConnectLoopback(target_);
        if (server < 0) {
          if (client >= 0) close(client);
        } else {
          alive.emplace_back(client, server);
        }
      }
      for (size_t i = 0; i + 1 < fds.size(); i += 2) {
        auto [a, b] = pairs_[i / 2];
        bool ok = Pump(fds[i + 1], b, buffer, sizeof buffer) &&
                  Pump(fds[i + 2], a, buffer, sizeof buffer);
        if (ok) {
          alive.emplace_back(a, b);
        } else {
          close(a);
          close(b);
        }
      }
      pairs_.swap(alive);
    }
  }
  static bool Pump(const pollfd& from, int to, char* buffer, size_t size) {
    if ((from.revents & (POLLIN | POLLHUP | POLLERR)) == 0) return true;
    ssize_t n = read(from.fd, buffer, size);
    if (n <= 0) return false;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = write(to, buffer + done, static_cast<size_t>(n - done));
      if (w <= 0) return false;
      done += w;
    }
    return true;
  }

  uint16_t target_;
  uint16_t port_ = 0;
  int listener_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<bool> blocked_{false};
  std::vector<std::pair<int, int>> pairs_;  // relay thread only
  std::thread thread_;
};

TEST_F(ZkMembershipTest, ZooKeeperDownKeepsLastValuesThenRecovers) {
  ZkMembershipOptions options = Options();
  options.regular_cluster = "web";
  options.register_url = "http://127.0.0.1:7001";
  options.initial_config = R"({"dark": {"d": {"multiplier": 2}}})";
  auto started = ZkMembership::Start(Url(), options);
  ASSERT_TRUE(started.ok()) << started.status().message();
  ZkMembership& membership = **started;
  auto dark = Announce("d", "http://127.0.0.1:9301");
  auto before = WaitFor(membership, [](auto& x) { return DarkCount(x, "d") == 1; });
  ASSERT_EQ(DarkCount(*before, "d"), 1u);
  ASSERT_EQ(before->regular_instances, 1u);

  client_.reset();
  server_->Kill();
  auto down = WaitFor(membership, [](auto& x) { return x.stale; });
  ASSERT_TRUE(down->stale);
  EXPECT_TRUE(down->SameMembership(*before));  // the last known values stay in force
  EXPECT_TRUE(membership.stats().stale);
  // A read that fails on the dead server may mark the values stale before the client library
  // reports the lost connection (seen once under ThreadSanitizer): wait for that report too.
  EXPECT_TRUE(PollUntil([&] { return !membership.stats().connected; }, 10 * kSecond));

  ASSERT_TRUE(server_->Start());  // same port, same data
  auto up = WaitFor(
      membership, [](auto& x) { return !x.stale; }, 15 * kSecond);
  ASSERT_FALSE(up->stale);
  EXPECT_TRUE(up->SameMembership(*before));
  client_ = std::make_unique<TestClient>(server_->hosts());
  EXPECT_EQ(client_->Children(root_ + "/clusters/web/members").size(), 1u);
  ASSERT_TRUE(dark->WaitRegistered(10 * kSecond));
  EXPECT_EQ(client_->Children(root_ + "/clusters/d/members").size(), 1u);

  // Watches work again.
  auto dark2 = Announce("d", "http://127.0.0.1:9302");
  EXPECT_EQ(DarkCount(*WaitFor(membership, [](auto& x) { return DarkCount(x, "d") == 2; }), "d"),
            2u);
  EXPECT_GE(membership.stats().disconnects, 1u);
}

TEST_F(ZkMembershipTest, ExpiredSessionRegistersAgain) {
  // Proxy and dark instance reach ZooKeeper through a relay that can cut them off. Cut off
  // longer than their 1 s session, they lose it; back, they start a new one and re-register.
  TcpRelay relay(server_->port());
  ZkMembershipOptions options = Options();
  options.session_timeout = kSecond;
  options.regular_cluster = "web";
  options.register_url = "http://127.0.0.1:7001";
  options.initial_config = R"({"dark": {"d": {}}})";
  auto started = ZkMembership::Start(Url(relay.hosts()), options);
  ASSERT_TRUE(started.ok()) << started.status().message();
  ZkMembership& membership = **started;
  ZkAnnouncerOptions announcer_options;
  announcer_options.session.session_timeout = kSecond;
  announcer_options.session.retry_delay = 50 * kMillisecond;
  announcer_options.start_timeout = 10 * kSecond;
  auto dark = ZkAnnouncer::Start(Url(relay.hosts(), "/clusters/d"), "http://127.0.0.1:9401",
                                 announcer_options);
  ASSERT_TRUE(dark.ok()) << dark.status().message();
  auto before = WaitFor(membership, [](auto& x) { return DarkCount(x, "d") == 1; });
  ASSERT_EQ(DarkCount(*before, "d"), 1u);
  ASSERT_EQ(before->regular_instances, 1u);
  const int64_t old_session = membership.session_id();
  const std::string old_path = membership.registered_path();

  relay.SetBlocked(true);
  ASSERT_TRUE(WaitFor(membership, [](auto& x) { return x.stale; })->stale);
  // ZooKeeper expires both sessions: their ephemeral members go.
  ASSERT_TRUE(PollUntil(
      [&] {
        return client_->Children(root_ + "/clusters/web/members").empty() &&
               client_->Children(root_ + "/clusters/d/members").empty();
      },
      10 * kSecond));
  EXPECT_TRUE(membership.Current()->SameMembership(*before));  // still in force meanwhile
  // A config written while the proxy was away is picked up on its return.
  ASSERT_EQ(client_->Set(root_ + "/config", R"({"dark": {"d": {"multiplier": 3}}})"), ZOK);

  relay.SetBlocked(false);
  auto after = WaitFor(
      membership,
      [](auto& x) {
        return !x.stale && x.regular_instances == 1 && DarkCount(x, "d") == 1 &&
               x.dark[0].config.multiplier == 3;
      },
      15 * kSecond);
  ASSERT_FALSE(after->stale);
  EXPECT_EQ(after->regular_instances, 1u);
  EXPECT_EQ(DarkCount(*after, "d"), 1u);
  EXPECT_EQ(after->dark[0].config.multiplier, 3.0);
  EXPECT_NE(membership.session_id(), old_session);
  EXPECT_GE(membership.stats().session_expiries, 1u);
  EXPECT_EQ(membership.stats().sessions, 2u);
  const std::string new_path = membership.registered_path();
  EXPECT_NE(new_path, "");
  EXPECT_NE(new_path, old_path);
  EXPECT_EQ(client_->Children(root_ + "/clusters/web/members").size(), 1u);
  ASSERT_TRUE((*dark)->WaitRegistered(10 * kSecond));
  EXPECT_EQ(client_->Children(root_ + "/clusters/d/members").size(), 1u);
}

}  // namespace
}  // namespace hammer::dark
