// RecordSink: the first failed write sticks, later buffers are dropped, and the lines that went
// out whole are counted.
#include "hammer/load/record_sink.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace hammer::load {
namespace {

TEST(RecordSinkTest, CountsTheLinesWritten) {
  int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  RecordSink sink(fd);
  sink.Write("a\t0.001\nb\t\n");
  sink.Write("");
  sink.Write("c\t0.002\n");
  EXPECT_FALSE(sink.failed());
  EXPECT_TRUE(sink.status().ok());
  EXPECT_EQ(sink.records_written(), 3u);
  close(fd);
}

// /dev/full takes no byte: the error is kept, named, and every later buffer is dropped.
TEST(RecordSinkTest, AFullDeviceFailsOnceAndForAll) {
  int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  RecordSink sink(fd);
  sink.Write("a\t0.001\n");
  EXPECT_TRUE(sink.failed());
  EXPECT_EQ(sink.status().message(), "cannot write records: No space left on device");
  sink.Write("b\t0.001\n");
  EXPECT_EQ(sink.status().message(), "cannot write records: No space left on device");
  EXPECT_EQ(sink.records_written(), 0u);
  close(fd);
}

}  // namespace
}  // namespace hammer::load
