#include "hammer/base/status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace hammer {
namespace {

TEST(StatusTest, OkAndError) {
  EXPECT_TRUE(Status::Ok().ok());
  Status error = Status::FromErrno("connect 127.0.0.1:9", ECONNREFUSED);
  EXPECT_FALSE(error.ok());
  EXPECT_EQ(error.message(), "connect 127.0.0.1:9: Connection refused");
}

TEST(ResultTest, HoldsValueOrError) {
  Result<int> value = 7;
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, 7);
  Result<int> error = Status::Error("bad");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.status().message(), "bad");
}

}  // namespace
}  // namespace hammer
