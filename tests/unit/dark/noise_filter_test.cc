// Diffy's noise rule (github.com/twitter-archive/diffy, analysis/JoinedDifferences.scala) and
// worked examples of it.
#include "hammer/dark/noise_filter.h"

#include <gtest/gtest.h>

namespace hammer::dark {
namespace {

TEST(NoiseFilterTest, WorkedExamples) {
  // timestamp: differs everywhere, between the regular instances too.
  EXPECT_FALSE(JudgeField(1000, 1000, 1000).reported);
  // price: the dark instance alone changes it.
  NoiseVerdict price = JudgeField(50, 0, 1000);
  EXPECT_TRUE(price.reported);
  EXPECT_DOUBLE_EQ(price.relative_percent, 100);
  EXPECT_DOUBLE_EQ(price.absolute_percent, 5);
  // x: slightly more than the noise.
  NoiseVerdict x = JudgeField(110, 100, 1000);
  EXPECT_FALSE(x.reported);
  EXPECT_NEAR(x.relative_percent, 4.76, 0.01);
}

TEST(NoiseFilterTest, ComparisonsAreStrict) {
  // relative exactly 20 %: raw 60, noise 40 -> 100 * 20 / 100 = 20, not > 20.
  EXPECT_DOUBLE_EQ(JudgeField(60, 40, 1000).relative_percent, 20);
  EXPECT_FALSE(JudgeField(60, 40, 1000).reported);
  EXPECT_TRUE(JudgeField(61, 40, 1000).reported);
  // absolute exactly 0.03 %: 3 differences in 10000.
  EXPECT_FALSE(JudgeField(3, 0, 10000).reported);
  EXPECT_TRUE(JudgeField(4, 0, 10000).reported);
}

TEST(NoiseFilterTest, RawMustExceedNoise) {
  EXPECT_FALSE(JudgeField(0, 0, 1000).reported);
  EXPECT_FALSE(JudgeField(10, 500, 1000).reported);  // large gap, but the wrong way
  EXPECT_FALSE(JudgeField(5, 0, 0).reported);        // nothing compared
}

TEST(NoiseFilterTest, CustomThresholds) {
  NoiseThresholds loose{1, 0};
  EXPECT_TRUE(JudgeField(110, 100, 1000, loose).reported);
  NoiseThresholds strict{50, 10};
  EXPECT_FALSE(JudgeField(50, 0, 1000, strict).reported);  // 5 % absolute is below 10 %
}

}  // namespace
}  // namespace hammer::dark
