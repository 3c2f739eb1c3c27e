#include "hammer/stats/partial.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "hammer/stats/record.h"

namespace hammer::stats {
namespace {

KeyStats Parse(std::string_view line, Status* status) {
  ParsedRecord record = ParseRecordLine(line.substr(0, line.size() - 1));
  EXPECT_EQ(record.kind, RecordKind::kPartial) << line;
  KeyStats stats;
  *status = ParsePartialFields(record.partial, &stats);
  return stats;
}

KeyStats Example() {
  KeyStats stats;
  stats.RecordSuccess(12345);
  stats.RecordSuccess(1000);
  stats.RecordFailure(Failure::kTimeout);
  stats.RecordFailure(Failure::kHttp5xx);
  stats.RecordFailure(Failure::kHttp5xx);
  stats.RecordFailure(std::nullopt);
  return stats;
}

TEST(PartialTest, Format) {
  std::string line;
  AppendPartialRecord(line, "http://a/x", Example());
  std::string expected = "http://a/x\t#hp1 2 4 13345 1000 12345 timeout:1,http_5xx:2 " +
                         Example().histogram.EncodeBase64() + "\n";
  EXPECT_EQ(line, expected);

  KeyStats failures_only;
  failures_only.RecordFailure(std::nullopt);
  line.clear();
  AppendPartialRecord(line, "k", failures_only);
  EXPECT_EQ(line, "k\t#hp1 0 1 0 - - - " + Histogram().EncodeBase64() + "\n");
}

TEST(PartialTest, RoundTripsExactly) {
  std::mt19937_64 rng(9);
  for (int round = 0; round < 200; ++round) {
    KeyStats stats;
    int n = static_cast<int>(rng() % 50);
    for (int i = 0; i < n; ++i) {
      if (rng() % 4 == 0) {
        stats.RecordFailure(
            rng() % 2 ? std::optional<Failure>(static_cast<Failure>(rng() % kFailureCount))
                      : std::nullopt);
      } else {
        stats.RecordSuccess(static_cast<int64_t>(rng() % 5000000000));
      }
    }
    std::string line;
    AppendPartialRecord(line, "key", stats);
    Status status;
    KeyStats parsed = Parse(line, &status);
    ASSERT_TRUE(status.ok()) << status.message() << "\n" << line;
    EXPECT_EQ(parsed, stats);
  }
}

TEST(PartialTest, RejectsMalformedAndInconsistentFields) {
  const std::string h1 = [] {
    Histogram h;
    h.Record(5);
    return h.EncodeBase64();
  }();
  const std::string h0 = Histogram().EncodeBase64();
  KeyStats stats;
  ASSERT_TRUE(ParsePartialFields("1 0 5 5 5 - " + h1, &stats).ok());
  ASSERT_TRUE(ParsePartialFields("0 3 0 - - timeout:1,dns:2 " + h0, &stats).ok());
  const std::string bad[] = {
      "",
      "1 0 5 5 5 -",                   // no histogram
      "1 0 5 5 5 - " + h1 + " extra",  // one field too many
      "1 0 5 5 5 -  " + h1,            // double space
      " 1 0 5 5 5 - " + h1,            // leading space
      "1 0 5 5 5 - " + h1 + " ",       // trailing space
      "x 0 5 5 5 - " + h1,             // not a number
      "-1 0 5 5 5 - " + h1,            // negative
      "+1 0 5 5 5 - " + h1,            // sign
      "1 0 5 - - - " + h1,             // '-' min with count 1
      "0 0 0 5 5 - " + h0,             // min with count 0
      "0 0 7 - - - " + h0,             // sum with count 0
      "1 0 5 6 4 - " + h1,             // min > max
      "1 0 9 5 5 - " + h1,             // sum > count * max
      "2 0 5 5 5 - " + h1,             // histogram total != count
      "1 0 5 5 5 - " + h0,             // histogram total != count
      "1 0 7 7 7 - " + h1,             // min/max outside the histogram's bucket
      "1 1 5 5 5 bogus:1 " + h1,       // unknown failure type
      "1 1 5 5 5 timeout:2 " + h1,     // more typed failures than errors
      "1 1 5 5 5 timeout:18446744073709551615,dns:2 " + h1,  // ... whose sum wraps 2^64
      "1 2 5 5 5 timeout:1,timeout:1 " + h1,
      "1 1 5 5 5 timeout:1, " + h1,
      "1 1 5 5 5 timeout:0 " + h1,
      "1 1 5 5 5 timeout " + h1,
      "1 0 5 5 5 - HISTFAAA",  // bad histogram
      "1 0 5 5 5 - " + h1.substr(0, h1.size() - 4),
      "99999999999999999999 0 5 5 5 - " + h1,  // overflows uint64
  };
  for (const std::string& fields : bad) {
    KeyStats out;
    EXPECT_FALSE(ParsePartialFields(fields, &out).ok()) << fields;
  }
}

TEST(PartialTest, SaturatedValuesStayConsistent) {
  KeyStats stats;
  stats.RecordSuccess(Histogram::kHighest * 2);
  std::string line;
  AppendPartialRecord(line, "slow", stats);
  Status status;
  KeyStats parsed = Parse(line, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(parsed, stats);
  EXPECT_EQ(parsed.max_micros, Histogram::kHighest * 2);
}

}  // namespace
}  // namespace hammer::stats
