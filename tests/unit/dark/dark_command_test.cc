#include "hammer/dark/dark_command.h"

#include <gtest/gtest.h>

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

TEST(DarkCommandTest, JudgingTurnsComparisonOn) {
  DarkFlags flags = Minimal();
  flags.verdict_json = "-";
  Result<DarkCommand> command = DarkCommand::Create(flags);
  ASSERT_TRUE(command.ok()) << command.status().message();
  EXPECT_TRUE(command->options().compare);
}

}  // namespace
}  // namespace hammer::dark
