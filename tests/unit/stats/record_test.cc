#include "hammer/stats/record.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace hammer::stats {
namespace {

int64_t Micros(std::string_view text) {
  int64_t micros = -1;
  EXPECT_TRUE(ParseSeconds(text, &micros)) << text;
  return micros;
}

TEST(ParseSecondsTest, HammerAndSeedFormats) {
  EXPECT_EQ(Micros("0.012345"), 12345);  // hammer load
  EXPECT_EQ(Micros("0.000000"), 0);
  EXPECT_EQ(Micros("0"), 0);
  EXPECT_EQ(Micros("12"), 12000000);
  EXPECT_EQ(Micros("0.5"), 500000);
  EXPECT_EQ(Micros("3.25"), 3250000);
  EXPECT_EQ(Micros("999999999999.999999"), 999999999999999999);  // exact, beyond a double
  // Ruby's Float#to_s, as the seed mapper prints Time.now - start_time.
  EXPECT_EQ(Micros("0.123456789"), 123457);
  EXPECT_EQ(Micros("0.1234564"), 123456);
  EXPECT_EQ(Micros("0.0000005"), 1);  // halves up, decided on the digits, not on a double
  EXPECT_EQ(Micros("0.00000049999999999"), 0);
  EXPECT_EQ(Micros("0.015702539494764276"), 15703);
  EXPECT_EQ(Micros("1.9999995"), 2000000);
  EXPECT_EQ(Micros("1.0e-05"), 10);
  EXPECT_EQ(Micros("2.5e-05"), 25);
  EXPECT_EQ(Micros("9.99e-07"), 1);
  EXPECT_EQ(Micros("4.0e-07"), 0);
  EXPECT_EQ(Micros("1.5e+01"), 15000000);
  EXPECT_EQ(Micros("1.5E2"), 150000000);
  EXPECT_EQ(Micros(".5"), 500000);
  EXPECT_EQ(Micros("5."), 5000000);
  EXPECT_EQ(Micros("00.25"), 250000);
}

TEST(ParseSecondsTest, RejectsEverythingElse) {
  const std::string_view bad[] = {
      "",
      "-1",
      "-0",
      "-0.5",
      "+1",
      "nan",
      "NaN",
      "-nan",
      "inf",
      "Infinity",
      "1e400",
      "1e12",
      "1000000000000",
      "0x10",
      " 1",
      "1 ",
      "1\t2",
      "abc",
      "1,5",
      "1.2.3",
      "e5",
      ".",
      "1e",
      "0.5s",
      "1.2.",
      "0.1234567x",
      std::string_view("0.5\0", 4),
      "\xff\xfe\x01",
      "\xc3\xa9",
      "١",
  };
  for (std::string_view text : bad) {
    int64_t micros = 0;
    EXPECT_FALSE(ParseSeconds(text, &micros)) << text;
  }
}

TEST(AppendSecondsTest, SixDecimals) {
  std::string out;
  for (int64_t micros : {int64_t{0}, int64_t{12345}, int64_t{1234567890}, int64_t{-1500000}}) {
    AppendSeconds(out, micros);
    out += ' ';
  }
  EXPECT_EQ(out, "0.000000 0.012345 1234.567890 -1.500000 ");
}

// TAB, LF and CR at every position of keys shorter than a word, of a word and of the last word
// the quick look reads (which overlaps the one before) become spaces; every other byte, other
// control characters up to '\r' and bytes from 0x80 up included, is kept.
TEST(AppendSanitizedKeyTest, EveryByteAtEveryPosition) {
  for (size_t length = 1; length <= 19; ++length) {
    for (size_t at = 0; at < length; ++at) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string key(length, 'k');
        key[at] = static_cast<char>(byte);
        std::string expected = "prefix" + key;
        if (byte == '\t' || byte == '\n' || byte == '\r') expected[6 + at] = ' ';
        std::string out = "prefix";
        AppendSanitizedKey(out, key);
        EXPECT_EQ(out, expected) << byte << " at " << at << " of " << length;
      }
    }
  }
}

TEST(RecordTest, WrittenRecordsParseBack) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 10000; ++i) {
    int64_t micros = static_cast<int64_t>(rng() % 4000000000000);
    std::string line;
    AppendSuccessRecord(line, "http://h/p?q=1\tx", micros);
    ASSERT_EQ(line.back(), '\n');
    line.pop_back();
    ParsedRecord record = ParseRecordLine(line);
    ASSERT_EQ(record.kind, RecordKind::kSuccess) << line;
    EXPECT_EQ(record.key, "http://h/p?q=1 x");
    EXPECT_EQ(record.micros, micros);
  }
  std::string failure;
  AppendFailureRecord(failure, "k\r\n");
  EXPECT_EQ(failure, "k  \t\n");
}

TEST(RecordTest, ParsesEachKind) {
  ParsedRecord r = ParseRecordLine("http://a/b\t0.012345");
  EXPECT_EQ(r.kind, RecordKind::kSuccess);
  EXPECT_EQ(r.key, "http://a/b");
  EXPECT_EQ(r.micros, 12345);

  r = ParseRecordLine("http://a/b\t");
  EXPECT_EQ(r.kind, RecordKind::kFailure);
  EXPECT_EQ(r.key, "http://a/b");

  r = ParseRecordLine("k\t\r");  // CRLF input: Ruby's chomp drops the CR
  EXPECT_EQ(r.kind, RecordKind::kFailure);
  r = ParseRecordLine("k\t0.5\r");
  EXPECT_EQ(r.kind, RecordKind::kSuccess);
  EXPECT_EQ(r.micros, 500000);

  r = ParseRecordLine("\t1");
  EXPECT_EQ(r.kind, RecordKind::kSuccess);
  EXPECT_EQ(r.key, "");

  r = ParseRecordLine("k\t#hp1 1 0 5 5 5 - HIST");
  EXPECT_EQ(r.kind, RecordKind::kPartial);
  EXPECT_EQ(r.partial, "1 0 5 5 5 - HIST");
}

void ExpectMalformed(std::string_view line) {
  ParsedRecord r = ParseRecordLine(line);
  EXPECT_EQ(r.kind, RecordKind::kMalformed) << line.substr(0, 80);
  EXPECT_NE(std::string_view(r.error), "");
}

TEST(RecordTest, MalformedLines) {
  ExpectMalformed("");
  ExpectMalformed("no tab at all");
  ExpectMalformed("k 0.5");
  ExpectMalformed("k\t-0.5");
  ExpectMalformed("k\tnan");
  ExpectMalformed("k\tinf");
  ExpectMalformed("k\tabc");
  ExpectMalformed("k\t0.5\t");
  ExpectMalformed("k\t0.5 ");
  ExpectMalformed("k\t#hp2 1 0 5 5 5 - HIST");
  ExpectMalformed("k\t#hp1");
  ExpectMalformed("k\t#hp1x");
  ExpectMalformed("k\t#");
  ExpectMalformed(std::string_view("k\t\x00\x01\x02\xff", 6));  // binary value
  ExpectMalformed("k\t\xe2\x82\xac");                           // UTF-8, not a number
  ExpectMalformed("k\t\xc3");                                   // invalid UTF-8

  std::string key(kMaxKeyBytes, 'k');
  EXPECT_EQ(ParseRecordLine(key + "\t0.5").kind, RecordKind::kSuccess);
  ExpectMalformed(key + "k\t0.5");
  ExpectMalformed(std::string(1 << 20, 'k') + "\t0.5");  // 1 MiB key
  ExpectMalformed("k\t" + std::string(kMaxValueBytes + 1, '1'));
}

TEST(RecordTest, TimestampedRecords) {
  ParsedRecord r = ParseRecordLine("http://a/b\t0.012345\t1764428700123");
  EXPECT_EQ(r.kind, RecordKind::kSuccess);
  EXPECT_EQ(r.key, "http://a/b");
  EXPECT_EQ(r.micros, 12345);
  EXPECT_TRUE(r.has_epoch_ms);
  EXPECT_EQ(r.epoch_ms, 1764428700123);

  r = ParseRecordLine("http://a/b\t\t1764428700123\r");
  EXPECT_EQ(r.kind, RecordKind::kFailure);
  EXPECT_TRUE(r.has_epoch_ms);
  EXPECT_EQ(r.epoch_ms, 1764428700123);

  r = ParseRecordLine("k\t0.5");  // the two-field form carries no time
  EXPECT_EQ(r.kind, RecordKind::kSuccess);
  EXPECT_FALSE(r.has_epoch_ms);
  r = ParseRecordLine("k\t");
  EXPECT_EQ(r.kind, RecordKind::kFailure);
  EXPECT_FALSE(r.has_epoch_ms);
  EXPECT_EQ(ParseRecordLine("k\t1.0e-05\t0").epoch_ms, 0);
  EXPECT_EQ(ParseRecordLine("k\t1\t999999999999999").epoch_ms, kMaxEpochMs);

  for (std::string_view bad :
       {"k\t0.5\t", "k\t\t", "k\t0.5\t-1", "k\t0.5\t1.5", "k\t0.5\t12 ", "k\t0.5\t1e3",
        "k\t0.5\t1000000000000000", "k\t0.5\t1\t2", "k\t\t\t1", "k\tx\t1", "k\t\tabc"}) {
    ExpectMalformed(bad);
  }
}

TEST(RecordTest, TimestampedRecordsWrittenAndParsedBack) {
  std::string out;
  AppendSuccessRecord(out, "k\tx", 12345, 1764428700123);
  AppendFailureRecord(out, "k", 1764428700999);
  AppendSuccessRecord(out, "k", 1, std::nullopt);
  AppendFailureRecord(out, "k", std::nullopt);
  AppendSuccessRecord(out, "k", 1, -5);
  EXPECT_EQ(out,
            "k x\t0.012345\t1764428700123\n"
            "k\t\t1764428700999\n"
            "k\t0.000001\n"
            "k\t\n"
            "k\t0.000001\t0\n");
  std::string_view rest = out;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    EXPECT_NE(ParseRecordLine(rest.substr(0, end)).kind, RecordKind::kMalformed);
    rest.remove_prefix(end + 1);
  }
}

TEST(RecordTest, TypedFailureRecordsWrittenAndParsedBack) {
  std::string out;
  AppendFailureRecord(out, "k", std::nullopt, Failure::kTimeout);
  AppendFailureRecord(out, "k", 1764428700999, Failure::kHttp5xx);
  AppendFailureRecord(out, "k", std::nullopt, std::nullopt);
  EXPECT_EQ(out, "k\t\ttimeout\nk\t\t1764428700999\thttp_5xx\nk\t\n");
  ParsedRecord typed = ParseRecordLine("k\t\ttimeout");
  EXPECT_EQ(typed.kind, RecordKind::kFailure);
  EXPECT_EQ(typed.failure, Failure::kTimeout);
  EXPECT_FALSE(typed.has_epoch_ms);
  ParsedRecord timed = ParseRecordLine("k\t\t1764428700999\thttp_5xx");
  EXPECT_EQ(timed.kind, RecordKind::kFailure);
  EXPECT_EQ(timed.failure, Failure::kHttp5xx);
  EXPECT_TRUE(timed.has_epoch_ms);
  EXPECT_EQ(timed.epoch_ms, 1764428700999);
  ParsedRecord untyped = ParseRecordLine("k\t\t1764428700999");
  EXPECT_EQ(untyped.kind, RecordKind::kFailure);
  EXPECT_FALSE(untyped.failure.has_value());
  for (std::string_view bad : {"k\t\tnot_a_type", "k\t\t1764428700999\tbogus",
                               "k\t\t1764428700999\t", "k\t\t17x\ttimeout"}) {
    EXPECT_EQ(ParseRecordLine(bad).kind, RecordKind::kMalformed) << bad;
  }
}

TEST(RecordTest, AbortNoteWrittenAndParsedBack) {
  std::string line;
  AppendAbortNote(line, "threshold errors<5% failed\ton the fleet's figures\n");
  EXPECT_EQ(line, "(aborted)\t#hab1 threshold errors<5% failed on the fleet's figures \n");
  std::string_view text;
  ASSERT_TRUE(ParseAbortNote(std::string_view(line).substr(0, line.size() - 1), &text));
  EXPECT_EQ(text, "threshold errors<5% failed on the fleet's figures ");
  EXPECT_TRUE(ParseAbortNote("(aborted)\t#hab1 x\r", &text));
  EXPECT_EQ(text, "x");
  EXPECT_FALSE(ParseAbortNote("(aborted)\t#hp1 x", &text));
  EXPECT_FALSE(ParseAbortNote("(aborted)\t#hab1", &text));
  EXPECT_FALSE(ParseAbortNote("aborted\t#hab1 x", &text));
  // A reader that does not know the note counts it as malformed, never as figures.
  EXPECT_EQ(ParseRecordLine("(aborted)\t#hab1 x").kind, RecordKind::kMalformed);
}

}  // namespace
}  // namespace hammer::stats
