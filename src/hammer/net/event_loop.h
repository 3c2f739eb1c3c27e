// EventLoop: one epoll loop per thread, with timers, cross-thread posts and deferred deletion.
//
// Threading: a loop is created on any thread and then Run() on exactly one thread, which owns
// everything registered with it. Only Post() and Stop() may be called from other threads.
//
// Readiness: IoHandler::OnIoEvents is called with the epoll event mask for a registered fd.
// Registration is edge-triggered (EPOLLET): a handler must read/write until EAGAIN.
//
// Timers: a Timer belongs to one loop; Arm/Cancel only on the loop's thread. Deadlines are in
// nanoseconds on the monotonic clock and fire through a timerfd, so open-loop pacing gets
// microsecond precision rather than epoll_wait's milliseconds. A Timer cancels itself when
// destroyed.
//
// Lifetime: never delete an object from inside one of its own callbacks; hand it to
// DeleteLater(), which destroys it after the current loop iteration (the Envoy rule).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"

namespace hammer::net {

class EventLoop;

class IoHandler {
 public:
  virtual ~IoHandler() = default;
  virtual void OnIoEvents(uint32_t events) = 0;
};

// A deadline with a callback. Owned by its user; must not outlive its loop.
class Timer {
 public:
  Timer(EventLoop* loop, std::function<void()> callback);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  void ArmAt(MonoNanos deadline);
  void ArmAfter(Nanos delay);
  void Cancel();
  bool armed() const { return heap_index_ >= 0; }
  MonoNanos deadline() const { return deadline_; }

 private:
  friend class EventLoop;
  EventLoop* loop_;
  std::function<void()> callback_;
  MonoNanos deadline_ = 0;
  uint64_t sequence_ = 0;  // ties broken by arming order
  int heap_index_ = -1;
};

// Anything that may be handed to DeleteLater.
class Deletable {
 public:
  virtual ~Deletable() = default;
};

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Fails only when the kernel refuses epoll/timerfd/eventfd (out of descriptors).
  Status Init();

  Status Add(int fd, uint32_t events, IoHandler* handler);
  Status Modify(int fd, uint32_t events, IoHandler* handler);
  void Remove(int fd);

  // Runs until Stop(). Returns after the iteration in which Stop() was observed.
  void Run();
  // Thread-safe; wakes the loop.
  void Stop();
  bool stopping() const { return stop_.load(std::memory_order_relaxed); }

  // Thread-safe: runs `task` on the loop's thread during its next iteration.
  void Post(std::function<void()> task);
  // Loop thread only: runs `task` after the I/O events and timers of the current iteration
  // (no lock, no wake-up write: cheaper than Post). A task deferred by a deferred task runs in
  // the next iteration, and the loop does not block in epoll while tasks wait. This is how a
  // callback resumes work on another object without calling into it (and back) recursively.
  void Defer(std::function<void()> task);

  void DeleteLater(std::unique_ptr<Deletable> object);
  // Objects handed to DeleteLater in this iteration and not yet destroyed (with the descriptors
  // they own).
  bool deletions_pending() const { return !to_delete_.empty(); }

  // Monotonic time, refreshed once per iteration and by UpdateNow(). Cheap.
  MonoNanos now() const { return now_; }
  MonoNanos UpdateNow() { return now_ = MonoNow(); }

 private:
  friend class Timer;

  void InsertTimer(Timer* timer);
  void RemoveTimer(Timer* timer);
  void SiftUp(size_t index);
  void SiftDown(size_t index);
  bool Earlier(const Timer* a, const Timer* b) const;
  void RearmTimerFd();
  void RunExpiredTimers();
  void RunPosted();
  void RunDeferred();

  int epoll_fd_ = -1;
  int timer_fd_ = -1;
  int event_fd_ = -1;
  MonoNanos now_ = 0;
  MonoNanos timer_fd_deadline_ = -1;  // what timer_fd_ is armed for; -1 = disarmed
  uint64_t timer_sequence_ = 0;
  std::vector<Timer*> timers_;  // binary min-heap on (deadline, sequence)
  std::atomic<bool> stop_{false};
  std::mutex posted_mutex_;
  std::vector<std::function<void()>> posted_;
  std::vector<std::function<void()>> deferred_;
  std::vector<std::unique_ptr<Deletable>> to_delete_;
};

}  // namespace hammer::net
