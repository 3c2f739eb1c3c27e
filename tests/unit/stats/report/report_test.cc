#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "hammer/stats/partial.h"
#include "hammer/stats/record.h"
#include "hammer/stats/report/csv.h"
#include "hammer/stats/report/hdr.h"
#include "hammer/stats/report/json.h"
#include "hammer/stats/report/table.h"
#include "hammer/stats/report/tsv.h"

namespace hammer::stats {
namespace {

KeyStats Stats(std::initializer_list<int64_t> micros, int failures = 0) {
  KeyStats stats;
  for (int64_t m : micros)
    stats.RecordSuccess(m);
  for (int i = 0; i < failures; ++i)
    stats.RecordFailure(std::nullopt);
  return stats;
}

TEST(ReducerLineTest, SeedColumnsThenOurs) {
  KeyStats stats = Stats({12345, 1000}, 1);
  std::string line;
  AppendReducerLine(line, "http://a/x", stats);
  EXPECT_EQ(line,
            // p90 and above: the bucket's top, 0.012351, held within the exact max.
            "http://a/x\t0.013345\t0.006673\t0.012345\t0.001000\t1\t2\t0.001000\t0.012345\t"
            "0.012345\t0.012345\t" +
                stats.histogram.EncodeBase64() + "\n");

  line.clear();
  AppendReducerLine(line, "only\tfailures", Stats({}, 3));
  EXPECT_EQ(line,
            "only failures\t0.000000\t\t\t\t3\t0\t\t\t\t\t" + Histogram().EncodeBase64() + "\n");
}

// A reducer line reads back as the partial of the very same figures (failure types aside).
TEST(ReducerLineTest, ReadsBackAsAPartial) {
  for (const KeyStats& stats : {Stats({12345, 1000, 7}, 2), Stats({}, 3), Stats({5}, 0)}) {
    std::string line;
    AppendReducerLine(line, "http://a/x", stats);
    line.pop_back();
    ASSERT_TRUE(IsReducerLine(line));
    Result<std::string> partial = ReducerLineAsPartial(line);
    ASSERT_TRUE(partial.ok()) << partial.status().message();
    ParsedRecord record = ParseRecordLine(*partial);
    ASSERT_EQ(record.kind, RecordKind::kPartial) << *partial;
    EXPECT_EQ(record.key, "http://a/x");
    KeyStats back;
    ASSERT_TRUE(ParsePartialFields(record.partial, &back).ok());
    EXPECT_EQ(back, stats) << line;  // Stats() records untyped failures, as a reducer line keeps
  }
  EXPECT_FALSE(IsReducerLine("k\t0.001"));
  EXPECT_FALSE(IsReducerLine("k\t0.1\t0.1\t0.1\t0.1\t0\t1"));  // the seed's seven columns
  EXPECT_EQ(ReducerLineAsPartial("k\tx\t\t\t\t0\t0\t\t\t\t\tHIST").status().message(),
            "reducer line: bad sum column");
  EXPECT_EQ(ReducerLineAsPartial("k\t0\t\t\t\t0\t0\t\t\t\t\tnot-base64").status().message(),
            "reducer line: bad histogram column");
}

TEST(ReducerLineTest, MeanRoundsHalfUpToTheMicrosecond) {
  EXPECT_EQ(RoundedMeanMicros(Stats({1, 2})), 2);        // 1.5
  EXPECT_EQ(RoundedMeanMicros(Stats({1, 1, 1, 2})), 1);  // 1.25
  EXPECT_EQ(RoundedMeanMicros(Stats({0, 1, 1})), 1);     // 0.667
  EXPECT_EQ(RoundedMeanMicros(Stats({})), 0);
}

TEST(CsvTest, HeaderRowsAndQuoting) {
  std::string out;
  AppendCsvHeader(out);
  EXPECT_EQ(out, "key,sum,average,max,min,errors,count,p50,p90,p99,p99.9,histogram\n");
  out.clear();
  AppendCsvRow(out, "http://a/?q=1,2&s=\"x\"", Stats({1000000}));
  EXPECT_EQ(out.substr(0, out.find(",H")),
            "\"http://a/?q=1,2&s=\"\"x\"\"\",1.000000,1.000000,1.000000,1.000000,0,1,1.000000,"
            "1.000000,1.000000,1.000000");  // percentiles held within the exact max
}

TEST(CsvTest, ConvertsReducerLinesLikeTheSeed) {
  // The seed reducer's own output (7 columns; it never set max).
  std::string out;
  ASSERT_TRUE(LooksLikeReducerLine("http://a\t0.35\t0.175\t\t0.2\t1\t2"));
  EXPECT_TRUE(AppendCsvRowFromReducerLine(out, "http://a\t0.35\t0.175\t\t0.2\t1\t2"));
  EXPECT_EQ(out, "http://a,0.35,0.175,,0.2,1,2,,,,,\n");
  out.clear();
  std::string ours;
  AppendReducerLine(ours, "k", Stats({5}));
  ours.pop_back();
  EXPECT_TRUE(AppendCsvRowFromReducerLine(out, ours + "\r"));
  EXPECT_EQ(std::count(out.begin(), out.end(), ','), 11);
  out.clear();
  EXPECT_FALSE(AppendCsvRowFromReducerLine(out, "a\tb\tc"));
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(LooksLikeReducerLine("k\t0.5"));
  // Every record form hammer load writes is a record, not a reducer line.
  EXPECT_FALSE(LooksLikeReducerLine("k\t0.5\t1764428700999"));
  EXPECT_FALSE(LooksLikeReducerLine("k\t\t1764428700999"));
  EXPECT_FALSE(LooksLikeReducerLine("k\t\ttimeout"));
  EXPECT_FALSE(LooksLikeReducerLine("k\t\t1764428700999\ttimeout"));
  EXPECT_FALSE(LooksLikeReducerLine("k"));
}

TEST(JsonTest, KeysTotalAndMalformedCount) {
  std::vector<std::pair<std::string, KeyStats>> rows;
  rows.emplace_back("a", Stats({1000, 3000}));
  KeyStats failed = Stats({}, 2);
  failed.failures.Add(Failure::kTimeout);
  rows.emplace_back("bad\xff", failed);
  nlohmann::json j = nlohmann::json::parse(FormatJsonReport(rows, 4));
  EXPECT_EQ(j["schema"], "hammer.summary.v1");
  EXPECT_EQ(j["command"], "stats");
  ASSERT_EQ(j["keys"].size(), 2u);
  EXPECT_EQ(j["keys"][0]["key"], "a");
  EXPECT_EQ(j["keys"][0]["requests"], 2);
  EXPECT_EQ(j["keys"][0]["succeeded"], 2);
  EXPECT_EQ(j["keys"][0]["failed"], 0);
  EXPECT_EQ(j["keys"][0]["sum_us"], 4000);
  EXPECT_EQ(j["keys"][0]["latency"]["mean_us"], 2000.0);
  EXPECT_EQ(j["keys"][0]["latency"]["min_us"], 1000);
  EXPECT_EQ(j["keys"][0]["latency"]["max_us"], 3000);
  EXPECT_EQ(j["keys"][0]["latency"]["p50_us"], 1000);
  // 3000's bucket ends at 3001; percentiles stay within the exact [min, max].
  EXPECT_EQ(j["keys"][0]["latency"]["p99_9_us"], 3000);
  EXPECT_EQ(j["keys"][1]["key"], "bad\xEF\xBF\xBD");
  EXPECT_TRUE(j["keys"][1]["latency"].is_null());
  // One failure has a type, the other came from a seed record without one.
  EXPECT_EQ(j["keys"][1]["failures"], nlohmann::json({{"timeout", 1}, {"untyped", 1}}));
  EXPECT_EQ(j["requests"], 4);
  EXPECT_EQ(j["succeeded"], 2);
  EXPECT_EQ(j["failed"], 2);
  EXPECT_EQ(j["thresholds"], nlohmann::json::array());
  EXPECT_EQ(j["malformed_lines"], 4);
  EXPECT_TRUE(Histogram::DecodeBase64(j["histogram"].get<std::string>()).ok());
}

TEST(TableTest, SortedByRequestsWithTotal) {
  std::vector<std::pair<std::string, KeyStats>> rows;
  rows.emplace_back("http://127.0.0.1/a", Stats({100, 1200, 2500, 9700}, 1));
  rows.emplace_back("http://127.0.0.1/b", Stats({12000, 15000}));
  rows.emplace_back("http://127.0.0.1/c", Stats({}, 1));
  EXPECT_EQ(FormatKeyTable(rows, 0),
            "key                 requests  ok  errors  min ms  p50 ms  p90 ms  p99 ms  max ms\n"
            "http://127.0.0.1/a         5   4       1   0.100   1.200   9.700   9.700   9.700\n"
            "http://127.0.0.1/b         2   2       0  12.000  12.007  15.000  15.000  15.000\n"
            "http://127.0.0.1/c         1   0       1       -       -       -       -       -\n"
            "TOTAL                      8   6       2   0.100   2.501  15.000  15.000  15.000\n");
  EXPECT_EQ(FormatKeyTable(rows, 1),
            "key                 requests  ok  errors  min ms  p50 ms  p90 ms  p99 ms  max ms\n"
            "http://127.0.0.1/a         5   4       1   0.100   1.200   9.700   9.700   9.700\n"
            "\xE2\x80\xA6 2 more keys\n"
            "TOTAL                      8   6       2   0.100   2.501  15.000  15.000  15.000\n");
}

// 5442 µs is in the bucket [5440, 5443]: the histogram's p99 is 5443, above the exact max.
TEST(ReducerLineTest, PercentilesNeverExceedTheExactMax) {
  std::string line;
  AppendReducerLine(line, "k", Stats({1000, 5442}));
  std::vector<std::string_view> fields;
  for (std::string_view rest = line; !rest.empty();) {
    size_t tab = rest.find_first_of("\t\n");
    fields.push_back(rest.substr(0, tab));
    rest.remove_prefix(tab + 1);
  }
  ASSERT_EQ(fields.size(), 12u);
  EXPECT_EQ(fields[3], "0.005442");   // max
  EXPECT_EQ(fields[7], "0.001000");   // p50
  EXPECT_EQ(fields[8], "0.005442");   // p90
  EXPECT_EQ(fields[9], "0.005442");   // p99
  EXPECT_EQ(fields[10], "0.005442");  // p99.9
}

TEST(TableTest, PercentilesNeverExceedTheExactMax) {
  std::vector<std::pair<std::string, KeyStats>> rows;
  rows.emplace_back("k", Stats({12345}));  // bucket [12344, 12351]
  EXPECT_EQ(FormatKeyTable(rows, 0),
            "key    requests  ok  errors  min ms  p50 ms  p90 ms  p99 ms  max ms\n"
            "k             1   1       0  12.345  12.345  12.345  12.345  12.345\n"
            "TOTAL         1   1       0  12.345  12.345  12.345  12.345  12.345\n");
}

TEST(TableTest, LongKeysAreShortenedInTheMiddle) {
  std::vector<std::pair<std::string, KeyStats>> rows;
  std::string key = "http://example.com/" + std::string(100, 'x') + "/end\xC3\xA9";
  rows.emplace_back(key, Stats({1}));
  std::string table = FormatKeyTable(rows, 0);
  std::string first_cell = table.substr(table.find('\n') + 1);
  first_cell = first_cell.substr(0, first_cell.find("  "));
  EXPECT_EQ(first_cell,
            "http://example.com/xxxxxxxxxx\xE2\x80\xA6xxxxxxxxxxxxxxxxxxxxxxxxx/end\xC3\xA9");
}

// HdrHistogram Java 2.2.2 outputPercentileDistribution(System.out, 1000.0) of the histogram
// holding 0 1 1023 1024 2047 2048 10000x3 123456 3600000000 (integrations/jvm/hdr-check).
constexpr const char* kJavaDistribution =
    "       Value     Percentile TotalCount 1/(1-Percentile)\n"
    "\n"
    "       0.000 0.000000000000          1           1.00\n"
    "       0.001 0.100000000000          2           1.11\n"
    "       1.023 0.200000000000          3           1.25\n"
    "       1.024 0.300000000000          4           1.43\n"
    "       2.047 0.400000000000          5           1.67\n"
    "       2.049 0.500000000000          6           2.00\n"
    "      10.007 0.550000000000          9           2.22\n"
    "      10.007 0.600000000000          9           2.50\n"
    "      10.007 0.650000000000          9           2.86\n"
    "      10.007 0.700000000000          9           3.33\n"
    "      10.007 0.750000000000          9           4.00\n"
    "      10.007 0.775000000000          9           4.44\n"
    "      10.007 0.800000000000          9           5.00\n"
    "     123.519 0.825000000000         10           5.71\n"
    "     123.519 0.850000000000         10           6.67\n"
    "     123.519 0.875000000000         10           8.00\n"
    "     123.519 0.887500000000         10           8.89\n"
    "     123.519 0.900000000000         10          10.00\n"
    " 3600809.983 0.912500000000         11          11.43\n"
    " 3600809.983 1.000000000000         11\n"
    "#[Mean    =   327265.550, StdDeviation   =  1034854.055]\n"
    "#[Max     =  3600809.983, Total count    =           11]\n"
    "#[Buckets =           22, SubBuckets     =         2048]\n";

TEST(HdrTest, MatchesHdrHistogramJava) {
  Histogram h;
  for (int64_t v : {0, 1, 1023, 1024, 2047, 2048})
    h.Record(v);
  h.RecordN(10000, 3);
  h.Record(123456);
  h.Record(3600000000);
  EXPECT_EQ(FormatPercentileDistribution(h), kJavaDistribution);
  EXPECT_EQ(FormatPercentileDistribution(Histogram()),
            "       Value     Percentile TotalCount 1/(1-Percentile)\n\n"
            "#[Mean    =        0.000, StdDeviation   =        0.000]\n"
            "#[Max     =        0.000, Total count    =            0]\n"
            "#[Buckets =           22, SubBuckets     =         2048]\n");
}

TEST(HdrTest, OneKeyIsPlainSeveralAreLabelled) {
  std::vector<std::pair<std::string, KeyStats>> rows;
  rows.emplace_back("a", Stats({1}));
  EXPECT_EQ(FormatHdrReport(rows), FormatPercentileDistribution(rows[0].second.histogram));
  rows.emplace_back("b", Stats({2}));
  std::string report = FormatHdrReport(rows);
  EXPECT_EQ(report.substr(0, 4), "# a\n");
  EXPECT_NE(report.find("\n\n# b\n"), std::string::npos);
}

TEST(HdrTest, JavaFixedFormatting) {
  auto fixed = [](double v, int decimals, int width) {
    std::string out;
    AppendJavaFixed(out, v, decimals, width);
    return out;
  };
  EXPECT_EQ(fixed(1.0005, 3, 0), "1.001");  // HALF_UP on the shortest digits "1.0005"
  EXPECT_EQ(fixed(0.125, 2, 0), "0.13");
  EXPECT_EQ(fixed(2.5, 0, 0), "3");
  EXPECT_EQ(fixed(9.9996, 3, 8), "  10.000");
  EXPECT_EQ(fixed(0.1, 12, 2), "0.100000000000");
  EXPECT_EQ(fixed(1e-7, 3, 0), "0.000");
  EXPECT_EQ(fixed(123456789012.5, 2, 0), "123456789012.50");
  EXPECT_EQ(fixed(-1.5, 1, 6), "  -1.5");
  EXPECT_EQ(fixed(1.0 / 0.0, 2, 10), "  Infinity");
}

}  // namespace
}  // namespace hammer::stats
