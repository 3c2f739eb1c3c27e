// KeyTable::TakeMergedRows against what it stands for: merging the tables in order into an empty
// KeyTable, then its Folding() and TakeRows(); with the tables' keys sorted beforehand
// (SortKeys, as load workers do as they end) or not, or only some of them.
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
// Builds the tables afresh at each call (a KeyTable is not copied: its last row is a pointer).
using MakeTables = std::function<std::vector<KeyTable>()>;

struct Taken {
  Rows rows;
  KeyFolding folding;
};

Taken MergedThenTaken(const MakeTables& make, size_t max_keys, uint64_t max_bytes) {
  KeyTable merged(max_keys, max_bytes);
  for (KeyTable& table : make())
    merged.Merge(std::move(table));
  Taken taken;
  taken.folding = merged.Folding();
  taken.rows = merged.TakeRows();
  return taken;
}

// Which tables have their keys sorted (SortKeys) before they are taken.
enum class Sorted { kNone, kAll, kFirst };

Taken TakenTogether(const MakeTables& make, size_t max_keys, uint64_t max_bytes,
                    Sorted sorted = Sorted::kNone) {
  std::vector<KeyTable> tables = make();
  for (size_t t = 0; t < tables.size(); ++t) {
    if (sorted == Sorted::kAll || (sorted == Sorted::kFirst && t == 0)) tables[t].SortKeys();
  }
  Taken taken;
  taken.rows = KeyTable::TakeMergedRows(std::move(tables), max_keys, max_bytes, &taken.folding);
  return taken;
}

void ExpectSameAsMerged(const MakeTables& make, size_t max_keys, uint64_t max_bytes) {
  const Taken expected = MergedThenTaken(make, max_keys, max_bytes);
  for (Sorted sorted : {Sorted::kNone, Sorted::kAll, Sorted::kFirst}) {
    SCOPED_TRACE("sorted " + std::to_string(static_cast<int>(sorted)));
    const Taken taken = TakenTogether(make, max_keys, max_bytes, sorted);
    ASSERT_EQ(taken.rows.size(), expected.rows.size());
    for (size_t i = 0; i < taken.rows.size(); ++i) {
      EXPECT_EQ(taken.rows[i].first, expected.rows[i].first) << i;
      EXPECT_EQ(taken.rows[i].second, expected.rows[i].second) << taken.rows[i].first;
    }
    const KeyFolding& a = taken.folding;
    const KeyFolding& b = expected.folding;
    EXPECT_EQ(a.max_keys, b.max_keys);
    EXPECT_EQ(a.max_bytes, b.max_bytes);
    EXPECT_EQ(a.folded, b.folded);
    EXPECT_EQ(a.for_memory, b.for_memory);
    EXPECT_EQ(a.shed, b.shed);
    EXPECT_EQ(a.distinct_keys, b.distinct_keys);
    EXPECT_EQ(a.rows, b.rows);
    EXPECT_EQ(a.other_requests, b.other_requests);
    EXPECT_EQ(a.lost_requests, b.lost_requests);
    EXPECT_EQ(a.Describe(), b.Describe());
  }
}

std::string Url(int i) {
  return "http://127.0.0.1:18090/item/" + std::to_string(i) + "?ref=" + std::to_string(i * 7);
}

// How Workers records: every record through StatsFor, or as a load worker does, a key's first
// record kept without a row when the table takes it (RecordOnceSuccess, RecordOnceFailure).
enum class Recording { kRows, kOnce };

// `workers` tables; key i goes to table i % workers, or to every table when `shared(i)`.
MakeTables Workers(int workers, int keys, std::function<bool(int)> shared = nullptr,
                   size_t max_keys = 10000, uint64_t max_bytes = kDefaultMaxKeyBytes,
                   Recording recording = Recording::kRows) {
  return [=] {
    std::vector<KeyTable> tables;
    for (int w = 0; w < workers; ++w)
      tables.emplace_back(max_keys, max_bytes);
    const bool once = recording == Recording::kOnce;
    for (int i = 0; i < keys; ++i) {
      for (int w = 0; w < workers; ++w) {
        if (i % workers != w && !(shared && shared(i))) continue;
        KeyTable& table = tables[w];
        const std::string key = Url(i);
        // Some keys' first record is a failure, untyped (a seed record) or not.
        if (i % 7 == 3 && !(once && table.RecordOnceFailure(key, std::nullopt))) {
          table.StatsFor(key)->RecordFailure(std::nullopt);
        }
        const int64_t micros = 100 + i % 37 + w;
        if (!(once && table.RecordOnceSuccess(key, micros))) {
          table.StatsFor(key)->RecordSuccess(micros);
        }
        if (i % 5 == 0 && !(once && table.RecordOnceFailure(key, Failure::kTimeout))) {
          table.StatsFor(key)->RecordFailure(Failure::kTimeout);
        }
        table.Recorded();
      }
    }
    return tables;
  };
}

TEST(KeyTableMergeTest, DisjointTablesSortedTogether) {
  ExpectSameAsMerged(Workers(2, 3000), 10000, kDefaultMaxKeyBytes);
  ExpectSameAsMerged(Workers(3, 100), 10000, kDefaultMaxKeyBytes);
  ExpectSameAsMerged(Workers(1, 50), 10000, kDefaultMaxKeyBytes);
  ExpectSameAsMerged(Workers(2, 3000), 0, 0);                 // no bound
  ExpectSameAsMerged(Workers(2, 3000, nullptr, 0, 0), 0, 0);  // nor in the tables: not sorted
  // Each key requested three times (as a list cycled over would be): SortKeys leaves the
  // tables unsorted, and they are taken all the same.
  ExpectSameAsMerged(
      [] {
        std::vector<KeyTable> tables = Workers(2, 3000)();
        for (int i = 0; i < 3000; ++i) {
          for (int again = 0; again < 2; ++again)
            tables[static_cast<size_t>(i % 2)].StatsFor(Url(i))->RecordSuccess(300);
        }
        return tables;
      },
      10000, kDefaultMaxKeyBytes);
  const Taken taken = TakenTogether(Workers(2, 3000), 10000, kDefaultMaxKeyBytes);
  ASSERT_EQ(taken.rows.size(), 3000u);
  for (size_t i = 1; i < taken.rows.size(); ++i)
    EXPECT_LT(taken.rows[i - 1].first, taken.rows[i].first);
  EXPECT_FALSE(taken.folding.folded);
  EXPECT_EQ(taken.folding.rows, 3000u);
  EXPECT_EQ(taken.folding.distinct_keys, 3000u);
}

TEST(KeyTableMergeTest, NoTablesOrEmptyOnes) {
  ExpectSameAsMerged([] { return std::vector<KeyTable>(); }, 10000, kDefaultMaxKeyBytes);
  ExpectSameAsMerged(Workers(2, 0), 10000, kDefaultMaxKeyBytes);
  ExpectSameAsMerged(Workers(2, 1), 10000, kDefaultMaxKeyBytes);
}

TEST(KeyTableMergeTest, KeysInSeveralTablesAreMerged) {
  // Every key in both (a list cycled over), and a few keys in both among many that are not
  // (the keys looked up first may miss them).
  ExpectSameAsMerged(Workers(2, 2000, [](int) { return true; }), 10000, kDefaultMaxKeyBytes);
  ExpectSameAsMerged(Workers(2, 2000, [](int i) { return i == 1999; }), 10000, kDefaultMaxKeyBytes);
  ExpectSameAsMerged(Workers(3, 2000, [](int i) { return i % 500 == 7; }), 10000,
                     kDefaultMaxKeyBytes);
  const Taken taken =
      TakenTogether(Workers(2, 2000, [](int i) { return i == 1999; }), 10000, kDefaultMaxKeyBytes);
  EXPECT_EQ(taken.rows.size(), 2000u);
  // Thousands of keys, one of them in two tables:
  ExpectSameAsMerged(Workers(2, 6000, [](int i) { return i == 5999; }), 10000, kDefaultMaxKeyBytes);
  ExpectSameAsMerged(Workers(4, 6000, [](int i) { return i == 4321; }), 10000, kDefaultMaxKeyBytes);
  // A key of another table, then 40 of its own (a table's newest keys come first in its order,
  // and its first 16 are looked up in the tables before it: this key is found by the sort).
  const auto one_shared = [](int workers, int table, int key) -> MakeTables {
    return [=] {
      std::vector<KeyTable> tables = Workers(workers, 6000)();
      tables[table].StatsFor(Url(key))->RecordSuccess(250);
      for (int i = 0; i < 40; ++i)
        tables[table].StatsFor(Url(10000 + i))->RecordSuccess(260);
      return tables;
    };
  };
  ExpectSameAsMerged(one_shared(2, 1, 2), 10000, kDefaultMaxKeyBytes);     // 2 is table 0's
  ExpectSameAsMerged(one_shared(3, 2, 5998), 10000, kDefaultMaxKeyBytes);  // 5998 is table 1's
  EXPECT_EQ(TakenTogether(one_shared(3, 2, 5998), 10000, kDefaultMaxKeyBytes).rows.size(), 6040u);
}

TEST(KeyTableMergeTest, UnionPastMaxKeysFolds) {
  // Each table fits in 1000 keys, the union does not: merging folds it.
  ExpectSameAsMerged(Workers(2, 1500, nullptr, 1000), 1000, kDefaultMaxKeyBytes);
  EXPECT_TRUE(
      TakenTogether(Workers(2, 1500, nullptr, 1000), 1000, kDefaultMaxKeyBytes).folding.folded);
  // Exactly max_keys keys fit.
  ExpectSameAsMerged(Workers(2, 1000, nullptr, 1000), 1000, kDefaultMaxKeyBytes);
  EXPECT_FALSE(
      TakenTogether(Workers(2, 1000, nullptr, 1000), 1000, kDefaultMaxKeyBytes).folding.folded);
}

TEST(KeyTableMergeTest, FoldedTableFoldsTheUnion) {
  ExpectSameAsMerged(Workers(2, 600, nullptr, 200), 10000, kDefaultMaxKeyBytes);
  EXPECT_TRUE(
      TakenTogether(Workers(2, 600, nullptr, 200), 10000, kDefaultMaxKeyBytes).folding.folded);
}

TEST(KeyTableMergeTest, UnionPastMaxBytesFoldsForMemory) {
  // 2,000 rows of a few hundred bytes each: over a 256 KiB budget together, not apart.
  const uint64_t budget = 256 * 1024;
  ExpectSameAsMerged(Workers(2, 2000, nullptr, 10000, 0), 10000, budget);
  const Taken taken = TakenTogether(Workers(2, 2000, nullptr, 10000, 0), 10000, budget);
  EXPECT_TRUE(taken.folding.folded);
  EXPECT_TRUE(taken.folding.for_memory);
  // The same rows within the budget.
  ExpectSameAsMerged(Workers(2, 2000, nullptr, 10000, 0), 10000, 64 * budget);
  // 6,000 rows: over the budget together, and within it.
  ExpectSameAsMerged(Workers(2, 6000, nullptr, 10000, 0), 10000, 3 * budget);
  EXPECT_TRUE(
      TakenTogether(Workers(2, 6000, nullptr, 10000, 0), 10000, 3 * budget).folding.for_memory);
  ExpectSameAsMerged(Workers(2, 6000, nullptr, 10000, 0), 10000, 64 * budget);
}

TEST(KeyTableMergeTest, OtherRowAndLostRequestsCarryOver) {
  // Sums that cannot be added (hostile input): the second goes to "(other)", the third is lost.
  KeyStats huge;
  huge.RecordSuccess(std::numeric_limits<int64_t>::max() - 1);
  auto make = [huge] {
    std::vector<KeyTable> tables = Workers(2, 300)();
    for (int i = 0; i < 3; ++i)
      tables[1].Add("http://127.0.0.1:18090/huge", huge);
    return tables;
  };
  ExpectSameAsMerged(make, 10000, kDefaultMaxKeyBytes);
  const Taken taken = TakenTogether(make, 10000, kDefaultMaxKeyBytes);
  EXPECT_EQ(taken.folding.other_requests, 1u);
  EXPECT_EQ(taken.folding.lost_requests, 1u);
  EXPECT_EQ(taken.folding.rows, 301u);
  EXPECT_EQ(taken.rows.front().first, kOtherKey);  // '(' sorts before 'h'
}

// Tables whose keys were sorted apart: their own common prefixes differ from what all the keys
// share (by less than 8 bytes and by more), keys end inside the words compared, and keys tie
// on those words across tables.
TEST(KeyTableMergeTest, SortedTablesOfOtherPrefixesMergeInOrder) {
  const std::vector<std::vector<std::string>> cases[] = {
      {{"http://127.0.0.1/item/10", "http://127.0.0.1/item/11", "http://127.0.0.1/item/12"},
       {"http://127.0.0.1/item/2", "http://127.0.0.1/x", "http://127.0.0.2/"}},
      {{"http://127.0.0.1/very/long/shared/path/1", "http://127.0.0.1/very/long/shared/path/2"},
       {"http://127.0.0.1/", "http://127.0.0.1/v", "http://127.0.0.1/very/long/shared/path/15",
        "http://127.0.0.3"}},
      {{"", "a", "ab", "abcdefghij1"}, {"abcdefghij0", "abcdefghij2", "abcdefghik"}},
      {{"/same/eight/1", "/same/eight/3"}, {"/same/eight/2", "/same/eight/4", "/same/eight/"}},
      {{"x"}, {}, {"w", "y"}},
      {{"/p/ab1", "/p/ab2", "/p/ab3"}, {"/p/a", "/p/ac", "/p/ab", "/p/ab10"}},
      {{"/q/abcdefg1", "/q/abcdefg9"}, {"/q/abcdefg5", "/q/abcdefh", "/q/ab"}},
      {{"/q/abcdefg1", "/q/abcdefg2"}, {"/q/abcdefg25", "/q/ab"}},
  };
  for (const auto& keys_of : cases) {
    const MakeTables make = [&keys_of] {
      std::vector<KeyTable> tables;
      for (const std::vector<std::string>& keys : keys_of) {
        tables.emplace_back(10000, kDefaultMaxKeyBytes);
        for (const std::string& key : keys)
          tables.back().StatsFor(key)->RecordSuccess(static_cast<int64_t>(key.size()));
      }
      return tables;
    };
    ExpectSameAsMerged(make, 10000, kDefaultMaxKeyBytes);
    const Taken taken = TakenTogether(make, 10000, kDefaultMaxKeyBytes, Sorted::kAll);
    size_t keys = 0;
    for (const auto& table : keys_of)
      keys += table.size();
    ASSERT_EQ(taken.rows.size(), keys);
    for (size_t i = 1; i < taken.rows.size(); ++i)
      EXPECT_LT(taken.rows[i - 1].first, taken.rows[i].first);
  }
}

// Tables filled as a load worker fills them (Recording::kOnce) are taken as the same tables
// filled through StatsFor: whether their keys fit or fold (for max_keys or for memory), are
// shared between tables or not, sorted beforehand or not.
TEST(KeyTableMergeTest, KeysKeptOnceAreTakenAsRows) {
  struct Case {
    int workers;
    int keys;
    std::function<bool(int)> shared;
    size_t max_keys;
    uint64_t table_bytes;  // the tables' budget
    uint64_t max_bytes;    // the union's
  };
  const uint64_t budget = 256 * 1024;
  const Case cases[] = {
      {2, 3000, nullptr, 10000, kDefaultMaxKeyBytes, kDefaultMaxKeyBytes},
      {1, 50, nullptr, 10000, kDefaultMaxKeyBytes, kDefaultMaxKeyBytes},
      {3, 2000, [](int i) { return i % 500 == 7; }, 10000, kDefaultMaxKeyBytes,
       kDefaultMaxKeyBytes},
      {2, 2000, [](int) { return true; }, 10000, kDefaultMaxKeyBytes, kDefaultMaxKeyBytes},
      {2, 1500, nullptr, 1000, kDefaultMaxKeyBytes, kDefaultMaxKeyBytes},  // the union folds
      {2, 600, nullptr, 200, kDefaultMaxKeyBytes, kDefaultMaxKeyBytes},    // the tables fold
      {2, 2000, nullptr, 10000, 0, budget},       // the union folds for memory
      {2, 6000, nullptr, 10000, 0, 64 * budget},  // within it
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.workers) + " workers, " + std::to_string(c.keys) + " keys");
    const MakeTables once =
        Workers(c.workers, c.keys, c.shared, c.max_keys, c.table_bytes, Recording::kOnce);
    ExpectSameAsMerged(once, c.max_keys, c.max_bytes);
    const Taken expected = TakenTogether(
        Workers(c.workers, c.keys, c.shared, c.max_keys, c.table_bytes), c.max_keys, c.max_bytes);
    for (Sorted sorted : {Sorted::kNone, Sorted::kAll}) {
      const Taken taken = TakenTogether(once, c.max_keys, c.max_bytes, sorted);
      ASSERT_EQ(taken.rows.size(), expected.rows.size());
      for (size_t i = 0; i < taken.rows.size(); ++i) {
        EXPECT_EQ(taken.rows[i].first, expected.rows[i].first) << i;
        EXPECT_EQ(taken.rows[i].second, expected.rows[i].second) << taken.rows[i].first;
      }
      EXPECT_EQ(taken.folding.Describe(), expected.folding.Describe());
      EXPECT_EQ(taken.folding.rows, expected.folding.rows);
      EXPECT_EQ(taken.folding.distinct_keys, expected.folding.distinct_keys);
    }
  }
}

// Tables as Workers(workers, 3000) makes them, each with its keys sorted.
std::vector<KeyTable> SortedWorkers(int workers) {
  std::vector<KeyTable> tables = Workers(workers, 3000)();
  for (KeyTable& table : tables)
    table.SortKeys();
  return tables;
}

// An order is dropped by what changes the rows after it, and not copied with the table: the
// result is still the merge's (under ASan, a copy that kept views into the original's rows
// would read freed memory).
TEST(KeyTableMergeTest, SortedKeysChangedOrCopiedAfterwards) {
  const MakeTables added_after = [] {
    std::vector<KeyTable> tables = SortedWorkers(2);
    tables[0].StatsFor(Url(5000))->RecordSuccess(7);  // a new key
    tables[1].StatsFor(Url(1))->RecordSuccess(7);     // a row that grows
    tables[1].Add(Url(3), KeyStats());
    return tables;
  };
  ExpectSameAsMerged(added_after, 10000, kDefaultMaxKeyBytes);
  const MakeTables copied = [] {
    const std::vector<KeyTable> originals = SortedWorkers(2);
    return std::vector<KeyTable>(originals);  // the originals' rows end with this function
  };
  ExpectSameAsMerged(copied, 10000, kDefaultMaxKeyBytes);
  const MakeTables merged_after = [] {
    std::vector<KeyTable> tables = SortedWorkers(3);
    tables[0].Merge(std::move(tables[2]));
    tables.pop_back();
    return tables;
  };
  ExpectSameAsMerged(merged_after, 10000, kDefaultMaxKeyBytes);
}

}  // namespace
}  // namespace hammer::stats
