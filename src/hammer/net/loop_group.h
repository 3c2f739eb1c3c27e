// LoopGroup: N event loops, each run on its own thread (Seastar-style: nothing shared between
// loops on the hot path; per-loop state is merged after Join). Setup for each loop happens on
// the calling thread before Start(); after Start() talk to a loop only through Post()/Stop().
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/net/event_loop.h"

namespace hammer::net {

class LoopGroup {
 public:
  explicit LoopGroup(int loops);
  ~LoopGroup();
  LoopGroup(const LoopGroup&) = delete;
  LoopGroup& operator=(const LoopGroup&) = delete;

  Status Init();
  int size() const { return static_cast<int>(loops_.size()); }
  EventLoop* loop(int i) { return loops_[static_cast<size_t>(i)].get(); }

  void Start();    // one thread per loop
  void StopAll();  // thread-safe
  void Join();     // waits for every loop to return from Run()
  // Waits up to `timeout` for every loop to return from Run(); true when all have.
  bool WaitUntilStopped(Nanos timeout);

 private:
  std::vector<std::unique_ptr<EventLoop>> loops_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable stopped_;
  int running_ = 0;
};

}  // namespace hammer::net
