// ZkMembership against a real ZooKeeper (zk_test_server.h): zk:// URLs and start-up errors,
// members and config changes followed live, and ZkAnnouncer's registration as a dark instance.
// How fast a change reaches the proxy is measured by bench/dark_membership.py, not here.
#include "hammer/dark/zk_membership.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hammer/dark/zk_announcer.h"
#include "zk_test_server.h"

namespace hammer::dark {
namespace {

using testing::PollUntil;
using testing::ZkMembershipTest;

TEST(ParseZkUrlTest, HostsAndPath) {
  Result<net::ZkUrl> url = net::ParseZkUrl("zk://127.0.0.1:2181,127.0.0.1:2182/hammer/x/");
  ASSERT_TRUE(url.ok()) << url.status().message();
  EXPECT_EQ(url->hosts, "127.0.0.1:2181,127.0.0.1:2182");
  EXPECT_EQ(url->path, "/hammer/x");
  EXPECT_EQ(net::ParseZkUrl("zk://127.0.0.1:2181")->path, "");
  EXPECT_EQ(net::ParseZkUrl("zk://127.0.0.1:2181/")->path, "");
  EXPECT_FALSE(net::ParseZkUrl("http://127.0.0.1:2181/x").ok());
  EXPECT_FALSE(net::ParseZkUrl("zk:///x").ok());
  EXPECT_FALSE(net::ParseZkUrl("zk://h:1/a//b").ok());
  EXPECT_EQ(net::JoinZkPath("", "config"), "/config");
  EXPECT_EQ(net::JoinZkPath("/hammer", "config"), "/hammer/config");
}

TEST(ZkStartTest, RejectsBadArguments) {
  EXPECT_FALSE(ZkMembership::Start("zk:/127.0.0.1:1/x", {}).ok());
  ZkMembershipOptions bad_config;
  bad_config.initial_config = R"({"dark": {"d": {"multiplier": -1}}})";
  auto membership = ZkMembership::Start("zk://127.0.0.1:1/x", bad_config);
  ASSERT_FALSE(membership.ok());
  EXPECT_EQ(membership.status().message(),
            "initial config: dark.d.multiplier: must be a number >= 0");
  auto announcer = ZkAnnouncer::Start("zk://127.0.0.1:1/hammer", "http://127.0.0.1:1");
  ASSERT_FALSE(announcer.ok());
  EXPECT_EQ(announcer.status().message(),
            "'zk://127.0.0.1:1/hammer': expected zk://HOST:PORT/PATH/clusters/<cluster name>");
  EXPECT_FALSE(ZkAnnouncer::Start("zk://127.0.0.1:1/h/clusters/d", "ftp://x").ok());
  EXPECT_FALSE(ZkAnnouncer::Start("zk://127.0.0.1:1/h/clusters/..", "http://127.0.0.1:1").ok());
  ZkMembershipOptions bad_cluster;
  bad_cluster.regular_cluster = "a b";
  membership = ZkMembership::Start("zk://127.0.0.1:1/x", bad_cluster);
  ASSERT_FALSE(membership.ok());
  EXPECT_EQ(membership.status().message(),
            "regular cluster: invalid cluster name 'a b' (printable ASCII without '/' or spaces, "
            "at most 128 bytes)");
}

TEST_F(ZkMembershipTest, MembersAppearAndDisappear) {
  ZkMembershipOptions options = Options();
  options.regular_cluster = "web";
  options.register_url = "http://127.0.0.1:7001";
  options.initial_config = R"({"regular": "web", "dark": {"web-dark": {"multiplier": 1.5}}})";
  auto proxy = ZkMembership::Start(Url(), options);
  ASSERT_TRUE(proxy.ok()) << proxy.status().message();
  ZkMembership& membership = **proxy;

  auto s = WaitFor(membership, [](auto& x) { return x.regular_instances == 1; });
  EXPECT_FALSE(s->stale);
  EXPECT_EQ(s->regular_cluster, "web");
  EXPECT_EQ(s->regular_instances, 1u);  // itself
  ASSERT_NE(s->FindDark("web-dark"), nullptr);
  EXPECT_EQ(s->FindDark("web-dark")->config.multiplier, 1.5);
  EXPECT_EQ(DarkCount(*s, "web-dark"), 0u);
  EXPECT_EQ(client_->Get(root_ + "/config"), options.initial_config);
  EXPECT_EQ(client_->Children(root_ + "/clusters/web/members").size(), 1u);
  EXPECT_EQ(membership.registered_path().rfind(root_ + "/clusters/web/members/m-", 0), 0u);

  // A dark instance announces itself: the watch brings Nd to the proxy (WaitFor's deadline is
  // only a safety net; bench/dark_membership.py measures how fast).
  auto dark1 = Announce("web-dark", "http://127.0.0.1:9001");
  s = WaitFor(membership, [](auto& x) { return DarkCount(x, "web-dark") == 1; });
  ASSERT_EQ(DarkCount(*s, "web-dark"), 1u);
  EXPECT_EQ(s->FindDark("web-dark")->urls[0].ToString(), "http://127.0.0.1:9001/");

  auto dark2 = Announce("web-dark", "http://127.0.0.1:9002");
  s = WaitFor(membership, [](auto& x) { return DarkCount(x, "web-dark") == 2; });
  ASSERT_EQ(DarkCount(*s, "web-dark"), 2u);
  EXPECT_EQ(s->FindDark("web-dark")->urls[0].port, 9001);  // creation order
  EXPECT_EQ(s->FindDark("web-dark")->urls[1].port, 9002);

  // A member whose data is no URL is not an instance copies could go to.
  ASSERT_EQ(client_->Create(root_ + "/clusters/web-dark/members/junk", "not a url"), ZOK);

  // An instance leaves: Nd follows.
  dark1.reset();
  s = WaitFor(membership, [](auto& x) { return DarkCount(x, "web-dark") == 1; });
  ASSERT_EQ(DarkCount(*s, "web-dark"), 1u);
  EXPECT_EQ(s->FindDark("web-dark")->urls[0].port, 9002);

  // A second proxy of the regular cluster, registering once it knows its port: both count
  // Ns = 2; it leaves: Ns = 1.
  ZkMembershipOptions second_options = options;
  second_options.register_url.clear();
  auto second = ZkMembership::Start(Url(), second_options);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ((*second)->Current()->regular_instances, 1u);  // read before registering
  EXPECT_FALSE((*second)->Register("http://127.0.0.1:0").ok());
  ASSERT_TRUE((*second)->Register("http://127.0.0.1:7002").ok());
  s = WaitFor(membership, [](auto& x) { return x.regular_instances == 2; });
  EXPECT_EQ(s->regular_instances, 2u);
  EXPECT_EQ(WaitFor(**second, [](auto& x) { return x.regular_instances == 2; })->regular_instances,
            2u);
  EXPECT_EQ(DarkCount(*(*second)->Current(), "web-dark"), 1u);
  const std::string second_path = (*second)->registered_path();
  EXPECT_EQ(client_->Get(second_path), R"({"url":"http://127.0.0.1:7002"})");
  // Moving to another address re-registers: still one member for that proxy.
  ASSERT_TRUE((*second)->Register("http://127.0.0.1:7003").ok());
  ASSERT_TRUE(PollUntil(
      [&] {
        const std::string path = (*second)->registered_path();
        return !path.empty() && path != second_path &&
               client_->Children(root_ + "/clusters/web/members").size() == 2;
      },
      5 * kSecond));
  EXPECT_EQ(client_->Get((*second)->registered_path()), R"({"url":"http://127.0.0.1:7003"})");
  second->reset();
  s = WaitFor(membership, [](auto& x) { return x.regular_instances == 1; });
  EXPECT_EQ(s->regular_instances, 1u);

  ZkMembershipStats stats = membership.stats();
  EXPECT_TRUE(stats.connected);
  EXPECT_FALSE(stats.stale);
  EXPECT_EQ(stats.sessions, 1u);
  EXPECT_EQ(stats.registrations, 1u);
  EXPECT_EQ(stats.config_errors, 0u);
}

TEST_F(ZkMembershipTest, ConfigChangesApplyLive) {
  ASSERT_EQ(
      client_->Create(root_ + "/config", R"({"regular": "web", "dark": {"d": {"multiplier": 1}}})"),
      ZOK);
  std::mutex calls_mu;
  std::vector<uint64_t> calls;
  ZkMembershipOptions options = Options();
  options.on_change = [&](std::shared_ptr<const MembershipSnapshot> s) {
    std::lock_guard lock(calls_mu);
    calls.push_back(s->version);
  };
  auto started = ZkMembership::Start(Url(), options);
  ASSERT_TRUE(started.ok()) << started.status().message();
  ZkMembership& membership = **started;
  auto dark = Announce("d", "http://127.0.0.1:9101");
  auto s = WaitFor(membership, [](auto& x) { return DarkCount(x, "d") == 1; });
  ASSERT_EQ(DarkCount(*s, "d"), 1u);
  EXPECT_EQ(s->regular_cluster, "web");
  EXPECT_EQ(s->regular_instances, 0u);  // no proxy registered: no copies
  EXPECT_EQ(membership.registered_path(), "");

  ASSERT_EQ(client_->Set(root_ + "/config", R"({"regular": "web", "dark": {"d": {
      "multiplier": 2.5, "strategy": "constant-qps", "target_rate": 5}}})"),
            ZOK);
  s = WaitFor(membership,
              [](auto& x) { return x.dark.size() == 1 && x.dark[0].config.multiplier == 2.5; });
  ASSERT_EQ(s->dark.size(), 1u);
  EXPECT_EQ(s->dark[0].config.strategy, "constant-qps");
  EXPECT_EQ(s->dark[0].config.target_rate, 5.0);
  EXPECT_EQ(s->dark[0].instances, 1u);

  // A second dark cluster, with a member that was there before it was configured.
  auto other = Announce("e", "http://127.0.0.1:9102");
  ASSERT_EQ(client_->Set(root_ + "/config",
                         R"({"regular": "web", "dark": {"d": {"multiplier": 2.5}, "e": {}}})"),
            ZOK);
  s = WaitFor(membership, [](auto& x) { return DarkCount(x, "e") == 1; });
  ASSERT_EQ(DarkCount(*s, "e"), 1u);
  const uint64_t good_version = s->version;

  // An invalid config is reported and ignored: the last valid one stays in force, not stale.
  ASSERT_EQ(client_->Set(root_ + "/config", R"({"dark": {"d": {"multiplier": -3}}})"), ZOK);
  ASSERT_TRUE(PollUntil([&] { return membership.stats().config_errors == 1; }, 5 * kSecond));
  EXPECT_EQ(membership.stats().last_error,
            root_ + "/config: dark.d.multiplier: must be a number >= 0");
  s = membership.Current();
  EXPECT_EQ(s->version, good_version);
  EXPECT_FALSE(s->stale);
  EXPECT_EQ(DarkCount(*s, "e"), 1u);

  // Watches were re-armed after the rejected change.
  ASSERT_EQ(client_->Set(root_ + "/config", R"({"regular": "web", "dark": {"e": {}}})"), ZOK);
  s = WaitFor(membership, [](auto& x) { return x.dark.size() == 1; });
  ASSERT_EQ(s->dark.size(), 1u);
  EXPECT_EQ(s->dark[0].config.name, "e");

  // No config: no dark clusters.
  ASSERT_EQ(client_->Delete(root_ + "/config"), ZOK);
  s = WaitFor(membership, [](auto& x) { return x.dark.empty(); });
  EXPECT_TRUE(s->dark.empty());
  EXPECT_FALSE(s->stale);

  // on_change saw every publish after the first, in order (it runs just after the publish).
  auto last_call = [&] {
    std::lock_guard lock(calls_mu);
    return calls.empty() ? 0 : calls.back();
  };
  EXPECT_TRUE(PollUntil([&] { return last_call() == membership.version(); }, 5 * kSecond));
  std::lock_guard lock(calls_mu);
  EXPECT_EQ(calls.size() + 1, calls.back());
  EXPECT_TRUE(std::is_sorted(calls.begin(), calls.end()));
}

TEST_F(ZkMembershipTest, AnnouncerIsVisibleAndStaysRegistered) {
  auto announcer = Announce("d", "http://127.0.0.1:9201");
  ASSERT_NE(announcer, nullptr);
  const std::string members = root_ + "/clusters/d/members";
  const std::string node = announcer->node_path();
  ASSERT_EQ(node.rfind(members + "/m-", 0), 0u) << node;
  std::vector<std::string> children = client_->Children(members);
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(members + "/" + children[0], node);
  EXPECT_EQ(client_->Get(node), R"({"url":"http://127.0.0.1:9201"})");

  // Deleted by someone else: registered again.
  ASSERT_EQ(client_->Delete(node), ZOK);
  ASSERT_TRUE(PollUntil(
      [&] {
        children = client_->Children(members);
        return children.size() == 1 && members + "/" + children[0] != node &&
               announcer->node_path() == members + "/" + children[0];
      },
      5 * kSecond));

  // Destroyed: the member goes at once.
  announcer.reset();
  EXPECT_TRUE(client_->Children(members).empty());
}

}  // namespace
}  // namespace hammer::dark
