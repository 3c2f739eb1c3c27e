// LoadSummaryJson prints its key rows as text: the document is what nlohmann prints for the same
// values (but each key row on one line), with every row, in order, whatever the number of rows.
#include "hammer/load/load_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "../stats/report/one_line_reference.h"

namespace hammer::load {
namespace {

using Json = nlohmann::ordered_json;

// N rows of varied shapes: latencies of one and many samples, failures typed and untyped, a
// row with failures only (its latency is null), keys that need escaping or are not UTF-8.
LoadSummary SummaryWithRows(size_t n) {
  LoadSummary summary;
  for (size_t i = 0; i < n; ++i) {
    std::string key = "http://127.0.0.1:8080/item/" + std::to_string(i);
    if (i % 97 == 5) key += "?q=\"quoted\"\\";
    if (i % 89 == 7) key += "/caf\xc3\xa9/\xff";
    stats::KeyStats stats;
    if (i % 41 != 3) {
      for (size_t j = 0; j <= i % 7; ++j)
        stats.RecordSuccess(static_cast<int64_t>(100 + i * 13 + j * 1009));
    }
    if (i % 11 == 0) stats.RecordFailure(Failure::kTimeout);
    if (i % 13 == 0) stats.RecordFailure(std::nullopt);
    summary.total.Merge(stats);
    summary.keys.emplace_back(std::move(key), std::move(stats));
  }
  summary.succeeded = summary.total.count;
  summary.failed = summary.total.errors;
  summary.seconds = 1.5;
  return summary;
}

TEST(LoadReportTest, SaysWhenMostKeysHadOneRequestUnlessTheyWereFolded) {
  LoadSummary summary;
  for (int i = 0; i < 150; ++i) {
    stats::KeyStats stats;
    stats.RecordSuccess(100 + i);
    summary.total.Merge(stats);
    summary.keys.emplace_back("http://127.0.0.1:8080/item/" + std::to_string(i), stats);
  }
  summary.succeeded = summary.total.count;
  summary.seconds = 1.5;
  const std::string hint =
      "  keys         each of the 150 keys had one request: group them into fewer rows with "
      "--key-pattern REGEX=NAME, or by path template with --max-keys below 150\n";
  EXPECT_NE(FormatLoadSummary(summary, false, 10).find(hint), std::string::npos)
      << FormatLoadSummary(summary, false, 10);
  // Rows that are templates already (a folded table) get the folding's sentence instead.
  summary.key_folding.folded = true;
  summary.key_folding.max_keys = 100;
  summary.key_folding.distinct_keys = 200;
  summary.key_folding.rows = 150;
  const std::string folded = FormatLoadSummary(summary, false, 10);
  EXPECT_EQ(folded.find("had one request"), std::string::npos) << folded;
  EXPECT_NE(folded.find("exceeded --max-keys 100"), std::string::npos) << folded;
  // Two requests a key: nothing to say.
  summary.key_folding = stats::KeyFolding();
  for (auto& [key, stats] : summary.keys)
    stats.RecordSuccess(200);
  EXPECT_EQ(FormatLoadSummary(summary, false, 10).find("  keys "), std::string::npos);
}

TEST(LoadReportTest, KeyRowsAreWhatNlohmannPrintsAtEveryCount) {
  for (size_t n : {0, 1, 2, 1999, 5003}) {
    const LoadSummary summary = SummaryWithRows(n);
    const std::string text = LoadSummaryJson(summary);
    ASSERT_TRUE(Json::accept(text)) << n << " rows";
    const Json parsed = Json::parse(text);
    // Printed again from the tree (nlohmann's dump(2), each key row on one line; invalid
    // UTF-8 already replaced): the same bytes.
    EXPECT_EQ(text, stats::OneLineReference(parsed, 0, 2) + "\n") << n << " rows";
    // After "keys": "[]\n}\n", or "[" and a line a row, "]" and "}" on lines of their own.
    const std::string_view rows_on = std::string_view(text).substr(text.find("\"keys\""));
    EXPECT_EQ(static_cast<size_t>(std::count(rows_on.begin(), rows_on.end(), '\n')),
              n == 0 ? 2 : n + 3)
        << n << " rows";
    const Json& keys = parsed["keys"];
    ASSERT_EQ(keys.size(), n);
    uint64_t requests = 0;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(keys[i]["requests"], summary.keys[i].second.total()) << "row " << i;
      if (summary.keys[i].first.find('\xff') == std::string::npos) {
        ASSERT_EQ(keys[i]["key"], summary.keys[i].first) << "row " << i;
      }
      requests += keys[i]["requests"].get<uint64_t>();
    }
    EXPECT_EQ(requests, parsed["requests"].get<uint64_t>()) << n << " rows";
  }
}

// Many rows: every row is there once, in order, a line each, with a comma after all but the
// last.
TEST(LoadReportTest, ManyRowsStayInOrder) {
  constexpr size_t kRows = 51001;
  LoadSummary summary;
  for (size_t i = 0; i < kRows; ++i) {
    stats::KeyStats stats;
    stats.RecordSuccess(static_cast<int64_t>(100 + i % 1000));
    summary.total.Merge(stats);
    summary.keys.emplace_back("http://127.0.0.1:8080/item/" + std::to_string(i), std::move(stats));
  }
  const std::string text = LoadSummaryJson(summary);
  const size_t opened = text.find("\"keys\": [\n");
  ASSERT_NE(opened, std::string::npos);
  size_t line = text.find('\n', opened) + 1;
  for (size_t i = 0; i < kRows; ++i) {
    const size_t end = text.find('\n', line);
    ASSERT_NE(end, std::string::npos) << "row " << i;
    const std::string_view row(text.data() + line, end - line);
    const std::string start = "    {\"key\": \"" + summary.keys[i].first + "\", \"requests\": 1,";
    ASSERT_EQ(row.substr(0, start.size()), start) << "row " << i;
    ASSERT_EQ(row.substr(row.size() - 2), i + 1 < kRows ? "}," : "}}") << "row " << i;
    line = end + 1;
  }
  EXPECT_EQ(text.substr(line), "  ]\n}\n");
}

// The measured part's start and end, as RFC 3339 UTC with microseconds; none for a run that
// never began.
TEST(LoadReportTest, SaysWhenTheRunBeganAndEnded) {
  LoadSummary summary = SummaryWithRows(1);
  EXPECT_FALSE(Json::parse(LoadSummaryJson(summary)).contains("started_at"));
  summary.wall_start_us = 1'764'694'036'000'042;  // 2025-12-02T16:47:16.000042Z
  summary.wall_end_us = 1'764'694'097'999'999;
  const Json parsed = Json::parse(LoadSummaryJson(summary));
  EXPECT_EQ(parsed["started_at"], "2025-12-02T16:47:16.000042Z");
  EXPECT_EQ(parsed["ended_at"], "2025-12-02T16:48:17.999999Z");
}

}  // namespace
}  // namespace hammer::load
