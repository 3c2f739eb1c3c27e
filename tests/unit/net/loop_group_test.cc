#include "hammer/net/loop_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>
#include <thread>
#include <vector>

namespace hammer::net {
namespace {

TEST(LoopGroupTest, EachLoopRunsOnItsOwnThread) {
  LoopGroup group(3);
  ASSERT_TRUE(group.Init().ok());
  ASSERT_EQ(group.size(), 3);
  std::vector<std::promise<std::thread::id>> ran(3);
  for (int i = 0; i < 3; ++i) {
    group.loop(i)->Post(
        [&ran, i] { ran[static_cast<size_t>(i)].set_value(std::this_thread::get_id()); });
  }
  group.Start();
  std::set<std::thread::id> threads;
  for (auto& promise : ran) {
    std::future<std::thread::id> id = promise.get_future();
    ASSERT_EQ(id.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    threads.insert(id.get());
  }
  EXPECT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
  EXPECT_FALSE(group.WaitUntilStopped(0));  // all still running
  group.StopAll();
  EXPECT_TRUE(group.WaitUntilStopped(5 * kSecond));
  group.Join();
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(group.loop(i)->stopping());
}

TEST(LoopGroupTest, WaitUntilStoppedSeesALoopThatStoppedItself) {
  LoopGroup group(2);
  ASSERT_TRUE(group.Init().ok());
  group.Start();
  group.loop(0)->Post([loop = group.loop(0)] { loop->Stop(); });
  EXPECT_FALSE(group.WaitUntilStopped(0));  // loop 1 still runs
  group.loop(1)->Stop();
  EXPECT_TRUE(group.WaitUntilStopped(5 * kSecond));
  group.Join();
}

// Set-up on the calling thread before Start() includes arming timers.
TEST(LoopGroupTest, TimerArmedBeforeStartFires) {
  LoopGroup group(1);
  ASSERT_TRUE(group.Init().ok());
  std::promise<void> fired;
  Timer timer(group.loop(0), [&] { fired.set_value(); });
  timer.ArmAfter(kMillisecond);
  group.Start();
  EXPECT_EQ(fired.get_future().wait_for(std::chrono::seconds(2)), std::future_status::ready);
  group.StopAll();
  group.Join();
}

TEST(LoopGroupTest, DestructorStopsAndJoinsRunningLoops) {
  std::atomic<int> ran{0};
  {
    LoopGroup group(2);
    ASSERT_TRUE(group.Init().ok());
    group.Start();
    group.loop(0)->Post([&] { ++ran; });
    group.loop(1)->Post([&] { ++ran; });
  }
  EXPECT_EQ(ran.load(), 2);  // posted tasks still run before the loops return
}

}  // namespace
}  // namespace hammer::net
