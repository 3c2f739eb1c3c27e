// Keys kept with one record and no row (KeyTable::RecordOnceSuccess, OnceKeys): the table gives
// the rows, figures and folding that recording every record through StatsFor gives.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hammer/stats/key_hash.h"
#include "hammer/stats/key_table.h"
#include "hammer/stats/once_keys.h"

namespace hammer::stats {
namespace {

using Rows = std::vector<std::pair<std::string, KeyStats>>;

std::string Url(int i) {
  return "http://127.0.0.1:18091/item/" + std::to_string(i) + "?p=x";
}

// One record: a success's latency, or a failure (typed or not).
struct Record {
  std::string key;
  int64_t micros = 0;
  bool failed = false;
  std::optional<Failure> type;
};

Record Success(std::string key, int64_t micros) {
  Record r;
  r.key = std::move(key);
  r.micros = micros;
  return r;
}

// Records into `table` as a load worker does: the key's first record kept without a row when
// the table takes it; else through StatsFor.
void RecordOnceOrRow(KeyTable& table, const Record& r) {
  const bool kept =
      r.failed ? table.RecordOnceFailure(r.key, r.type) : table.RecordOnceSuccess(r.key, r.micros);
  if (kept) return;
  KeyStats* row = table.StatsFor(r.key);
  if (r.failed) {
    row->RecordFailure(r.type);
  } else {
    row->RecordSuccess(r.micros);
  }
}

void RecordRow(KeyTable& table, const Record& r) {
  KeyStats* row = table.StatsFor(r.key);
  if (r.failed) {
    row->RecordFailure(r.type);
  } else {
    row->RecordSuccess(r.micros);
  }
}

void ExpectSameRows(const Rows& a, const Rows& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first) << i;
    EXPECT_EQ(a[i].second, b[i].second) << a[i].first;
  }
}

void ExpectSameFolding(const KeyFolding& a, const KeyFolding& b) {
  EXPECT_EQ(a.folded, b.folded);
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.distinct_keys, b.distinct_keys);
  EXPECT_EQ(a.other_requests, b.other_requests);
  EXPECT_EQ(a.Describe(), b.Describe());
}

// `n` keys; key i has 1 + (i % repeats) records, spread over the stream, some of them failures.
std::vector<Record> Stream(int n, int repeats) {
  std::vector<Record> records;
  for (int round = 0; round < repeats; ++round) {
    for (int i = 0; i < n; ++i) {
      if (i % repeats < round) continue;
      Record r = Success(Url(i), 100 + (i * 31 + round) % 997);
      if ((i + round) % 11 == 4) {
        r.failed = true;
        r.type = (i % 2 == 0) ? std::optional<Failure>(Failure::kTimeout) : std::nullopt;
      }
      records.push_back(r);
    }
  }
  return records;
}

// Both ways of recording the same stream into KeyTable(max_keys): the same rows and folding.
void ExpectSameAsRows(const std::vector<Record>& records, size_t max_keys) {
  KeyTable once(max_keys);
  KeyTable rows(max_keys);
  for (const Record& r : records) {
    RecordOnceOrRow(once, r);
    RecordRow(rows, r);
  }
  EXPECT_EQ(once.size(), rows.size());
  ExpectSameFolding(once.Folding(), rows.Folding());
  ExpectSameRows(once.TakeRows(), rows.TakeRows());
}

TEST(KeyTableOnceTest, KeysSentOnceOrAgainGiveTheRowsOfStatsFor) {
  ExpectSameAsRows(Stream(3000, 1), 10000);  // every key once
  ExpectSameAsRows(Stream(3000, 4), 10000);  // some once, some up to 4 times
  ExpectSameAsRows(Stream(1, 1), 10000);
  ExpectSameAsRows({}, 10000);
  // Past max_keys: the table folds, the keys kept once going to their templates too.
  ExpectSameAsRows(Stream(3000, 1), 1000);
  ExpectSameAsRows(Stream(3000, 3), 1000);
  ExpectSameAsRows(Stream(1000, 2), 1000);  // exactly max_keys keys
}

TEST(KeyTableOnceTest, AKeyIsKeptOnlyForItsFirstRecord) {
  KeyTable table(100);
  EXPECT_TRUE(table.RecordOnceSuccess(Url(1), 10));
  EXPECT_EQ(table.size(), 1u);
  EXPECT_FALSE(table.RecordOnceSuccess(Url(1), 20));  // its second: through StatsFor
  KeyStats* row = table.StatsFor(Url(1));
  EXPECT_EQ(row->total(), 1u);  // the row has the first record
  row->RecordSuccess(20);
  EXPECT_FALSE(table.RecordOnceFailure(Url(1), Failure::kTimeout));  // a row's key
  // A key whose row came first (a cached request) is never kept once.
  table.StatsFor(Url(2))->RecordSuccess(5);
  EXPECT_FALSE(table.RecordOnceSuccess(Url(2), 6));
  EXPECT_TRUE(table.RecordOnceFailure(Url(3), std::nullopt));
  EXPECT_EQ(table.size(), 3u);
  const Rows rows = table.TakeRows();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].second.count, 2u);
  EXPECT_EQ(rows[0].second.sum_micros, 30);
  EXPECT_EQ(rows[1].second.count, 1u);
  EXPECT_EQ(rows[2].second.errors, 1u);
  EXPECT_EQ(rows[2].second.failures.Total(), 0u);  // untyped, as a seed record's
}

TEST(KeyTableOnceTest, TablesThatCannotKeepKeysSaySo) {
  KeyTable unbounded(0);  // the reducer's exact table
  EXPECT_FALSE(unbounded.RecordOnceSuccess(Url(1), 1));
  KeyTable table(10);
  EXPECT_FALSE(table.RecordOnceSuccess(Url(1), -1));  // not a latency
  EXPECT_FALSE(table.RecordOnceSuccess(std::string(kOtherKey), 1));
  for (int i = 0; i < 10; ++i)
    EXPECT_TRUE(table.RecordOnceSuccess(Url(i), 1));
  EXPECT_FALSE(table.RecordOnceSuccess(Url(10), 1));  // an 11th key: StatsFor folds
  table.StatsFor(Url(10))->RecordSuccess(1);
  EXPECT_TRUE(table.folded());
  EXPECT_FALSE(table.RecordOnceSuccess(Url(11), 1));
  EXPECT_EQ(table.Folding().rows, 1u);  // every key in its template's row
  // A table that made its rows (a merge) keeps no more keys once.
  KeyTable merged(100);
  EXPECT_TRUE(merged.RecordOnceSuccess(Url(1), 1));
  KeyTable other(100);
  other.StatsFor(Url(2))->RecordSuccess(2);
  merged.Merge(std::move(other));
  EXPECT_FALSE(merged.RecordOnceSuccess(Url(3), 3));
  EXPECT_EQ(merged.size(), 2u);
}

TEST(KeyTableOnceTest, MergedCopiedAndListedAsRows) {
  const std::vector<Record> records = Stream(500, 3);
  KeyTable once(10000);
  KeyTable rows(10000);
  for (const Record& r : records) {
    RecordOnceOrRow(once, r);
    RecordRow(rows, r);
  }
  // Listed in key order with the rows.
  std::vector<std::pair<std::string, KeyStats>> listed_once, listed_rows;
  once.ForEachSorted([&](std::string_view key, const KeyStats& stats) {
    listed_once.emplace_back(std::string(key), stats);
  });
  rows.ForEachSorted([&](std::string_view key, const KeyStats& stats) {
    listed_rows.emplace_back(std::string(key), stats);
  });
  ExpectSameRows(listed_once, listed_rows);
  EXPECT_EQ(once.size(), rows.size());
  // Merged into another table, by copy and by move.
  KeyTable by_copy(10000), by_move(10000), expected(10000);
  by_copy.StatsFor(Url(7))->RecordSuccess(1);
  by_move.StatsFor(Url(7))->RecordSuccess(1);
  expected.StatsFor(Url(7))->RecordSuccess(1);
  by_copy.Merge(once);
  expected.Merge(rows);
  KeyTable copy = once;
  by_move.Merge(std::move(copy));
  const Rows want = expected.TakeRows();
  ExpectSameRows(by_copy.TakeRows(), want);
  ExpectSameRows(by_move.TakeRows(), want);
  // The original is unchanged by the copies.
  ExpectSameRows(once.TakeRows(), rows.TakeRows());
}

TEST(KeyTableOnceTest, KeptKeysCountAgainstTheMemoryBudget) {
  // 20,000 keys kept once under a 256 KiB budget: the table folds for memory (each key costs
  // its bytes and an entry), and every record is still in its rows.
  const uint64_t budget = 256 * 1024;
  KeyTable table(100000, budget);
  uint64_t recorded = 0;
  for (int i = 0; i < 20000; ++i) {
    RecordOnceOrRow(table, Success(Url(i), 100 + i % 50));
    table.Recorded();
    ++recorded;
  }
  table.CheckMemory();
  EXPECT_TRUE(table.Folding().folded);
  EXPECT_TRUE(table.Folding().for_memory);
  EXPECT_LE(table.MemoryBytes(), budget);
  uint64_t total = 0;
  for (const auto& [key, stats] : table.TakeRows())
    total += stats.total();
  EXPECT_EQ(total, recorded);
  // Within a budget, MemoryBytes counts them.
  KeyTable small(100000, kDefaultMaxKeyBytes);
  const uint64_t empty = small.MemoryBytes();
  EXPECT_TRUE(small.RecordOnceSuccess(Url(1), 5));
  EXPECT_EQ(small.MemoryBytes() - empty, OnceKeys::EntryBytes(Url(1)));
}

TEST(OnceKeysTest, FindsEachKeyAfterTheIndexGrowsAndAfterAMove) {
  OnceKeys keys;
  const int n = 5000;  // the index grows from 1024 slots to 16384
  for (int i = 0; i < n; ++i) {
    const std::string key = Url(i);
    ASSERT_EQ(keys.Find(key, HashKey(key)), nullptr);
    keys.Add(key, HashKey(key), i % 3 == 0 ? OnceKeys::kRow : i);
  }
  EXPECT_EQ(keys.entries().size(), static_cast<size_t>(n));
  EXPECT_EQ(keys.once(), static_cast<size_t>(n - (n + 2) / 3));
  const OnceKeys moved = std::move(keys);
  for (int i = 0; i < n; ++i) {
    const std::string key = Url(i);
    const OnceKeys::Entry* entry = moved.Find(key, HashKey(key));
    ASSERT_NE(entry, nullptr) << key;
    EXPECT_EQ(moved.Key(*entry), key);
    EXPECT_EQ(entry->record, i % 3 == 0 ? OnceKeys::kRow : i);
  }
  EXPECT_EQ(moved.Find("http://127.0.0.1:18091/none", HashKey("http://127.0.0.1:18091/none")),
            nullptr);
  // A record of each kind, into a row.
  KeyStats stats;
  OnceKeys::RecordInto(42, stats);
  OnceKeys::RecordInto(OnceKeys::FailureRecord(Failure::kTimeout), stats);
  OnceKeys::RecordInto(OnceKeys::FailureRecord(std::nullopt), stats);
  EXPECT_EQ(stats.count, 1u);
  EXPECT_EQ(stats.sum_micros, 42);
  EXPECT_EQ(stats.errors, 2u);
  EXPECT_EQ(stats.failures.Get(Failure::kTimeout), 1u);
  EXPECT_EQ(stats.failures.Total(), 1u);
}

}  // namespace
}  // namespace hammer::stats
