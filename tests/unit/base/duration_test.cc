#include "hammer/base/duration.h"

#include <gtest/gtest.h>

#include <string>

namespace hammer {
namespace {

Nanos MustParse(std::string_view text) {
  Result<Nanos> d = ParseDuration(text);
  EXPECT_TRUE(d.ok()) << text << ": " << d.status().message();
  return d.ok() ? *d : -1;
}

std::string ErrorOf(std::string_view text) {
  Result<Nanos> d = ParseDuration(text);
  EXPECT_FALSE(d.ok()) << "'" << text << "' parsed as " << (d.ok() ? *d : 0) << " ns";
  return d.status().message();
}

TEST(ParseDurationTest, EveryUnit) {
  EXPECT_EQ(MustParse("7ns"), 7);
  EXPECT_EQ(MustParse("100us"), 100 * kMicrosecond);
  EXPECT_EQ(MustParse("100\xC2\xB5s"), 100 * kMicrosecond);  // "100µs"
  EXPECT_EQ(MustParse("250ms"), 250 * kMillisecond);
  EXPECT_EQ(MustParse("10s"), 10 * kSecond);
  EXPECT_EQ(MustParse("1.5m"), 90 * kSecond);
  EXPECT_EQ(MustParse("5min"), 300 * kSecond);
  EXPECT_EQ(MustParse("2h"), 7200 * kSecond);
}

TEST(ParseDurationTest, BareNumberIsSeconds) {
  EXPECT_EQ(MustParse("30"), 30 * kSecond);
  EXPECT_EQ(MustParse("0"), 0);
  EXPECT_EQ(MustParse("0.5"), 500 * kMillisecond);
  EXPECT_EQ(MustParse("0.000001"), kMicrosecond);
}

// As Go's time.ParseDuration (vegeta) and k6 read them.
TEST(ParseDurationTest, CompoundDurationsAddTheirParts) {
  EXPECT_EQ(MustParse("1m30s"), 90 * kSecond);
  EXPECT_EQ(MustParse("1h2m"), 3720 * kSecond);
  EXPECT_EQ(MustParse("1h2m3.5s"), 3723500 * kMillisecond);
  EXPECT_EQ(MustParse("2s500ms"), 2500 * kMillisecond);
  EXPECT_EQ(MustParse("1.5m30s"), 120 * kSecond);
  EXPECT_EQ(ErrorOf("1m30"),
            "invalid duration unit in '1m30' (use ns, us, ms, s, m or h, e.g. 1m30s)");
  EXPECT_EQ(ErrorOf("1m-30s"),
            "invalid duration '1m-30s' (examples: 250ms, 10s, 1.5m, 1m30s, 1h2m)");
  EXPECT_EQ(ErrorOf("1mx30s"),
            "invalid duration unit in '1mx30s' (use ns, us, ms, s, m or h, e.g. 1m30s)");
}

TEST(ParseDurationTest, FractionsAndExponentsRoundToTheNearestNanosecond) {
  EXPECT_EQ(MustParse("1.25s"), 1250 * kMillisecond);
  EXPECT_EQ(MustParse("0.0015ms"), 1500);
  EXPECT_EQ(MustParse("1e3ms"), kSecond);
  EXPECT_EQ(MustParse("5e-1s"), 500 * kMillisecond);
  EXPECT_EQ(MustParse("0.4ns"), 0);
  EXPECT_EQ(MustParse("0.6ns"), 1);
}

TEST(ParseDurationTest, LargestAcceptedAndTooLong) {
  EXPECT_EQ(MustParse("9e9"), 9'000'000'000 * kSecond);
  EXPECT_EQ(ErrorOf("9.1e9"), "duration too long: '9.1e9'");
  EXPECT_EQ(ErrorOf("200000000000h"), "duration too long: '200000000000h'");
}

TEST(ParseDurationTest, InvalidNumbersNameTheInput) {
  for (std::string_view text : {"", "ms", "-1s", "-5", "+1s", "abc", "1..5s", "1.5e", "1-2", "nan",
                                "inf", "1e400", " 5s", ".", "e5"}) {
    EXPECT_EQ(ErrorOf(text), "invalid duration '" + std::string(text) +
                                 "' (examples: 250ms, 10s, 1.5m, 1m30s, 1h2m)");
  }
}

TEST(ParseDurationTest, UnknownUnitsNameTheInput) {
  for (std::string_view text : {"5 s", "10S", "1d", "2hours", "3sec", "1ms ", "4Ms"}) {
    EXPECT_EQ(ErrorOf(text), "invalid duration unit in '" + std::string(text) +
                                 "' (use ns, us, ms, s, m or h, e.g. 1m30s)");
  }
}

TEST(FormatDurationTest, ShortHumanForms) {
  EXPECT_EQ(FormatDuration(1250 * kMillisecond), "1.25s");
  EXPECT_EQ(FormatDuration(250 * kMillisecond), "250ms");
  EXPECT_EQ(FormatDuration(80 * kMicrosecond), "80us");
  EXPECT_EQ(FormatDuration(0), "0us");
  EXPECT_EQ(FormatDuration(500), "0.5us");
  EXPECT_EQ(FormatDuration(kSecond), "1s");
  EXPECT_EQ(FormatDuration(kMillisecond), "1ms");
  EXPECT_EQ(FormatDuration(12'500 * kMicrosecond), "12.5ms");
  EXPECT_EQ(FormatDuration(123'456'789), "123ms");
  EXPECT_EQ(FormatDuration(90 * kSecond), "90s");
  EXPECT_EQ(FormatDuration(999 * kSecond), "999s");
}

// %.3g prints 1000 and more as "1e+03": values that round to 1000 of a unit must move up a
// unit, and durations of 1000 s or more must stay readable (`hammer demo --duration 1h`).
TEST(FormatDurationTest, NeverUsesExponentNotation) {
  EXPECT_EQ(FormatDuration(999'999 * kMicrosecond), "1s");
  EXPECT_EQ(FormatDuration(999'900), "1ms");
  EXPECT_EQ(FormatDuration(3600 * kSecond), "3600s");
  EXPECT_EQ(FormatDuration(1500 * kSecond), "1500s");
  EXPECT_EQ(FormatDuration(86400 * kSecond), "86400s");
  for (Nanos d = 1; d < 10'000 * kSecond; d = d * 3 + 1) {
    EXPECT_EQ(FormatDuration(d).find('e'), std::string::npos) << d << " ns";
  }
}

TEST(DurationTest, FormatThenParseKeepsThreeSignificantDigits) {
  for (Nanos d : {Nanos{1250 * kMillisecond}, Nanos{250 * kMillisecond}, Nanos{80 * kMicrosecond},
                  Nanos{3600 * kSecond}, Nanos{12'500 * kMicrosecond}}) {
    EXPECT_EQ(MustParse(FormatDuration(d)), d) << FormatDuration(d);
  }
}

}  // namespace
}  // namespace hammer
