// Calendar arithmetic for reading timestamps written as dates (HAR's ISO 8601 times, cookie
// Expires dates): the proleptic Gregorian calendar in UTC, no time zones or leap seconds.
// Pure constexpr functions; thread-safe.
#pragma once

#include <cstdint>

namespace hammer {

constexpr bool IsLeapYear(int64_t year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

constexpr int DaysInMonth(int64_t year, int month) {
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

// True when the day exists: month 1-12, day 1 to the length of that month.
constexpr bool IsValidDate(int64_t year, int month, int day) {
  return month >= 1 && month <= 12 && day >= 1 && day <= DaysInMonth(year, month);
}

// Days from 1970-01-01 to a valid date (negative before it). Years are counted from March, so
// that the leap day ends a year, in 400-year eras of 146097 days each.
constexpr int64_t DaysSinceEpoch(int64_t year, int month, int day) {
  int64_t y = year - (month <= 2 ? 1 : 0);
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t year_of_era = y - era * 400;                                 // 0-399
  int64_t day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;  // 0-365, from March 1
  int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;  // 719468: days from 0000-03-01 to 1970-01-01
}

static_assert(DaysSinceEpoch(1970, 1, 1) == 0);
static_assert(DaysSinceEpoch(2000, 3, 1) == 11017);
static_assert(DaysSinceEpoch(1969, 12, 31) == -1);

}  // namespace hammer
