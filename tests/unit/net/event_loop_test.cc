#include "hammer/net/event_loop.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hammer/net/socket.h"

namespace hammer::net {
namespace {

// Runs `loop` on this thread. A watchdog stops it if it is still running after `limit` (a
// safety net only: every test stops its loop itself). Returns false when the watchdog had to.
bool RunWithWatchdog(EventLoop& loop, std::chrono::seconds limit = std::chrono::seconds(10)) {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  bool fired = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (!done_cv.wait_for(lock, limit, [&] { return done; })) {
      fired = true;
      loop.Stop();
    }
  });
  loop.Run();
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  done_cv.notify_all();
  watchdog.join();
  return !fired;
}

class EventLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = loop_.Init();
    ASSERT_TRUE(s.ok()) << s.message();
  }
  EventLoop loop_;
};

// A pipe whose ends close with the test.
struct Pipe {
  Pipe() {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
    read_end = Fd(fds[0]);
    write_end = Fd(fds[1]);
  }
  void WriteByte() const { EXPECT_EQ(write(write_end.get(), "x", 1), 1); }
  Fd read_end;
  Fd write_end;
};

class CallbackHandler : public IoHandler {
 public:
  explicit CallbackHandler(std::function<void(uint32_t)> callback)
      : callback_(std::move(callback)) {}
  void OnIoEvents(uint32_t events) override { callback_(events); }

 private:
  std::function<void(uint32_t)> callback_;
};

TEST_F(EventLoopTest, ExpiredTimersFireInDeadlineOrderTiesInArmingOrder) {
  const MonoNanos base = loop_.now();
  // Deadlines in the past, armed out of order, with ties (ids 1/3 and 4/6 share deadlines).
  const std::vector<std::pair<int, MonoNanos>> plan = {
      {0, base - 50}, {1, base - 90}, {2, base - 10}, {3, base - 90},
      {4, base - 30}, {5, base - 70}, {6, base - 30}, {7, 0}};
  std::vector<int> fired;
  std::vector<std::unique_ptr<Timer>> timers;
  for (const auto& [id, deadline] : plan) {
    timers.push_back(std::make_unique<Timer>(&loop_, [&, id = id] {
      fired.push_back(id);
      if (fired.size() == plan.size()) loop_.Stop();
    }));
  }
  loop_.Post([&] {
    for (size_t i = 0; i < plan.size(); ++i)
      timers[i]->ArmAt(plan[i].second);
  });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_EQ(fired, (std::vector<int>{7, 1, 3, 5, 0, 4, 6, 2}));
  for (const auto& timer : timers)
    EXPECT_FALSE(timer->armed());
}

TEST_F(EventLoopTest, FutureTimersFireInOrderAndNeverEarly) {
  std::vector<int> fired;
  std::vector<MonoNanos> late_by;
  std::vector<std::unique_ptr<Timer>> timers;
  const Nanos delays[] = {3 * kMillisecond, 1 * kMillisecond, 2 * kMillisecond};
  for (int id = 0; id < 3; ++id) {
    timers.push_back(std::make_unique<Timer>(&loop_, [&, id] {
      late_by.push_back(MonoNow() - timers[static_cast<size_t>(id)]->deadline());
      EXPECT_GE(loop_.now(), timers[static_cast<size_t>(id)]->deadline());
      fired.push_back(id);
      if (fired.size() == 3) loop_.Stop();
    }));
  }
  loop_.Post([&] {
    for (int id = 0; id < 3; ++id)
      timers[static_cast<size_t>(id)]->ArmAfter(delays[id]);
  });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_EQ(fired, (std::vector<int>{1, 2, 0}));
  for (MonoNanos late : late_by)
    EXPECT_GE(late, 0);
}

TEST_F(EventLoopTest, TimerArmedBeforeRunFires) {
  bool fired = false;
  Timer timer(&loop_, [&] {
    fired = true;
    loop_.Stop();
  });
  timer.ArmAfter(kMillisecond);  // on the thread that will run the loop, before Run()
  EXPECT_TRUE(RunWithWatchdog(loop_, std::chrono::seconds(2)));
  EXPECT_TRUE(fired);
}

// Deadlines at or before the clock's origin are simply in the past. The second timer is armed
// from a timer callback, so only the timerfd (not the same pass) can make it fire.
TEST_F(EventLoopTest, TimersWithDeadlinesAtOrBeforeZeroFire) {
  for (MonoNanos deadline : {MonoNanos{1}, MonoNanos{0}, MonoNanos{-1}, MonoNanos{-5}}) {
    EventLoop loop;
    ASSERT_TRUE(loop.Init().ok());
    std::vector<int> fired;
    Timer second(&loop, [&] {
      fired.push_back(2);
      loop.Stop();
    });
    Timer first(&loop, [&] {
      fired.push_back(1);
      second.ArmAt(deadline);
    });
    loop.Post([&] { first.ArmAt(0); });
    EXPECT_TRUE(RunWithWatchdog(loop, std::chrono::seconds(2))) << "deadline " << deadline;
    EXPECT_EQ(fired, (std::vector<int>{1, 2})) << "deadline " << deadline;
  }
}

TEST_F(EventLoopTest, CancelledTimersDoNotFire) {
  std::vector<char> fired;
  std::unique_ptr<Timer> c;
  Timer a(&loop_, [&] {
    fired.push_back('a');
    c->Cancel();  // c is due in this same pass: cancelling it still wins
    EXPECT_FALSE(c->armed());
  });
  Timer b(&loop_, [&] { fired.push_back('b'); });
  c = std::make_unique<Timer>(&loop_, [&] { fired.push_back('c'); });
  Timer stop(&loop_, [&] {
    fired.push_back('s');
    loop_.Stop();
  });
  loop_.Post([&] {
    const MonoNanos base = loop_.now();
    a.ArmAt(base - 40);
    b.ArmAt(base - 30);
    c->ArmAt(base - 20);
    stop.ArmAt(base - 10);
    EXPECT_TRUE(b.armed());
    b.Cancel();
    EXPECT_FALSE(b.armed());
    b.Cancel();  // cancelling twice is harmless
  });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_EQ(fired, (std::vector<char>{'a', 's'}));
}

TEST_F(EventLoopTest, TimerDestroyedInAnotherTimersCallbackDoesNotFire) {
  std::vector<char> fired;
  auto victim = std::make_unique<Timer>(&loop_, [&] { fired.push_back('v'); });
  Timer killer(&loop_, [&] {
    fired.push_back('k');
    victim.reset();  // ~Timer cancels
  });
  Timer stop(&loop_, [&] {
    fired.push_back('s');
    loop_.Stop();
  });
  loop_.Post([&] {
    const MonoNanos base = loop_.now();
    killer.ArmAt(base - 3);
    victim->ArmAt(base - 2);
    stop.ArmAt(base - 1);
  });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_EQ(fired, (std::vector<char>{'k', 's'}));
}

TEST_F(EventLoopTest, RearmingMovesTheDeadline) {
  std::vector<char> fired;
  Timer later(&loop_, [&] { fired.push_back('l'); });
  Timer sooner(&loop_, [&] {
    fired.push_back('s');
    loop_.Stop();
  });
  loop_.Post([&] {
    const MonoNanos base = loop_.now();
    later.ArmAt(base - 100);  // due...
    sooner.ArmAt(base + 3600 * kSecond);
    later.ArmAt(base + 3600 * kSecond);  // ...then moved an hour ahead
    sooner.ArmAt(base - 1);              // and this one moved into the past
    EXPECT_EQ(later.deadline(), base + 3600 * kSecond);
    EXPECT_EQ(sooner.deadline(), base - 1);
  });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_EQ(fired, (std::vector<char>{'s'}));
  EXPECT_TRUE(later.armed());
  EXPECT_FALSE(sooner.armed());
}

TEST_F(EventLoopTest, TimerRearmedFromItsOwnCallbackFiresAgain) {
  int fired = 0;
  Timer timer(&loop_, [&] {
    if (++fired == 3) {
      loop_.Stop();
      return;
    }
    timer.ArmAfter(kMillisecond);
  });
  loop_.Post([&] { timer.ArmAfter(0); });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_EQ(fired, 3);
}

// A timer that re-arms itself "now" from its own callback must not starve I/O: the readable
// pipe is served on the very next iteration, after which the timer has run exactly twice.
TEST_F(EventLoopTest, TimerRearmedNowFromItsCallbackDoesNotStarveIo) {
  Pipe pipe;
  int timer_runs = 0;
  int io_runs = 0;
  Timer spinner(&loop_, [&] {
    ++timer_runs;
    if (timer_runs == 1) pipe.WriteByte();  // I/O becomes ready while the timer spins
    spinner.ArmAt(loop_.now());             // due again at once
    if (timer_runs > 1000) loop_.Stop();    // starvation: fail instead of spinning forever
  });
  CallbackHandler reader([&](uint32_t events) {
    EXPECT_TRUE(events & EPOLLIN);
    ++io_runs;
    loop_.Stop();
  });
  ASSERT_TRUE(loop_.Add(pipe.read_end.get(), EPOLLIN, &reader).ok());
  loop_.Post([&] { spinner.ArmAt(loop_.now()); });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_EQ(io_runs, 1);
  EXPECT_EQ(timer_runs, 2);
  loop_.Remove(pipe.read_end.get());
}

// Arm, re-arm and cancel many timers at random; the ones left armed fire exactly once each,
// in (deadline, arming order) order. Exercises the heap's removal from the middle.
TEST_F(EventLoopTest, RandomArmRearmCancelKeepsHeapOrder) {
  constexpr int kTimers = 400;
  std::mt19937_64 rng(99);
  std::vector<int> fired;
  size_t expected_count = 0;
  std::vector<std::unique_ptr<Timer>> timers;
  for (int id = 0; id < kTimers; ++id) {
    timers.push_back(std::make_unique<Timer>(&loop_, [&, id] {
      fired.push_back(id);
      if (fired.size() == expected_count) loop_.Stop();
    }));
  }
  struct Expected {
    MonoNanos deadline;
    uint64_t armed_at;
    int id;
  };
  std::vector<Expected> expected;
  loop_.Post([&] {
    const MonoNanos base = loop_.now();
    std::vector<std::optional<std::pair<MonoNanos, uint64_t>>> state(kTimers);
    uint64_t step = 0;
    for (int op = 0; op < 5000; ++op) {
      int id = static_cast<int>(rng() % kTimers);
      Timer& timer = *timers[static_cast<size_t>(id)];
      if (rng() % 4 == 0) {
        timer.Cancel();
        state[static_cast<size_t>(id)].reset();
      } else {
        MonoNanos deadline = base - 1 - static_cast<MonoNanos>(rng() % 200);  // many ties
        timer.ArmAt(deadline);
        state[static_cast<size_t>(id)] = std::make_pair(deadline, step++);
      }
    }
    for (int id = 0; id < kTimers; ++id) {
      if (state[static_cast<size_t>(id)]) {
        expected.push_back(
            {state[static_cast<size_t>(id)]->first, state[static_cast<size_t>(id)]->second, id});
      }
    }
    expected_count = expected.size();
  });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  ASSERT_GT(expected.size(), 0u);
  std::sort(expected.begin(), expected.end(), [](const Expected& a, const Expected& b) {
    return a.deadline != b.deadline ? a.deadline < b.deadline : a.armed_at < b.armed_at;
  });
  std::vector<int> expected_ids;
  for (const Expected& e : expected)
    expected_ids.push_back(e.id);
  EXPECT_EQ(fired, expected_ids);
}

TEST_F(EventLoopTest, PostFromAnotherThreadWakesTheLoop) {
  std::promise<void> running;
  std::thread::id loop_thread = std::this_thread::get_id();
  std::thread::id ran_on;
  loop_.Post([&] { running.set_value(); });
  std::thread poster([&] {
    running.get_future().wait();  // the loop is in Run(), about to block in epoll_wait
    loop_.Post([&] {
      ran_on = std::this_thread::get_id();
      loop_.Stop();
    });
  });
  bool stopped_by_itself = RunWithWatchdog(loop_);
  poster.join();
  EXPECT_TRUE(stopped_by_itself);
  EXPECT_EQ(ran_on, loop_thread);
}

TEST_F(EventLoopTest, PostsFromManyThreadsAllRunInPerThreadOrder) {
  constexpr int kThreads = 4;
  constexpr int kPosts = 500;
  std::vector<std::vector<int>> seen(kThreads);
  int total = 0;
  std::vector<std::thread> posters;
  for (int t = 0; t < kThreads; ++t) {
    posters.emplace_back([&, t] {
      for (int i = 0; i < kPosts; ++i) {
        loop_.Post([&, t, i] {
          seen[static_cast<size_t>(t)].push_back(i);
          if (++total == kThreads * kPosts) loop_.Stop();
        });
      }
    });
  }
  bool stopped_by_itself = RunWithWatchdog(loop_);
  for (std::thread& poster : posters)
    poster.join();
  EXPECT_TRUE(stopped_by_itself);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seen[static_cast<size_t>(t)].size(), static_cast<size_t>(kPosts));
    for (int i = 0; i < kPosts; ++i)
      EXPECT_EQ(seen[static_cast<size_t>(t)][static_cast<size_t>(i)], i);
  }
}

TEST_F(EventLoopTest, PostFromTheLoopThreadRunsLaterNotInline) {
  std::vector<int> order;
  loop_.Post([&] {
    loop_.Post([&] {
      order.push_back(2);
      loop_.Stop();
    });
    order.push_back(1);
  });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST_F(EventLoopTest, DeferredTasksRunAfterTheCurrentCallbackAndChainAcrossIterations) {
  std::vector<int> order;
  int iterations_seen = 0;
  loop_.Post([&] {
    loop_.Defer([&] {
      order.push_back(2);
      // Deferred from a deferred task: not in this pass, and the loop must not block waiting
      // for an event to get to it.
      loop_.Defer([&] {
        order.push_back(3);
        loop_.Stop();
      });
      ++iterations_seen;
    });
    order.push_back(1);
  });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(iterations_seen, 1);
}

// What the servers rely on to pause and resume reading an edge-triggered socket: re-arming the
// registration with EPOLL_CTL_MOD reports data that was already waiting (no new edge needed).
TEST_F(EventLoopTest, ModifyReportsDataAlreadyWaitingOnAnEdgeTriggeredDescriptor) {
  Pipe pipe;
  int events_seen = 0;
  CallbackHandler reader([&](uint32_t) {
    ++events_seen;
    if (events_seen == 1) {
      // Leave the byte unread, stop watching input, then watch it again.
      ASSERT_TRUE(loop_.Modify(pipe.read_end.get(), EPOLLET, &reader).ok());
      loop_.Defer(
          [&] { ASSERT_TRUE(loop_.Modify(pipe.read_end.get(), EPOLLIN | EPOLLET, &reader).ok()); });
      return;
    }
    loop_.Stop();
  });
  ASSERT_TRUE(loop_.Add(pipe.read_end.get(), EPOLLIN | EPOLLET, &reader).ok());
  pipe.WriteByte();
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_EQ(events_seen, 2);
  loop_.Remove(pipe.read_end.get());
}

TEST_F(EventLoopTest, StopFromAnotherThread) {
  std::promise<void> running;
  loop_.Post([&] { running.set_value(); });
  std::thread stopper([&] {
    running.get_future().wait();
    loop_.Stop();
  });
  bool stopped_by_itself = RunWithWatchdog(loop_);
  stopper.join();
  EXPECT_TRUE(stopped_by_itself);
  EXPECT_TRUE(loop_.stopping());
}

TEST_F(EventLoopTest, StopBeforeRunReturnsAtOnceAfterRunningPostedTasks) {
  bool ran = false;
  loop_.Post([&] { ran = true; });
  loop_.Stop();
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_TRUE(ran);
}

// An object that deletes itself (through DeleteLater) from inside its own I/O callback, and
// keeps using its members afterwards, as connections do.
class SelfDeleting final : public IoHandler, public Deletable {
 public:
  SelfDeleting(EventLoop* loop, int fd, bool* destroyed, std::vector<std::string>* log)
      : loop_(loop), fd_(fd), destroyed_(destroyed), log_(log) {}
  ~SelfDeleting() override {
    *destroyed_ = true;
    log_->push_back("destroyed");
  }
  void set_self(std::unique_ptr<SelfDeleting> self) { self_ = std::move(self); }

  void OnIoEvents(uint32_t /*events*/) override {
    loop_->Remove(fd_);
    loop_->DeleteLater(std::move(self_));
    // Still alive until the iteration ends: members are usable (ASan would flag a free).
    name_ = "still here";
    log_->push_back(name_);
    EXPECT_FALSE(*destroyed_);
    loop_->Post([loop = loop_, destroyed = destroyed_] {
      // The next iteration: the object is gone.
      EXPECT_TRUE(*destroyed);
      loop->Stop();
    });
  }

 private:
  EventLoop* loop_;
  int fd_;
  bool* destroyed_;
  std::vector<std::string>* log_;
  std::string name_;
  std::unique_ptr<SelfDeleting> self_;
};

TEST_F(EventLoopTest, DeleteLaterDefersDestructionPastTheCallback) {
  Pipe pipe;
  bool destroyed = false;
  std::vector<std::string> log;
  auto owned = std::make_unique<SelfDeleting>(&loop_, pipe.read_end.get(), &destroyed, &log);
  SelfDeleting* object = owned.get();
  object->set_self(std::move(owned));
  ASSERT_TRUE(loop_.Add(pipe.read_end.get(), EPOLLIN, object).ok());
  pipe.WriteByte();
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_TRUE(destroyed);
  EXPECT_EQ(log, (std::vector<std::string>{"still here", "destroyed"}));
}

class Flagged final : public Deletable {
 public:
  explicit Flagged(bool* destroyed) : destroyed_(destroyed) {}
  ~Flagged() override { *destroyed_ = true; }

 private:
  bool* destroyed_;
};

TEST_F(EventLoopTest, DeleteLaterFromATimerCallback) {
  bool destroyed = false;
  bool destroyed_during_callback = true;
  Timer timer(&loop_, [&] {
    loop_.DeleteLater(std::make_unique<Flagged>(&destroyed));
    destroyed_during_callback = destroyed;
    loop_.Post([&] { loop_.Stop(); });
  });
  loop_.Post([&] { timer.ArmAt(0); });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_FALSE(destroyed_during_callback);
  EXPECT_TRUE(destroyed);
}

TEST(EventLoopLifetimeTest, PendingDeletionsHappenWhenTheLoopIsDestroyed) {
  bool destroyed = false;
  {
    EventLoop loop;
    ASSERT_TRUE(loop.Init().ok());
    loop.DeleteLater(std::make_unique<Flagged>(&destroyed));
    EXPECT_FALSE(destroyed);
  }
  EXPECT_TRUE(destroyed);
}

TEST_F(EventLoopTest, IoHandlerGetsTheEventMaskUntilRemoved) {
  Pipe pipe;
  std::vector<uint32_t> events_seen;
  CallbackHandler reader([&](uint32_t events) {
    events_seen.push_back(events);
    char buf[16];
    while (read(pipe.read_end.get(), buf, sizeof(buf)) > 0) {
    }
    loop_.Remove(pipe.read_end.get());
    pipe.WriteByte();  // no longer registered: must not be reported
    loop_.Post([&] { loop_.Post([&] { loop_.Stop(); }); });
  });
  ASSERT_TRUE(loop_.Add(pipe.read_end.get(), EPOLLIN, &reader).ok());
  pipe.WriteByte();
  ASSERT_TRUE(RunWithWatchdog(loop_));
  ASSERT_EQ(events_seen.size(), 1u);
  EXPECT_EQ(events_seen[0], static_cast<uint32_t>(EPOLLIN));
}

TEST_F(EventLoopTest, AddAndModifyReportErrors) {
  CallbackHandler handler([](uint32_t) {});
  Status bad = loop_.Add(-1, EPOLLIN, &handler);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "epoll_ctl add: Bad file descriptor");
  Pipe pipe;
  Status not_added = loop_.Modify(pipe.read_end.get(), EPOLLIN, &handler);
  ASSERT_FALSE(not_added.ok());
  EXPECT_EQ(not_added.message(), "epoll_ctl mod: No such file or directory");
  ASSERT_TRUE(loop_.Add(pipe.read_end.get(), EPOLLIN, &handler).ok());
  Status twice = loop_.Add(pipe.read_end.get(), EPOLLIN, &handler);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.message(), "epoll_ctl add: File exists");
  EXPECT_TRUE(loop_.Modify(pipe.read_end.get(), EPOLLIN | EPOLLET, &handler).ok());
  loop_.Remove(pipe.read_end.get());
}

TEST_F(EventLoopTest, NowIsMonotonicAndRefreshedPerIteration) {
  const MonoNanos before = loop_.now();
  EXPECT_GT(before, 0);
  MonoNanos seen = 0;
  loop_.Post([&] {
    seen = loop_.now();
    loop_.Stop();
  });
  ASSERT_TRUE(RunWithWatchdog(loop_));
  EXPECT_GE(seen, before);
  EXPECT_LE(seen, MonoNow());
  EXPECT_GE(loop_.UpdateNow(), seen);
}

}  // namespace
}  // namespace hammer::net
