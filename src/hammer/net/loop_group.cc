#include "hammer/net/loop_group.h"

#include <chrono>

namespace hammer::net {

LoopGroup::LoopGroup(int loops) {
  for (int i = 0; i < loops; ++i)
    loops_.push_back(std::make_unique<EventLoop>());
}

LoopGroup::~LoopGroup() {
  StopAll();
  Join();
}

Status LoopGroup::Init() {
  for (auto& loop : loops_) {
    if (Status s = loop->Init(); !s.ok()) return s;
  }
  return Status::Ok();
}

void LoopGroup::Start() {
  running_ = size();
  for (auto& loop : loops_) {
    EventLoop* raw = loop.get();
    threads_.emplace_back([this, raw] {
      raw->Run();
      std::lock_guard<std::mutex> lock(mutex_);
      if (--running_ == 0) stopped_.notify_all();
    });
  }
}

bool LoopGroup::WaitUntilStopped(Nanos timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return stopped_.wait_for(lock, std::chrono::nanoseconds(timeout),
                           [this] { return running_ == 0; });
}

void LoopGroup::StopAll() {
  for (auto& loop : loops_)
    loop->Stop();
}

void LoopGroup::Join() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace hammer::net
