#include "hammer/stats/key_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hammer/stats/distinct_counter.h"

namespace hammer::stats {
namespace {

using Rows = std::vector<std::pair<std::string, KeyStats>>;

std::map<std::string, uint64_t> Requests(const Rows& rows) {
  std::map<std::string, uint64_t> out;
  for (const auto& [key, stats] : rows)
    out[key] = stats.total();
  return out;
}

KeyStats Sum(const Rows& rows) {
  KeyStats total;
  for (const auto& [key, stats] : rows)
    total.Merge(stats);
  return total;
}

TEST(DistinctCounterTest, EstimatesWithinAFewPercentAndIgnoresRepeats) {
  DistinctCounter empty;
  EXPECT_EQ(empty.Estimate(), 0u);
  // Short keys (hashed byte by byte), and long ones that differ only in their last bytes.
  const std::string kLong = "http://127.0.0.1:18080/api/v2/users/000000000000000000/orders?id=";
  for (const auto& [prefix, n] :
       std::vector<std::pair<std::string, uint64_t>>{{"http://h/item/", 1},
                                                     {"http://h/item/", 10},
                                                     {"http://h/item/", 1000},
                                                     {"http://h/item/", 50000},
                                                     {"http://h/item/", 1000000},
                                                     {"", 50000},
                                                     {kLong, 50000}}) {
    DistinctCounter counter;
    DistinctCounter halves[2];
    for (uint64_t i = 0; i < n; ++i) {
      std::string key = prefix + std::to_string(i);
      counter.Add(key);
      counter.Add(key);  // a repeat changes nothing
      halves[i % 2].Add(key);
    }
    double error = std::abs(static_cast<double>(counter.Estimate()) - static_cast<double>(n)) /
                   static_cast<double>(n);
    EXPECT_LE(error, n <= 10 ? 0.0 : 0.03) << prefix << " " << n;
    halves[0].Merge(halves[1]);
    EXPECT_EQ(halves[0].Estimate(), counter.Estimate()) << n;  // merge = union
  }
}

TEST(KeyTableTest, KeepsExactKeysWhileTheyFit) {
  KeyTable table(3);
  table.StatsFor("http://h/a/1")->RecordSuccess(10);
  table.StatsFor("http://h/a/2")->RecordFailure(Failure::kTimeout);
  table.StatsFor("http://h/a/1")->RecordSuccess(20);
  table.StatsFor("http://h/b")->RecordSuccess(30);
  EXPECT_FALSE(table.folded());
  KeyFolding folding = table.Folding();
  EXPECT_EQ(folding.distinct_keys, 3u);
  EXPECT_EQ(folding.Describe(), "");
  Rows rows = table.TakeRows();
  EXPECT_EQ(Requests(rows), (std::map<std::string, uint64_t>{
                                {"http://h/a/1", 2}, {"http://h/a/2", 1}, {"http://h/b", 1}}));
}

TEST(KeyTableTest, FoldsByTemplateThenOtherAndTotalsAddUp) {
  KeyTable table(3);
  KeyStats expected_total;
  uint64_t generation = table.generation();
  auto record = [&](const std::string& key, int64_t micros) {
    table.StatsFor(key)->RecordSuccess(micros);
    expected_total.RecordSuccess(micros);
  };
  record("http://h/item/1", 5);
  record("http://h/item/2", 6);
  record("http://h/about", 7);
  EXPECT_EQ(table.generation(), generation);
  record("http://h/item/3", 8);  // the fourth key folds the table
  EXPECT_TRUE(table.folded());
  EXPECT_NE(table.generation(), generation);
  record("http://h/user/9", 9);    // a third template: fits
  record("http://h/cart/9", 10);   // a fourth: (other)
  record("http://h/item/77", 11);  // an existing template
  KeyFolding folding = table.Folding();
  EXPECT_EQ(folding.distinct_keys, 7u);  // estimated, but exact at this size
  EXPECT_EQ(folding.rows, 3u);
  EXPECT_EQ(folding.other_requests, 1u);
  EXPECT_EQ(folding.Describe(),
            "about 7 distinct keys exceeded --max-keys 3: grouped by path template into 3 rows, "
            "and 1 request of keys beyond that in (other)");
  Rows rows = table.TakeRows();
  EXPECT_EQ(Requests(rows), (std::map<std::string, uint64_t>{{"(other)", 1},
                                                             {"http://h/about", 1},
                                                             {"http://h/item/{id}", 4},
                                                             {"http://h/user/{id}", 1}}));
  EXPECT_EQ(Sum(rows), expected_total);
}

TEST(KeyTableTest, KeysArrivingAfterTheTableIsFullOfTemplatesGoToOther) {
  KeyTable table(2);
  for (const char* key : {"/a", "/b", "/b", "/b", "/c", "/c/1", "/b"})
    table.StatsFor(key)->RecordSuccess(1);
  EXPECT_EQ(Requests(table.TakeRows()),
            (std::map<std::string, uint64_t>{{"(other)", 2}, {"/a", 1}, {"/b", 4}}));
}

TEST(KeyTableTest, AFoldedTableSendsEachKeyToItsTemplateInAnyOrder) {
  // Keys of two endpoints interleaved after the fold, keys that are templates themselves, and
  // the "(other)" name as a key: each goes to the same row as when it arrives alone.
  KeyTable table(2);
  for (const char* key : {"/a/1", "/a/2", "/b/1", "/b/2", "/a/3", "/b/{id}", "/a/{id}", "/b/4",
                          "/a/5", "(other)", "/b/6"}) {
    table.StatsFor(key)->RecordSuccess(1);
  }
  EXPECT_TRUE(table.folded());
  EXPECT_EQ(Requests(table.TakeRows()),
            (std::map<std::string, uint64_t>{{"(other)", 1}, {"/a/{id}", 5}, {"/b/{id}", 5}}));
}

TEST(KeyTableTest, MergingWorkerTablesFoldsConsistentlyAndLosesNothing) {
  std::mt19937_64 rng(5);
  for (size_t max_keys : {size_t{0}, size_t{4}, size_t{50}, size_t{100000}}) {
    KeyTable workers[3] = {KeyTable(max_keys), KeyTable(max_keys), KeyTable(max_keys)};
    KeyStats expected;
    std::set<std::string> distinct;
    for (int i = 0; i < 3000; ++i) {
      std::string key = "http://h/" + std::string(rng() % 2 ? "item/" : "user/") +
                        std::to_string(rng() % 400) + (rng() % 3 == 0 ? "?ref=x" : "");
      int64_t micros = static_cast<int64_t>(rng() % 100000);
      workers[rng() % 3].StatsFor(key)->RecordSuccess(micros);
      distinct.insert(key);
      expected.RecordSuccess(micros);
    }
    KeyTable merged(max_keys);
    for (const KeyTable& worker : workers)
      merged.Merge(worker);
    KeyFolding folding = merged.Folding();
    Rows rows = merged.TakeRows();
    EXPECT_EQ(Sum(rows), expected) << max_keys;
    if (max_keys == 0 || max_keys == 100000) {
      EXPECT_FALSE(folding.folded);
      EXPECT_EQ(rows.size(), folding.distinct_keys);
      EXPECT_GT(rows.size(), 4u);
    } else {
      EXPECT_TRUE(folding.folded);
      EXPECT_LE(rows.size(), max_keys + 1);
      double n = static_cast<double>(distinct.size());
      EXPECT_NEAR(static_cast<double>(folding.distinct_keys), n, n * 0.02);
      for (const auto& [key, stats] : rows)
        EXPECT_TRUE(key == kOtherKey || key.find("{id}") != std::string::npos) << key;
    }
  }
}

// Merging a worker's table by move hands its rows over whole (node and histogram) when their
// keys fit, and merges them when a key is in both tables: each key gets exactly what merging a
// copy gives it, at the boundary (the union just fits) and past it (the table folds).
TEST(KeyTableTest, MovingWorkerTablesGivesEachKeyWhatCopyingGives) {
  for (size_t max_keys : {size_t{0}, size_t{50}, size_t{49}, size_t{1000}}) {
    std::mt19937_64 rng(7);
    KeyTable workers[3] = {KeyTable(max_keys), KeyTable(max_keys), KeyTable(max_keys)};
    std::map<std::string, KeyStats> expected;
    for (int i = 0; i < 5000; ++i) {
      const std::string key = "http://h/item/" + std::to_string(rng() % 50);
      // Up to a minute: rows with many distinct values page their histograms.
      const auto micros = static_cast<int64_t>(rng() % 60'000'000);
      workers[rng() % 3].StatsFor(key)->RecordSuccess(micros);
      expected[key].RecordSuccess(micros);
    }
    KeyTable copied(max_keys);
    KeyTable moved(max_keys);
    for (KeyTable& worker : workers) {
      copied.Merge(worker);
      moved.Merge(std::move(worker));
      EXPECT_EQ(worker.size(), 0u);
    }
    EXPECT_EQ(moved.folded(), max_keys == 49) << max_keys;
    const Rows from_copies = copied.TakeRows();
    const Rows from_moves = moved.TakeRows();
    EXPECT_EQ(from_moves, from_copies) << max_keys;
    if (max_keys == 49) continue;
    ASSERT_EQ(from_moves.size(), expected.size()) << max_keys;
    for (const auto& [key, stats] : from_moves)
      EXPECT_EQ(stats, expected[key]) << key;
  }
}

}  // namespace
}  // namespace hammer::stats
