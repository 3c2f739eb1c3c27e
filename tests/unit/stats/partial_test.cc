#include "hammer/stats/partial.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "hammer/stats/record.h"

namespace hammer::stats {
namespace {

KeyStats Parse(std::string_view line, Status* status) {
  ParsedRecord record = ParseRecordLine(std::string_view(line).substr(0, line.size() - 1));
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

// #ha1: the same fields after the task, the attempt, when it started and how many lines it wrote.
TEST(PartialTest, WithOriginFormatAndParseBack) {
  PartialOrigin origin{.task = "task_1_0001_m_000000",
                       .attempt = "attempt_1_0001_m_000000_1",
                       .started_ms = 1765000000123,
                       .lines = 2};
  std::string line;
  AppendPartialRecord(line, "http://a/x", Example(), origin);
  std::string plain;
  AppendPartialRecord(plain, "http://a/x", Example());
  EXPECT_EQ(line,
            "http://a/x\t#ha1 task_1_0001_m_000000 attempt_1_0001_m_000000_1 1765000000123 2" +
                plain.substr(plain.find(' ')));

  ParsedRecord record = ParseRecordLine(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_EQ(record.kind, RecordKind::kPartial) << record.error;
  ASSERT_TRUE(record.origin.has_value());
  EXPECT_EQ(record.origin->task, "task_1_0001_m_000000");
  EXPECT_EQ(record.origin->attempt, "attempt_1_0001_m_000000_1");
  EXPECT_EQ(record.origin->started_ms, 1765000000123);
  EXPECT_EQ(record.origin->lines, 2u);
  KeyStats stats;
  ASSERT_TRUE(ParsePartialFields(record.partial, &stats).ok());
  EXPECT_EQ(stats.count, 2u);
  EXPECT_EQ(stats.errors, 4u);
  EXPECT_FALSE(ParseRecordLine("k\t#hp1 0 1 0 - - - x").origin.has_value());
}

// Names are written so that they parse back: spaces and control bytes become '_', an empty
// name "-", a long one is cut.
TEST(PartialTest, OriginNamesAreMadeParseable) {
  const std::string long_name = std::string(300, 'a') + " b";
  PartialOrigin origin{.task = "", .attempt = long_name, .lines = 1};
  std::string line;
  AppendPartialRecord(line, "k", Example(), origin);
  ParsedRecord record = ParseRecordLine(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_EQ(record.kind, RecordKind::kPartial) << record.error;
  EXPECT_EQ(record.origin->task, "-");
  EXPECT_EQ(record.origin->attempt, std::string(kMaxOriginFieldBytes, 'a'));
  line.clear();
  origin = {.task = "pod 1\r", .attempt = "x", .lines = 1};
  AppendPartialRecord(line, "k", Example(), origin);
  EXPECT_EQ(ParseRecordLine(std::string_view(line).substr(0, line.size() - 1)).origin->task,
            "pod_1_");
}

TEST(PartialTest, MalformedOrigins) {
  const std::string fields = " 0 1 0 - - - " + Histogram().EncodeBase64();
  const std::pair<std::string, std::string> cases[] = {
      {"k\t#ha1 t a 1", "#ha1: too few fields"},
      {"k\t#ha1 t a x 1" + fields, "#ha1: started_ms is not 1-15 digits"},
      {"k\t#ha1 t a 1 0" + fields, "#ha1: lines is not a count above 0"},
      {"k\t#ha1 " + std::string(257, 't') + " a 1 1" + fields,
       "#ha1: task and attempt must be 1-256 bytes without TAB, CR or LF"},
      {"k\t#hx1 t a 1 1" + fields, "unknown partial format (expected #hp1 or #ha1)"},
  };
  for (const auto& [line, error] : cases) {
    ParsedRecord record = ParseRecordLine(line);
    EXPECT_EQ(record.kind, RecordKind::kMalformed) << line;
    EXPECT_EQ(std::string(record.error), error) << line;
  }
}

}  // namespace
}  // namespace hammer::stats
