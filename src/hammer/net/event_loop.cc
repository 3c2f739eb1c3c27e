#include "hammer/net/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace hammer::net {

namespace {

// epoll data for the loop's own descriptors; user handlers are never at these addresses.
IoHandler* const kTimerFdTag = reinterpret_cast<IoHandler*>(uintptr_t{1});
IoHandler* const kEventFdTag = reinterpret_cast<IoHandler*>(uintptr_t{2});

}  // namespace

Timer::Timer(EventLoop* loop, std::function<void()> callback)
    : loop_(loop), callback_(std::move(callback)) {}

Timer::~Timer() {
  Cancel();
}

void Timer::ArmAt(MonoNanos deadline) {
  if (armed()) loop_->RemoveTimer(this);
  deadline_ = deadline;
  loop_->InsertTimer(this);
}

void Timer::ArmAfter(Nanos delay) {
  ArmAt(loop_->now() + delay);
}

void Timer::Cancel() {
  if (armed()) loop_->RemoveTimer(this);
}

EventLoop::EventLoop() = default;

EventLoop::~EventLoop() {
  for (Timer* timer : timers_)
    timer->heap_index_ = -1;
  to_delete_.clear();
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (timer_fd_ >= 0) close(timer_fd_);
  if (event_fd_ >= 0) close(event_fd_);
}

Status EventLoop::Init() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return Status::FromErrno("epoll_create1", errno);
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (timer_fd_ < 0) return Status::FromErrno("timerfd_create", errno);
  event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) return Status::FromErrno("eventfd", errno);
  if (Status s = Add(timer_fd_, EPOLLIN, kTimerFdTag); !s.ok()) return s;
  if (Status s = Add(event_fd_, EPOLLIN, kEventFdTag); !s.ok()) return s;
  UpdateNow();
  return Status::Ok();
}

Status EventLoop::Add(int fd, uint32_t events, IoHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    return Status::FromErrno("epoll_ctl add", errno);
  }
  return Status::Ok();
}

Status EventLoop::Modify(int fd, uint32_t events, IoHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0) {
    return Status::FromErrno("epoll_ctl mod", errno);
  }
  return Status::Ok();
}

void EventLoop::Remove(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

void EventLoop::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(event_fd_, &one, sizeof(one));
}

void EventLoop::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(posted_mutex_);
    posted_.push_back(std::move(task));
  }
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(event_fd_, &one, sizeof(one));
}

void EventLoop::Defer(std::function<void()> task) {
  deferred_.push_back(std::move(task));
}

void EventLoop::DeleteLater(std::unique_ptr<Deletable> object) {
  to_delete_.push_back(std::move(object));
}

void EventLoop::Run() {
  constexpr int kMaxEvents = 256;
  epoll_event events[kMaxEvents];
  while (!stopping()) {
    // At the top, not the end, of an iteration: timers armed before Run() count too.
    RearmTimerFd();
    int timeout_ms = to_delete_.empty() && deferred_.empty() ? -1 : 0;
    int n = epoll_wait(epoll_fd_, events, kMaxEvents, timeout_ms);
    UpdateNow();
    if (n < 0 && errno != EINTR) break;
    bool timers_due = false;
    for (int i = 0; i < n; ++i) {
      IoHandler* handler = static_cast<IoHandler*>(events[i].data.ptr);
      if (handler == kTimerFdTag) {
        uint64_t expirations;
        [[maybe_unused]] ssize_t r = read(timer_fd_, &expirations, sizeof(expirations));
        timer_fd_deadline_ = -1;
        timers_due = true;
      } else if (handler == kEventFdTag) {
        uint64_t value;
        [[maybe_unused]] ssize_t r = read(event_fd_, &value, sizeof(value));
        RunPosted();
      } else {
        handler->OnIoEvents(events[i].events);
      }
    }
    if (timers_due || (!timers_.empty() && timers_.front()->deadline_ <= now_)) {
      RunExpiredTimers();
    }
    RunDeferred();
    to_delete_.clear();
  }
  RunPosted();
  RunDeferred();
  to_delete_.clear();
}

void EventLoop::RunDeferred() {
  if (deferred_.empty()) return;
  std::vector<std::function<void()>> tasks;
  tasks.swap(deferred_);
  for (auto& task : tasks)
    task();
}

void EventLoop::RunPosted() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard<std::mutex> lock(posted_mutex_);
    tasks.swap(posted_);
  }
  for (auto& task : tasks)
    task();
}

void EventLoop::RunExpiredTimers() {
  UpdateNow();
  // Timers armed by callbacks during this pass wait for the next pass, so a callback that
  // re-arms itself "now" cannot starve I/O.
  const uint64_t sequence_limit = timer_sequence_;
  while (!timers_.empty()) {
    Timer* timer = timers_.front();
    if (timer->deadline_ > now_ || timer->sequence_ >= sequence_limit) break;
    RemoveTimer(timer);
    timer->callback_();
  }
}

void EventLoop::RearmTimerFd() {
  // A deadline already past must still fire: timerfd treats an all-zero value as "disarm", and
  // -1 means "disarmed" here, so deadlines at or before 0 are armed as 1.
  MonoNanos next = timers_.empty() ? -1 : std::max<MonoNanos>(timers_.front()->deadline_, 1);
  if (next == timer_fd_deadline_) return;
  // An armed timerfd that would fire earlier than needed is left alone: the early wake-up
  // finds nothing due and re-arms then. A load run cancels a timeout per request, so this
  // saves a timerfd_settime call on almost every loop iteration.
  if (timer_fd_deadline_ >= 0 && (next < 0 || next > timer_fd_deadline_)) return;
  itimerspec spec{};
  if (next >= 0) {
    spec.it_value.tv_sec = next / kSecond;
    spec.it_value.tv_nsec = next % kSecond;
  }
  timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
  timer_fd_deadline_ = next;
}

bool EventLoop::Earlier(const Timer* a, const Timer* b) const {
  return a->deadline_ != b->deadline_ ? a->deadline_ < b->deadline_ : a->sequence_ < b->sequence_;
}

void EventLoop::InsertTimer(Timer* timer) {
  timer->sequence_ = timer_sequence_++;
  timer->heap_index_ = static_cast<int>(timers_.size());
  timers_.push_back(timer);
  SiftUp(timers_.size() - 1);
}

void EventLoop::RemoveTimer(Timer* timer) {
  size_t index = static_cast<size_t>(timer->heap_index_);
  size_t last = timers_.size() - 1;
  if (index != last) {
    timers_[index] = timers_[last];
    timers_[index]->heap_index_ = static_cast<int>(index);
  }
  timers_.pop_back();
  timer->heap_index_ = -1;
  if (index < timers_.size()) {
    Timer* moved = timers_[index];
    SiftUp(index);
    SiftDown(static_cast<size_t>(moved->heap_index_));
  }
}

void EventLoop::SiftUp(size_t index) {
  while (index > 0) {
    size_t parent = (index - 1) / 2;
    if (!Earlier(timers_[index], timers_[parent])) break;
    std::swap(timers_[index], timers_[parent]);
    timers_[index]->heap_index_ = static_cast<int>(index);
    timers_[parent]->heap_index_ = static_cast<int>(parent);
    index = parent;
  }
}

void EventLoop::SiftDown(size_t index) {
  const size_t size = timers_.size();
  while (true) {
    size_t smallest = index;
    size_t left = 2 * index + 1;
    size_t right = left + 1;
    if (left < size && Earlier(timers_[left], timers_[smallest])) smallest = left;
    if (right < size && Earlier(timers_[right], timers_[smallest])) smallest = right;
    if (smallest == index) break;
    std::swap(timers_[index], timers_[smallest]);
    timers_[index]->heap_index_ = static_cast<int>(index);
    timers_[smallest]->heap_index_ = static_cast<int>(smallest);
    index = smallest;
  }
}

}  // namespace hammer::net
