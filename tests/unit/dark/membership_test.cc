#include "hammer/dark/membership.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace hammer::dark {
namespace {

http::Url U(std::string_view text) {
  Result<http::Url> url = http::ParseUrl(text);
  EXPECT_TRUE(url.ok()) << text;
  return url.ok() ? *url : http::Url{};
}

MembershipConfig MustParse(std::string_view json) {
  Result<MembershipConfig> config = ParseMembershipConfig(json);
  EXPECT_TRUE(config.ok()) << json << ": " << config.status().message();
  return config.ok() ? *config : MembershipConfig{};
}

std::string ErrorOf(std::string_view json) {
  Result<MembershipConfig> config = ParseMembershipConfig(json);
  EXPECT_FALSE(config.ok()) << json << " was accepted";
  return config.status().message();
}

TEST(ParseMembershipConfigTest, EveryField) {
  MembershipConfig config = MustParse(R"({
    "regular": "web",
    "dark": {
      "web-dark": {"multiplier": 1.5, "strategy": "identical", "sampling": "bernoulli"},
      "web-canary": {"multiplier": 0, "strategy": "constant-qps", "target_rate": 12.5,
                     "buffer_capacity": 7, "buffer_ttl_s": 0.25}
    }})");
  EXPECT_EQ(config.regular, "web");
  ASSERT_EQ(config.dark.size(), 2u);
  // Sorted by name.
  const DarkClusterConfig& canary = config.dark[0];
  EXPECT_EQ(canary.name, "web-canary");
  EXPECT_EQ(canary.multiplier, 0.0);
  EXPECT_EQ(canary.strategy, "constant-qps");
  EXPECT_EQ(canary.target_rate, 12.5);
  EXPECT_EQ(canary.sampling, "accumulator");
  EXPECT_EQ(canary.buffer_capacity, 7u);
  EXPECT_EQ(canary.buffer_ttl, 250 * kMillisecond);
  const DarkClusterConfig& dark = config.dark[1];
  EXPECT_EQ(dark.name, "web-dark");
  EXPECT_EQ(dark.multiplier, 1.5);
  EXPECT_EQ(dark.strategy, "identical");
  EXPECT_EQ(dark.sampling, "bernoulli");
}

TEST(ParseMembershipConfigTest, Defaults) {
  MembershipConfig config = MustParse(R"({"dark": {"d": {}}})");
  EXPECT_EQ(config.regular, "");
  ASSERT_EQ(config.dark.size(), 1u);
  EXPECT_EQ(config.dark[0], (DarkClusterConfig{.name = "d"}));
  EXPECT_EQ(config.dark[0].multiplier, 1.0);
  EXPECT_EQ(config.dark[0].strategy, "relative");
  EXPECT_EQ(config.dark[0].buffer_capacity, 1000u);
  EXPECT_EQ(config.dark[0].buffer_ttl, 10 * kSecond);
  EXPECT_TRUE(MustParse("{}").dark.empty());
}

TEST(ParseMembershipConfigTest, ErrorsNameTheKey) {
  EXPECT_NE(ErrorOf("{").find("invalid JSON"), std::string::npos);
  EXPECT_EQ(ErrorOf("[]"), "membership config: must be a JSON object");
  EXPECT_EQ(ErrorOf(R"({"regualr": "web"})"), "regualr: unknown key");
  EXPECT_EQ(ErrorOf(R"({"regular": 3})"), "regular: must be a string");
  EXPECT_EQ(ErrorOf(R"({"dark": []})"), "dark: must be an object of clusters by name");
  EXPECT_EQ(ErrorOf(R"({"dark": {"d": 1}})"), "dark.d: must be an object");
  EXPECT_EQ(ErrorOf(R"({"dark": {"d": {"multipler": 1}}})"), "dark.d.multipler: unknown key");
  EXPECT_EQ(ErrorOf(R"({"dark": {"d": {"multiplier": -1}}})"),
            "dark.d.multiplier: must be a number >= 0");
  EXPECT_EQ(ErrorOf(R"({"dark": {"d": {"multiplier": "2"}}})"),
            "dark.d.multiplier: must be a number >= 0");
  EXPECT_EQ(ErrorOf(R"({"dark": {"d": {"strategy": "RELATIVE_TRAFFIC"}}})"),
            "dark.d.strategy: must be one of relative | identical | constant-qps");
  EXPECT_EQ(ErrorOf(R"({"dark": {"d": {"sampling": "coin"}}})"),
            "dark.d.sampling: must be one of accumulator | bernoulli");
  EXPECT_EQ(ErrorOf(R"({"dark": {"d": {"buffer_capacity": 0}}})"),
            "dark.d.buffer_capacity: must be an integer >= 1");
  EXPECT_EQ(ErrorOf(R"({"dark": {"d": {"buffer_capacity": 1.5}}})"),
            "dark.d.buffer_capacity: must be an integer >= 1");
  EXPECT_EQ(ErrorOf(R"({"dark": {"d": {"buffer_ttl_s": 0}}})"),
            "dark.d.buffer_ttl_s: must be > 0 and at most 86400");
  EXPECT_EQ(ErrorOf(R"({"regular": "web", "dark": {"web": {}}})"),
            "dark.web: is also the regular cluster");
  EXPECT_NE(ErrorOf(R"({"dark": {"a/b": {}}})").find("invalid cluster name 'a/b'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"regular": ".."})").find("invalid cluster name '..'"), std::string::npos);
  EXPECT_EQ(ErrorOf(R"({"dark": {"": {}}})"), "dark.: cluster name is empty");
}

TEST(ParseMembershipConfigTest, CountsBelongToZooKeeperMembers) {
  EXPECT_EQ(ErrorOf(R"({"regular_instances": 2})"),
            "regular_instances: not allowed here; ZooKeeper counts the cluster's members");
  EXPECT_EQ(ErrorOf(R"({"dark": {"d": {"instances": 2}}})"),
            "dark.d.instances: not allowed here; ZooKeeper counts the cluster's members");
  EXPECT_EQ(ErrorOf(R"({"dark": {"d": {"urls": []}}})"),
            "dark.d.urls: not allowed here; ZooKeeper counts the cluster's members");
}

TEST(ParseMembershipConfigTest, JsonRoundTrip) {
  MembershipConfig config = MustParse(R"({"regular": "web", "dark": {
      "b": {"multiplier": 0.3, "strategy": "constant-qps", "target_rate": 2, "buffer_ttl_s": 1.5},
      "a": {"sampling": "bernoulli"}}})");
  EXPECT_EQ(MustParse(MembershipConfigToJson(config)), config);
  MembershipConfig no_regular = MustParse(R"({"dark": {"a": {}}})");
  EXPECT_EQ(MustParse(MembershipConfigToJson(no_regular)), no_regular);
}

TEST(ParseStaticMembershipConfigTest, CountsAndUrls) {
  Result<StaticMembershipOptions> parsed = ParseStaticMembershipConfig(R"({
    "regular": "web", "regular_instances": 4,
    "dark": {"d1": {"urls": ["http://127.0.0.1:9001", "http://127.0.0.1:9002"]},
             "d2": {"urls": ["http://127.0.0.1:9003"], "instances": 3, "multiplier": 2}}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  StaticMembership membership(*parsed);
  std::shared_ptr<const MembershipSnapshot> snapshot = membership.Current();
  EXPECT_FALSE(snapshot->stale);
  EXPECT_EQ(snapshot->version, 1u);
  EXPECT_EQ(snapshot->regular_cluster, "web");
  EXPECT_EQ(snapshot->regular_instances, 4u);
  ASSERT_EQ(snapshot->dark.size(), 2u);
  EXPECT_EQ(snapshot->dark[0].config.name, "d1");
  EXPECT_EQ(snapshot->dark[0].instances, 2u);  // the number of urls
  EXPECT_EQ(snapshot->dark[0].urls,
            (std::vector<http::Url>{U("http://127.0.0.1:9001"), U("http://127.0.0.1:9002")}));
  EXPECT_EQ(snapshot->dark[1].instances, 3u);  // given
  EXPECT_EQ(snapshot->dark[1].config.multiplier, 2.0);
  EXPECT_EQ(snapshot->FindDark("d2"), &snapshot->dark[1]);
  EXPECT_EQ(snapshot->FindDark("web"), nullptr);

  Result<StaticMembershipOptions> defaults = ParseStaticMembershipConfig("{}");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->regular_cluster, "regular");
  EXPECT_EQ(defaults->regular_instances, 1u);

  Result<StaticMembershipOptions> bad =
      ParseStaticMembershipConfig(R"({"dark": {"d": {"urls": ["ftp://x"]}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("dark.d.urls: ", 0), 0u) << bad.status().message();
}

TEST(StaticMembershipTest, FromPlainOptions) {
  StaticMembershipOptions options;
  options.regular_cluster = "web";
  options.regular_instances = 10;
  options.dark.push_back({.config = {.name = "z", .multiplier = 1.2}, .urls = {}, .instances = 2});
  options.dark.push_back(
      {.config = {.name = "a"}, .urls = {U("http://127.0.0.1:1")}, .instances = 0});
  MembershipSnapshot snapshot = StaticMembership::MakeSnapshot(options);
  EXPECT_FALSE(snapshot.stale);
  ASSERT_EQ(snapshot.dark.size(), 2u);
  EXPECT_EQ(snapshot.dark[0].config.name, "a");
  EXPECT_EQ(snapshot.dark[0].instances, 1u);
  EXPECT_EQ(snapshot.dark[1].config.name, "z");
  EXPECT_EQ(snapshot.dark[1].instances, 2u);
  EXPECT_EQ(snapshot.dark[1].config.multiplier, 1.2);
}

TEST(MemberDataTest, JsonAndBareForms) {
  EXPECT_EQ(MemberData(U("http://127.0.0.1:8081")), R"({"url":"http://127.0.0.1:8081"})");
  for (std::string_view data :
       {R"({"url":"http://127.0.0.1:8081/"})", R"({"url": "http://127.0.0.1:8081", "x": 1})",
        "http://127.0.0.1:8081", "127.0.0.1:8081"}) {
    Result<http::Url> url = ParseMemberData(data);
    ASSERT_TRUE(url.ok()) << data << ": " << url.status().message();
    EXPECT_EQ(*url, U("http://127.0.0.1:8081")) << data;
  }
  EXPECT_EQ(ParseMemberData("https://[::1]:8443")->port, 8443);
  EXPECT_FALSE(ParseMemberData("").ok());
  EXPECT_FALSE(ParseMemberData("{}").ok());
  EXPECT_FALSE(ParseMemberData(R"({"url": 5})").ok());
  EXPECT_FALSE(ParseMemberData("{not json").ok());
  EXPECT_FALSE(ParseMemberData("ftp://127.0.0.1:1").ok());
}

TEST(BuildSnapshotTest, CountsFromMembersSettingsFromConfig) {
  MembershipConfig config =
      MustParse(R"({"regular": "web", "dark": {"d1": {"multiplier": 2}, "d2": {}, "d0": {}}})");
  std::map<std::string, std::vector<http::Url>> members = {
      {"d1", {U("http://127.0.0.1:1"), U("http://127.0.0.1:2")}},
      {"d2", {U("http://127.0.0.1:3")}},
      {"unconfigured", {U("http://127.0.0.1:4")}},
  };
  MembershipSnapshot snapshot = BuildSnapshot(config, 5, members);
  EXPECT_FALSE(snapshot.stale);
  EXPECT_EQ(snapshot.regular_cluster, "web");
  EXPECT_EQ(snapshot.regular_instances, 5u);
  ASSERT_EQ(snapshot.dark.size(), 3u);
  EXPECT_EQ(snapshot.dark[0].config.name, "d0");
  EXPECT_EQ(snapshot.dark[0].instances, 0u);  // configured, no members
  EXPECT_EQ(snapshot.dark[1].config.name, "d1");
  EXPECT_EQ(snapshot.dark[1].instances, 2u);
  EXPECT_EQ(snapshot.dark[1].config.multiplier, 2.0);
  EXPECT_EQ(snapshot.dark[2].urls, members["d2"]);
  EXPECT_EQ(snapshot.FindDark("unconfigured"), nullptr);

  MembershipSnapshot same = snapshot;
  same.stale = true;
  same.version = 9;
  same.last_update = 1;
  EXPECT_TRUE(snapshot.SameMembership(same));
  same.dark[1].urls.pop_back();
  EXPECT_FALSE(snapshot.SameMembership(same));
  MembershipSnapshot other_count = snapshot;
  other_count.regular_instances = 6;
  EXPECT_FALSE(snapshot.SameMembership(other_count));
}

TEST(SnapshotHolderTest, VersionsAndReaders) {
  SnapshotHolder holder(MembershipSnapshot{});
  EXPECT_EQ(holder.version(), 1u);
  EXPECT_TRUE(holder.Load()->stale);
  EXPECT_GT(holder.Load()->last_update, 0);

  SnapshotReader reader(holder);
  const MembershipSnapshot* first = &reader.Get();
  EXPECT_EQ(reader.version(), 1u);
  EXPECT_EQ(&reader.Get(), first);  // unchanged: the same snapshot object

  MembershipSnapshot next;
  next.regular_instances = 3;
  next.stale = false;
  next.last_update = 42;
  std::shared_ptr<const MembershipSnapshot> published = holder.Publish(next);
  EXPECT_EQ(published->version, 2u);
  EXPECT_EQ(published->last_update, 42);
  EXPECT_EQ(holder.version(), 2u);
  EXPECT_EQ(reader.Get().regular_instances, 3u);
  EXPECT_EQ(reader.version(), 2u);
  EXPECT_EQ(&reader.Get(), published.get());
}

TEST(SnapshotHolderTest, WaitForSeesAPublishFromAnotherThread) {
  SnapshotHolder holder(MembershipSnapshot{});
  std::thread publisher([&] {
    for (uint32_t n = 1; n <= 5; ++n) {
      MembershipSnapshot next;
      next.regular_instances = n;
      holder.Publish(next);
    }
  });
  auto seen = holder.WaitFor([](const MembershipSnapshot& s) { return s.regular_instances == 5; },
                             10 * kSecond);
  publisher.join();
  EXPECT_EQ(seen->regular_instances, 5u);
  EXPECT_EQ(seen->version, 6u);
  // A predicate that never holds returns the current snapshot after the timeout.
  auto timed_out =
      holder.WaitFor([](const MembershipSnapshot&) { return false; }, 10 * kMillisecond);
  EXPECT_EQ(timed_out->version, 6u);
}

TEST(SnapshotReaderTest, ManyReadersOneWriter) {
  SnapshotHolder holder(MembershipSnapshot{});
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  std::atomic<uint64_t> torn{0};
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      SnapshotReader reader(holder);
      uint64_t last = 0;
      while (!done.load()) {
        const MembershipSnapshot& s = reader.Get();
        // Each snapshot is internally consistent and versions never go back.
        if (s.regular_instances + 1 != s.version || s.version < last) torn.fetch_add(1);
        last = s.version;
      }
    });
  }
  for (uint32_t n = 1; n <= 2000; ++n) {
    MembershipSnapshot next;
    next.regular_instances = n;
    holder.Publish(next);
  }
  done = true;
  for (std::thread& reader : readers)
    reader.join();
  EXPECT_EQ(torn.load(), 0u);
}

}  // namespace
}  // namespace hammer::dark
