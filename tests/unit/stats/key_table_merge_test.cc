// The end of a load: the workers' tables merged by move, in order, into an empty KeyTable, then
// its Folding() and TakeRows(). While the union fits, each key gets exactly what one table that
// saw every record gives it, in key order; past max_keys or max_bytes the union folds.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hammer/stats/key_table.h"

namespace hammer::stats {
namespace {

using Rows = std::vector<std::pair<std::string, KeyStats>>;

struct Taken {
  Rows rows;
  KeyFolding folding;
};

Taken MergedThenTaken(std::vector<KeyTable> tables, size_t max_keys, uint64_t max_bytes) {
  KeyTable merged(max_keys, max_bytes);
  for (KeyTable& table : tables) {
    merged.Merge(std::move(table));
    EXPECT_EQ(table.size(), 0u);
  }
  Taken taken;
  taken.folding = merged.Folding();
  taken.rows = merged.TakeRows();
  return taken;
}

std::string Url(int i) {
  return "http://127.0.0.1:18090/item/" + std::to_string(i) + "?ref=" + std::to_string(i * 7);
}

// Records key i's requests into `table` as worker `w`: some keys' first record is a failure,
// untyped (a seed record) or not, and some have a timeout after their success.
void RecordKey(KeyTable& table, int i, int w) {
  const std::string key = Url(i);
  if (i % 7 == 3) table.StatsFor(key)->RecordFailure(std::nullopt);
  table.StatsFor(key)->RecordSuccess(100 + i % 37 + w);
  if (i % 5 == 0) table.StatsFor(key)->RecordFailure(Failure::kTimeout);
  table.Recorded();
}

// `workers` tables; key i goes to table i % workers, or to every table when `shared(i)`.
std::vector<KeyTable> Workers(int workers, int keys, const std::function<bool(int)>& shared,
                              size_t max_keys = 10000, uint64_t max_bytes = kDefaultMaxKeyBytes) {
  std::vector<KeyTable> tables;
  for (int w = 0; w < workers; ++w)
    tables.emplace_back(max_keys, max_bytes);
  for (int i = 0; i < keys; ++i) {
    for (int w = 0; w < workers; ++w) {
      if (i % workers == w || (shared && shared(i))) RecordKey(tables[w], i, w);
    }
  }
  return tables;
}

// What one table that saw every worker's records gives (without a bound, so that it never
// folds).
Rows OneTable(int workers, int keys, const std::function<bool(int)>& shared) {
  KeyTable table;
  for (int i = 0; i < keys; ++i) {
    for (int w = 0; w < workers; ++w) {
      if (i % workers == w || (shared && shared(i))) RecordKey(table, i, w);
    }
  }
  return table.TakeRows();
}

void ExpectSameAsOneTable(int workers, int keys, const std::function<bool(int)>& shared,
                          size_t max_keys = 10000) {
  SCOPED_TRACE(std::to_string(workers) + " workers, " + std::to_string(keys) + " keys");
  const Taken taken =
      MergedThenTaken(Workers(workers, keys, shared, max_keys), max_keys, kDefaultMaxKeyBytes);
  const Rows expected = OneTable(workers, keys, shared);
  ASSERT_EQ(taken.rows.size(), expected.size());
  for (size_t i = 0; i < taken.rows.size(); ++i) {
    EXPECT_EQ(taken.rows[i].first, expected[i].first) << i;
    EXPECT_EQ(taken.rows[i].second, expected[i].second) << taken.rows[i].first;
  }
  for (size_t i = 1; i < taken.rows.size(); ++i)
    EXPECT_LT(taken.rows[i - 1].first, taken.rows[i].first);
  EXPECT_FALSE(taken.folding.folded);
  EXPECT_EQ(taken.folding.rows, expected.size());
  EXPECT_EQ(taken.folding.distinct_keys, expected.size());
}

TEST(KeyTableMergeTest, DisjointTablesGiveEachKeyItsRow) {
  ExpectSameAsOneTable(2, 3000, nullptr);
  ExpectSameAsOneTable(3, 100, nullptr);
  ExpectSameAsOneTable(1, 50, nullptr);
  ExpectSameAsOneTable(2, 3000, nullptr, /*max_keys=*/0);  // no bound
}

TEST(KeyTableMergeTest, NoTablesOrEmptyOnes) {
  EXPECT_TRUE(MergedThenTaken({}, 10000, kDefaultMaxKeyBytes).rows.empty());
  ExpectSameAsOneTable(2, 0, nullptr);
  ExpectSameAsOneTable(2, 1, nullptr);
}

TEST(KeyTableMergeTest, KeysInSeveralTablesAreMerged) {
  // Every key in both (a list cycled over), and a few keys in several among many that are not.
  ExpectSameAsOneTable(2, 2000, [](int) { return true; });
  ExpectSameAsOneTable(2, 2000, [](int i) { return i == 1999; });
  ExpectSameAsOneTable(3, 2000, [](int i) { return i % 500 == 7; });
  ExpectSameAsOneTable(4, 6000, [](int i) { return i == 4321; });
}

TEST(KeyTableMergeTest, UnionPastMaxKeysFolds) {
  // Each table fits in 1000 keys, the union does not: merging folds it.
  EXPECT_TRUE(
      MergedThenTaken(Workers(2, 1500, nullptr, 1000), 1000, kDefaultMaxKeyBytes).folding.folded);
  // Exactly max_keys keys fit.
  ExpectSameAsOneTable(2, 1000, nullptr, 1000);
}

TEST(KeyTableMergeTest, FoldedTableFoldsTheUnion) {
  const Taken taken = MergedThenTaken(Workers(2, 600, nullptr, 200), 10000, kDefaultMaxKeyBytes);
  EXPECT_TRUE(taken.folding.folded);
  uint64_t requests = 0;
  for (const auto& [key, stats] : taken.rows) {
    EXPECT_NE(key.find("{id}"), std::string::npos) << key;
    requests += stats.total();
  }
  KeyStats expected;
  for (const auto& [key, stats] : OneTable(2, 600, nullptr))
    expected.Merge(stats);
  EXPECT_EQ(requests, expected.total());
}

TEST(KeyTableMergeTest, UnionPastMaxBytesFoldsForMemory) {
  // 2,000 rows of a few hundred bytes each: over a 256 KiB budget together, not apart.
  const uint64_t budget = 256 * 1024;
  const Taken taken = MergedThenTaken(Workers(2, 2000, nullptr, 10000, 0), 10000, budget);
  EXPECT_TRUE(taken.folding.folded);
  EXPECT_TRUE(taken.folding.for_memory);
  // The same rows within a budget 64 times as large.
  const Taken within = MergedThenTaken(Workers(2, 2000, nullptr, 10000, 0), 10000, 64 * budget);
  EXPECT_FALSE(within.folding.folded);
  EXPECT_EQ(within.rows, OneTable(2, 2000, nullptr));
}

TEST(KeyTableMergeTest, OtherRowAndLostRequestsCarryOver) {
  // Sums that cannot be added (hostile input): the second goes to "(other)", the third is lost.
  KeyStats huge;
  huge.RecordSuccess(std::numeric_limits<int64_t>::max() - 1);
  std::vector<KeyTable> tables = Workers(2, 300, nullptr);
  for (int i = 0; i < 3; ++i)
    tables[1].Add("http://127.0.0.1:18090/huge", huge);
  const Taken taken = MergedThenTaken(std::move(tables), 10000, kDefaultMaxKeyBytes);
  EXPECT_EQ(taken.folding.other_requests, 1u);
  EXPECT_EQ(taken.folding.lost_requests, 1u);
  EXPECT_EQ(taken.folding.rows, 301u);
  ASSERT_EQ(taken.rows.size(), 302u);
  EXPECT_EQ(taken.rows.front().first, kOtherKey);  // '(' sorts before 'h'
}

}  // namespace
}  // namespace hammer::stats
