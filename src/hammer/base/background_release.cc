#include "hammer/base/background_release.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

namespace hammer::release_detail {

namespace {

class Releaser {
 public:
  ~Releaser() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    changed_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

  void Release(std::unique_ptr<Held> held) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!thread_.joinable() && !done_) {
      try {
        thread_ = std::thread([this] { Run(); });
      } catch (const std::system_error&) {
        lock.unlock();
        held.reset();  // no thread: destroyed here
        return;
      }
    }
    queued_.push_back(std::move(held));
    lock.unlock();
    changed_.notify_one();
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      changed_.wait(lock, [this] { return !queued_.empty() || done_; });
      if (queued_.empty()) return;  // done, and nothing left
      std::unique_ptr<Held> held = std::move(queued_.front());
      queued_.pop_front();
      lock.unlock();
      held.reset();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Held>> queued_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

void Release(std::unique_ptr<Held> held) {
  static Releaser releaser;
  releaser.Release(std::move(held));
}

}  // namespace hammer::release_detail
