#include "hammer/base/write_all.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

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

}  // namespace
}  // namespace hammer
