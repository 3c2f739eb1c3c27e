#include "hammer/net/resolver.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace hammer::net {
namespace {

// A 64-byte label is not a valid DNS name: lookups fail locally, without asking a server.
const std::string kInvalidHost = std::string(64, 'a') + ".invalid";

TEST(ResolverTest, LookupNowOfLiterals) {
  Result<AddressList> v4 = Resolver::LookupNow("127.0.0.1");
  ASSERT_TRUE(v4.ok()) << v4.status().message();
  ASSERT_EQ(v4->size(), 1u);
  EXPECT_EQ((*v4)[0].ToString(), "127.0.0.1:0");
  Result<AddressList> v6 = Resolver::LookupNow("::1");
  ASSERT_TRUE(v6.ok()) << v6.status().message();
  ASSERT_EQ(v6->size(), 1u);
  EXPECT_EQ((*v6)[0].ToString(), "[::1]:0");
}

TEST(ResolverTest, LookupNowOfLocalhostIsLoopback) {
  Result<AddressList> addresses = Resolver::LookupNow("localhost");
  ASSERT_TRUE(addresses.ok()) << addresses.status().message();
  ASSERT_FALSE(addresses->empty());
  for (const SocketAddress& address : *addresses) {
    EXPECT_TRUE(address.IsLoopback()) << address.ToString();
    EXPECT_EQ(address.port(), 0);
  }
}

TEST(ResolverTest, LookupNowFailureNamesTheHost) {
  Result<AddressList> addresses = Resolver::LookupNow(kInvalidHost);
  ASSERT_FALSE(addresses.ok());
  EXPECT_EQ(addresses.status().message().rfind("resolve '" + kInvalidHost + "': ", 0), 0u)
      << addresses.status().message();
}

class HostCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(loop_.Init().ok()); }

  // Runs the loop until `done` is set by a callback (guarded: at most 10 s).
  bool RunUntilStopped() {
    bool guard_fired = false;
    Timer guard(&loop_, [&] {
      guard_fired = true;
      loop_.Stop();
    });
    guard.ArmAt(loop_.UpdateNow() + 10 * kSecond);
    loop_.Run();
    return !guard_fired;
  }

  EventLoop loop_;
  Resolver resolver_{1};
};

TEST_F(HostCacheTest, LiteralsAreKnownAtOnce) {
  HostCache cache(&loop_, &resolver_);
  const Result<AddressList>* v4 = cache.Find("10.1.2.3");
  ASSERT_NE(v4, nullptr);
  ASSERT_TRUE(v4->ok());
  ASSERT_EQ((*v4)->size(), 1u);
  EXPECT_EQ((**v4)[0].ToString(), "10.1.2.3:0");
  const Result<AddressList>* v6 = cache.Find("2001:db8::1");
  ASSERT_NE(v6, nullptr);
  EXPECT_EQ((**v6)[0].ToString(), "[2001:db8::1]:0");
  EXPECT_EQ(cache.Find("localhost"), nullptr);  // a name: not known before a Fetch
}

TEST_F(HostCacheTest, FetchCallsEveryWaiterOnceOnTheLoopThread) {
  HostCache cache(&loop_, &resolver_, 3600 * kSecond);
  std::vector<std::string> calls;
  const std::thread::id loop_thread = std::this_thread::get_id();
  auto record = [&](std::string name) {
    return [&, name](const Result<AddressList>& addresses) {
      EXPECT_EQ(std::this_thread::get_id(), loop_thread);
      EXPECT_TRUE(addresses.ok()) << addresses.status().message();
      calls.push_back(name);
      if (calls.size() == 2) loop_.Stop();
    };
  };
  cache.Fetch("localhost", record("first"));
  cache.Fetch("localhost", record("second"));   // joins the pending lookup
  EXPECT_TRUE(calls.empty());                   // never called back inline
  EXPECT_EQ(cache.Find("localhost"), nullptr);  // pending is not known yet
  ASSERT_TRUE(RunUntilStopped());
  EXPECT_EQ(calls, (std::vector<std::string>{"first", "second"}));
  const Result<AddressList>* cached = cache.Find("localhost");
  ASSERT_NE(cached, nullptr);
  EXPECT_TRUE(cached->ok());
}

TEST_F(HostCacheTest, EntriesExpireAfterTheirTtl) {
  HostCache cache(&loop_, &resolver_, /*ttl=*/0);
  cache.Fetch("localhost", [&](const Result<AddressList>&) { loop_.Stop(); });
  ASSERT_TRUE(RunUntilStopped());
  EXPECT_EQ(cache.Find("localhost"), nullptr);  // expired as soon as it arrived
}

TEST_F(HostCacheTest, FailuresAreCachedBriefly) {
  HostCache cache(&loop_, &resolver_);
  std::string error;
  cache.Fetch(kInvalidHost, [&](const Result<AddressList>& addresses) {
    EXPECT_FALSE(addresses.ok());
    error = addresses.status().message();
    loop_.Stop();
  });
  ASSERT_TRUE(RunUntilStopped());
  EXPECT_EQ(error.rfind("resolve '" + kInvalidHost + "': ", 0), 0u) << error;
  const Result<AddressList>* cached = cache.Find(kInvalidHost);
  ASSERT_NE(cached, nullptr);  // for a second: no lookup storm for a dead name
  EXPECT_FALSE(cached->ok());
  EXPECT_EQ(cached->status().message(), error);
}

TEST_F(HostCacheTest, ResolverPostsToTheGivenLoop) {
  Result<AddressList> got = Status::Error("not called");
  resolver_.Lookup("127.0.0.1", &loop_, [&](Result<AddressList> addresses) {
    got = std::move(addresses);
    loop_.Stop();
  });
  ASSERT_TRUE(RunUntilStopped());
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ((*got)[0].ToString(), "127.0.0.1:0");
}

// A resolver starts its threads with the first lookup: a run of IP literals has none to start
// and join at its end. (Counted by the resolver, not as /proc/self/task's entries: a thread
// another test has just joined may still be listed there for a moment, more so under TSan.)
TEST_F(HostCacheTest, ResolverThreadsStartWithTheFirstLookup) {
  Resolver resolver(2);
  HostCache cache(&loop_, &resolver);
  ASSERT_NE(cache.Find("127.0.0.1"), nullptr);
  EXPECT_EQ(resolver.started_threads(), 0u);
  bool answered = false;
  cache.Fetch("localhost", [&](const Result<AddressList>&) {
    answered = true;
    loop_.Stop();
  });
  EXPECT_EQ(resolver.started_threads(), 2u);
  ASSERT_TRUE(RunUntilStopped());
  EXPECT_TRUE(answered);
  EXPECT_EQ(resolver.started_threads(), 2u);  // kept for the next lookup, joined at the end
}

}  // namespace
}  // namespace hammer::net
