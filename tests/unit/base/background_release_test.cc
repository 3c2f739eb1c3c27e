// ReleaseInBackground destroys what it is given on a thread of its own, in the order given.
#include "hammer/base/background_release.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace hammer {
namespace {

// Says where and in which order it was destroyed; the last one fulfils `done`.
struct Marker {
  struct Log {
    std::mutex mutex;
    std::vector<int> order;
    std::vector<std::thread::id> threads;
    std::promise<void> done;
  };
  Marker(std::shared_ptr<Log> to, int number, bool is_last)
      : log(std::move(to)), n(number), last(is_last) {}
  Marker(Marker&& other) noexcept : log(std::move(other.log)), n(other.n), last(other.last) {}
  ~Marker() {
    if (!log) return;  // moved from
    std::lock_guard<std::mutex> lock(log->mutex);
    log->order.push_back(n);
    log->threads.push_back(std::this_thread::get_id());
    if (last) log->done.set_value();
  }
  std::shared_ptr<Log> log;
  int n;
  bool last;
};

TEST(BackgroundReleaseTest, DestroysOnAnotherThreadInOrder) {
  auto log = std::make_shared<Marker::Log>();
  std::future<void> done = log->done.get_future();
  for (int n = 0; n < 100; ++n)
    ReleaseInBackground(Marker(log, n, n == 99));
  // A vector of them, as a load hands over its key tables' nodes.
  std::vector<std::unique_ptr<int>> owned;
  for (int i = 0; i < 1000; ++i)
    owned.push_back(std::make_unique<int>(i));
  ReleaseInBackground(std::move(owned));
  done.wait();
  std::lock_guard<std::mutex> lock(log->mutex);
  ASSERT_EQ(log->order.size(), 100u);
  for (int n = 0; n < 100; ++n) {
    EXPECT_EQ(log->order[static_cast<size_t>(n)], n);
    EXPECT_NE(log->threads[static_cast<size_t>(n)], std::this_thread::get_id());
  }
}

}  // namespace
}  // namespace hammer
