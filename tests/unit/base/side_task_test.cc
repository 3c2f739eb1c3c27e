// SideTask runs its work on a thread of its own while the caller goes on, and what the work
// wrote is the caller's once Wait() (or the destructor) has returned.
#include "hammer/base/side_task.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <thread>
#include <vector>

namespace hammer {
namespace {

// The work waits for a word from the caller that the caller sends only once the SideTask is
// made: work run at once on the caller's thread would give up waiting (after 30 s, a bound,
// not a pause) and say so.
TEST(SideTaskTest, RunsOnAnotherThreadWhileTheCallerGoesOn) {
  std::promise<void> go;
  std::shared_future<void> word = go.get_future().share();
  bool heard = false;
  std::thread::id ran_on;
  SideTask task([&] {
    heard = word.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    ran_on = std::this_thread::get_id();
  });
  go.set_value();
  task.Wait();
  EXPECT_TRUE(heard);
  EXPECT_NE(ran_on, std::this_thread::get_id());
  task.Wait();  // again: nothing left to wait for
}

// The destructor waits: what the work filled is whole after the task's scope.
TEST(SideTaskTest, TheDestructorWaitsForTheWork) {
  std::vector<int> filled;
  {
    std::optional<SideTask> task;
    task.emplace([&filled] {
      for (int i = 0; i < 100000; ++i)
        filled.push_back(i);
    });
  }
  ASSERT_EQ(filled.size(), 100000u);
  EXPECT_EQ(filled.back(), 99999);
}

}  // namespace
}  // namespace hammer
