#include "hammer/base/open_file_limit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace hammer {
namespace {

// Lowers the soft limit for the test and puts the original back afterwards.
class OpenFileLimitTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &original_), 0); }
  void TearDown() override { setrlimit(RLIMIT_NOFILE, &original_); }
  rlimit original_{};
};

TEST_F(OpenFileLimitTest, RaisesTheSoftLimitToTheHardLimit) {
  if (original_.rlim_max != RLIM_INFINITY && original_.rlim_max < 512) {
    GTEST_SKIP() << "hard limit too low to lower the soft one meaningfully";
  }
  rlimit lowered = original_;
  lowered.rlim_cur = 256;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  EXPECT_EQ(CurrentOpenFileLimit().soft, 256u);

  OpenFileLimit raised = RaiseOpenFileLimit();
  EXPECT_GT(raised.soft, 256u);
  if (original_.rlim_max != RLIM_INFINITY) {
    EXPECT_EQ(raised.soft, static_cast<uint64_t>(original_.rlim_max));
    EXPECT_EQ(raised.hard, static_cast<uint64_t>(original_.rlim_max));
  }
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(static_cast<uint64_t>(now.rlim_cur), raised.soft);
}

TEST_F(OpenFileLimitTest, AlreadyAtTheHardLimitIsLeftAlone) {
  OpenFileLimit first = RaiseOpenFileLimit();
  OpenFileLimit second = RaiseOpenFileLimit();
  EXPECT_EQ(first.soft, second.soft);
  EXPECT_EQ(first.hard, second.hard);
  EXPECT_LE(second.soft, second.hard);
}

}  // namespace
}  // namespace hammer
