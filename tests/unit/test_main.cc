// The unit tests' main: GoogleTest with two rules that keep `make unit` honest.
//
// - A per-test time limit. A test still running after HAMMER_TEST_TIMEOUT seconds (default
//   120: the slowest test takes a few seconds, under ASan or TSan a few times that) is named on
//   stderr and the process aborts, so a hang costs minutes, not CI's whole budget.
// - No silent skips. A test that skips (GTEST_SKIP) fails the run after the summary, naming it
//   and its reason, unless HAMMER_ALLOW_SKIPS=1 is set: a missing server or feature must be
//   installed (make deps-test), not passed over.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace {

int EnvSeconds(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  const int seconds = std::atoi(value);
  return seconds > 0 ? seconds : fallback;
}

// Watches the running test from a thread of its own.
class Watchdog final : public ::testing::EmptyTestEventListener {
 public:
  explicit Watchdog(std::chrono::seconds limit) : limit_(limit), thread_([this] { Watch(); }) {}
  ~Watchdog() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  void OnTestStart(const ::testing::TestInfo& test) override {
    std::lock_guard lock(mutex_);
    name_ = std::string(test.test_suite_name()) + "." + test.name();
    started_ = std::chrono::steady_clock::now();
    running_ = true;
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    std::lock_guard lock(mutex_);
    running_ = false;
  }

 private:
  void Watch() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::seconds(1));
      if (running_ && std::chrono::steady_clock::now() - started_ > limit_) {
        std::fprintf(stderr, "\nhammer_unit_tests: %s still running after %lld s: aborting\n",
                     name_.c_str(), static_cast<long long>(limit_.count()));
        std::fflush(stderr);
        std::abort();
      }
    }
  }

  const std::chrono::seconds limit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string name_;
  std::chrono::steady_clock::time_point started_;
  bool running_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the members it reads exist
};

// The skipped tests with the reason each gave.
int ReportSkips() {
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  if (unit.skipped_test_count() == 0) return 0;
  const char* allow = std::getenv("HAMMER_ALLOW_SKIPS");
  const bool allowed = allow != nullptr && std::string(allow) == "1";
  std::fprintf(stderr, "\n%d test(s) skipped%s:\n", unit.skipped_test_count(),
               allowed ? " (allowed by HAMMER_ALLOW_SKIPS=1)" : "");
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const ::testing::TestInfo& test = *suite.GetTestInfo(j);
      if (!test.result()->Skipped()) continue;
      std::string why;
      for (int k = 0; k < test.result()->total_part_count(); ++k) {
        const ::testing::TestPartResult& part = test.result()->GetTestPartResult(k);
        if (part.skipped() && part.message() != nullptr) why = part.message();
      }
      std::fprintf(stderr, "  %s.%s: %s\n", suite.name(), test.name(), why.c_str());
    }
  }
  if (allowed) return 0;
  std::fprintf(stderr,
               "a skip fails the run: install what the test needs (make deps-test), or set "
               "HAMMER_ALLOW_SKIPS=1 to accept it\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto* watchdog = new Watchdog(std::chrono::seconds(EnvSeconds("HAMMER_TEST_TIMEOUT", 120)));
  ::testing::UnitTest::GetInstance()->listeners().Append(watchdog);  // gtest owns it
  const int failed = RUN_ALL_TESTS();
  if (failed != 0) return failed;
  return ReportSkips();
}
