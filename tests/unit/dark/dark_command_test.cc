#include "hammer/dark/dark_command.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace hammer::dark {
namespace {

DarkFlags Minimal() {
  DarkFlags flags;
  flags.upstreams = {"http://127.0.0.1:9001"};
  flags.dark = {"canary=http://127.0.0.1:9101,http://127.0.0.1:9102"};
  return flags;
}

TEST(DarkCommandTest, MinimalFlagsGiveTheDefaults) {
  Result<DarkCommand> command = DarkCommand::Create(Minimal());
  ASSERT_TRUE(command.ok()) << command.status().message();
  EXPECT_EQ(command->options().upstreams.size(), 1u);
  EXPECT_EQ(command->options().upstream_timeout, 30 * kSecond);
  EXPECT_EQ(command->options().dark_timeout, 5 * kSecond);
  EXPECT_FALSE(command->options().compare);
  EXPECT_TRUE(command->options().forwarded_for);
}

TEST(DarkCommandTest, EachBadFlagIsNamed) {
  struct Case {
    void (*edit)(DarkFlags*);
    const char* message;
  };
  const Case cases[] = {
      {[](DarkFlags* f) { f->upstreams = {"ftp://x"}; }, "--upstream: 'ftp://x'"},
      {[](DarkFlags* f) { f->upstreams.clear(); }, "--upstream: at least one URL"},
      {[](DarkFlags* f) { f->dark_rates = {"other=5"}; }, "--dark-rate: no dark cluster named"},
      {[](DarkFlags* f) { f->dark_multipliers = {"canary=-1"}; }, "--dark-multiplier: bad value"},
      {[](DarkFlags* f) { f->dark_strategies = {"canary=constant-qps"}; },
       "needs --dark-rate canary=R"},
      {[](DarkFlags* f) { f->dark = {"canary"}; }, "--dark: expected NAME=VALUE"},
      {[](DarkFlags* f) { f->sampling = "coin"; }, "--dark-sampling"},
      {[](DarkFlags* f) { f->dark_timeout = "soon"; }, "--dark-timeout: invalid duration"},
      {[](DarkFlags* f) { f->membership = "etcd://x"; }, "--membership: expected static or zk://"},
      {[](DarkFlags* f) {
         f->duration = "1m";
         f->verdict_after = "1m";
       },
       "--verdict-after stops the proxy"},
      {[](DarkFlags* f) { f->config_file = "/nonexistent/dark.json"; }, "--config: cannot read"},
      {[](DarkFlags* f) {
         f->run.dark_http2 = {"canary", "canry"};
       },
       "--dark-http2: no dark cluster named 'canry' (add --dark canry=URL)"},
  };
  for (const Case& c : cases) {
    DarkFlags flags = Minimal();
    c.edit(&flags);
    Result<DarkCommand> command = DarkCommand::Create(flags);
    ASSERT_FALSE(command.ok()) << c.message;
    EXPECT_NE(command.status().message().find(c.message), std::string::npos)
        << command.status().message();
  }
}

TEST(DarkCommandTest, DarkHttp2NamesClustersOfTheFlagsOrTheConfigFile) {
  DarkFlags flags = Minimal();
  std::string config = testing::TempDir() + "/dark_http2_config.json";
  {
    std::FILE* out = std::fopen(config.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fputs(R"({"dark": {"web-dark": {"urls": ["http://127.0.0.1:9201"]}}})", out);
    std::fclose(out);
  }
  flags.config_file = config;
  flags.run.dark_http2 = {"web-dark", "canary"};
  Result<DarkCommand> command = DarkCommand::Create(flags);
  ASSERT_TRUE(command.ok()) << command.status().message();
  EXPECT_EQ(command->options().dark_http2, (std::vector<std::string>{"web-dark", "canary"}));
  EXPECT_FALSE(command->options().upstream_http2);
}

TEST(DarkCommandTest, DarkHttp2WithZooKeeperWaitsForTheClusterByName) {
  // The clusters come from ZooKeeper's config, unknown before Run: any name is kept.
  DarkFlags flags = Minimal();
  flags.dark.clear();
  flags.membership = "zk://127.0.0.1:2181/hammer";
  flags.run.dark_http2 = {"web-dark"};
  Result<DarkCommand> command = DarkCommand::Create(flags);
  ASSERT_TRUE(command.ok()) << command.status().message();
  EXPECT_EQ(command->options().dark_http2, std::vector<std::string>{"web-dark"});
}

TEST(DarkCommandTest, JudgingTurnsComparisonOn) {
  DarkFlags flags = Minimal();
  flags.verdict_json = "-";
  Result<DarkCommand> command = DarkCommand::Create(flags);
  ASSERT_TRUE(command.ok()) << command.status().message();
  EXPECT_TRUE(command->options().compare);
}

}  // namespace
}  // namespace hammer::dark
