// SideTask: runs a piece of work on a thread of its own while the caller does other work, for
// the end of a run, where a second core would otherwise sit idle while one thread takes the
// workers' rows and prints them. When no thread can be had the work runs at once on the
// caller's thread: the same result, later. Wait() (or the destructor) returns once the work
// has run; what it wrote is then the caller's to read. Threads: one owner.
#pragma once

#include <functional>
#include <thread>

namespace hammer {

class SideTask {
 public:
  explicit SideTask(std::function<void()> work);
  ~SideTask() { Wait(); }
  SideTask(const SideTask&) = delete;
  SideTask& operator=(const SideTask&) = delete;

  void Wait() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::function<void()> work_;  // kept here: a thread that could not be started leaves it
  std::thread thread_;
};

}  // namespace hammer
