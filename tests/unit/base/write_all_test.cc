#include "hammer/base/write_all.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

namespace hammer {
namespace {

TEST(WriteAllTest, WritesEveryByte) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  // Within the default 64 KiB pipe buffer, so the write never blocks without a reader.
  const std::string data(60000, 'x');
  ASSERT_TRUE(WriteAll(fds[1], data).ok());
  close(fds[1]);
  std::string read_back;
  char buf[8192];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0)
    read_back.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  EXPECT_EQ(read_back, data);
}

TEST(WriteAllTest, AFailedWriteIsAnError) {
  Status status = WriteAll(-1, "abc");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("write output"), std::string::npos);
  EXPECT_TRUE(WriteAll(-1, "").ok());  // nothing to write: no call, no error
}

// A pipe whose reader is gone takes nothing: EPIPE (SIGPIPE ignored, as hammer does), named, with
// the count of bytes that went out before it.
TEST(WriteAllTest, AClosedPipeIsEpipeWithTheBytesWritten) {
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGPIPE, &ignore, &old), 0);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  size_t written = 99;
  Status status = WriteAll(fds[1], "abc", "cannot write records", &written);
  EXPECT_EQ(status.message(), "cannot write records: Broken pipe");
  EXPECT_EQ(written, 0u);
  close(fds[1]);
  sigaction(SIGPIPE, &old, nullptr);
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_TRUE(WriteAll(fds[1], "abc", "x", &written).ok());
  EXPECT_EQ(written, 3u);
  close(fds[0]);
  close(fds[1]);
}

// Reads `fd` to its end on a thread of its own (SIGALRM blocked there: the writer takes it).
class PipeReader {
 public:
  explicit PipeReader(int fd) {
    sigset_t alarm;
    sigemptyset(&alarm);
    sigaddset(&alarm, SIGALRM);
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &alarm, &old);  // inherited by the thread
    thread_ = std::thread([this, fd] {
      char buffer[4096];
      ssize_t n;
      while ((n = read(fd, buffer, sizeof(buffer))) != 0) {
        if (n > 0) text_.append(buffer, static_cast<size_t>(n));
      }
    });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  std::string Join() {
    thread_.join();
    return text_;
  }

 private:
  std::string text_;
  std::thread thread_;
};

std::atomic<int> alarms{0};

// A signal that interrupts write after some bytes makes it return fewer than were asked for
// (or -1 with EINTR before any): the rest is written from where it stopped. An interval timer
// fires every 100 µs, its handler installed without SA_RESTART, while 8 MB go through a pipe.
TEST(WriteAllTest, InterruptedWritesAreContinued) {
  struct sigaction action {};
  action.sa_handler = [](int) { alarms.fetch_add(1); };
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocked write returns early
  struct sigaction old_action {};
  ASSERT_EQ(sigaction(SIGALRM, &action, &old_action), 0);
  std::string expected;
  for (int i = 0; i < 2000; ++i)
    expected += std::string(4000 + i % 300, static_cast<char>('a' + i % 26));
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  PipeReader reader(fds[0]);
  alarms = 0;
  itimerval every{{0, 100}, {0, 100}};
  ASSERT_EQ(setitimer(ITIMER_REAL, &every, nullptr), 0);
  const Status written = WriteAll(fds[1], expected);
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  sigaction(SIGALRM, &old_action, nullptr);
  close(fds[1]);
  ASSERT_TRUE(written.ok()) << written.message();
  const std::string read_back = reader.Join();
  close(fds[0]);
  EXPECT_GT(alarms.load(), 0);
  ASSERT_EQ(read_back.size(), expected.size());
  EXPECT_TRUE(read_back == expected);
}

}  // namespace
}  // namespace hammer
