#include "hammer/base/byte_size.h"

#include <gtest/gtest.h>

namespace hammer {
namespace {

TEST(ByteSizeTest, FormatsInTheLargestUnitThatDividesAndParsesBack) {
  EXPECT_EQ(FormatByteSize(0), "0");
  EXPECT_EQ(FormatByteSize(1000), "1000");
  EXPECT_EQ(FormatByteSize(1536), "1536");
  EXPECT_EQ(FormatByteSize(3072), "3KiB");
  EXPECT_EQ(FormatByteSize(256u << 20), "256MiB");
  EXPECT_EQ(FormatByteSize(uint64_t{3} << 30), "3GiB");
  for (uint64_t bytes : {uint64_t{0}, uint64_t{1}, uint64_t{1536}, uint64_t{65536},
                         uint64_t{256} << 20, (uint64_t{1} << 30) + 1024}) {
    Result<uint64_t> parsed = ParseByteSize(FormatByteSize(bytes));
    ASSERT_TRUE(parsed.ok()) << bytes;
    EXPECT_EQ(*parsed, bytes);
  }
}

}  // namespace
}  // namespace hammer
