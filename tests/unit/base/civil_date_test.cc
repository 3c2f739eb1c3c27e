#include "hammer/base/civil_date.h"

#include <gtest/gtest.h>

#include <ctime>

namespace hammer {
namespace {

TEST(CivilDateTest, MatchesTimegmDayByDay) {
  // Every day from 1601 to 2500, counted one by one.
  int64_t expected = DaysSinceEpoch(1601, 1, 1);
  for (int64_t year = 1601; year <= 2500; ++year) {
    for (int month = 1; month <= 12; ++month) {
      for (int day = 1; day <= DaysInMonth(year, month); ++day) {
        ASSERT_EQ(DaysSinceEpoch(year, month, day), expected) << year << "-" << month << "-" << day;
        ++expected;
      }
    }
  }
  std::tm tm{};
  tm.tm_year = 2024 - 1900;
  tm.tm_mon = 4;
  tm.tm_mday = 1;
  EXPECT_EQ(DaysSinceEpoch(2024, 5, 1) * 86400, timegm(&tm));
  EXPECT_EQ(DaysSinceEpoch(1601, 1, 1), -134774);
}

TEST(CivilDateTest, ValidDates) {
  EXPECT_TRUE(IsValidDate(2024, 2, 29));
  EXPECT_FALSE(IsValidDate(2023, 2, 29));
  EXPECT_FALSE(IsValidDate(1900, 2, 29));
  EXPECT_TRUE(IsValidDate(2000, 2, 29));
  EXPECT_FALSE(IsValidDate(2024, 4, 31));
  EXPECT_FALSE(IsValidDate(2024, 0, 1));
  EXPECT_FALSE(IsValidDate(2024, 13, 1));
  EXPECT_FALSE(IsValidDate(2024, 1, 0));
  EXPECT_TRUE(IsValidDate(2024, 12, 31));
}

}  // namespace
}  // namespace hammer
