// KeyTable's byte budget (max_bytes, --max-key-memory): folding and shedding rows to "(other)"
// when the rows' histograms outgrow it, with every figure merged exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hammer/stats/key_table.h"

namespace hammer::stats {
namespace {

using Rows = std::vector<std::pair<std::string, KeyStats>>;
constexpr uint64_t kMiB = uint64_t{1} << 20;

// `n` latencies spread over hundreds of buckets and several pages (as a replayed key's are):
// the histogram is paged, tens of KiB.
void RecordSpread(KeyStats* stats, int n, int64_t seed) {
  for (int i = 0; i < n; ++i)
    stats->RecordSuccess(1000 + (seed * 31 + i) % 300 * 997);
}

KeyStats Sum(const Rows& rows) {
  KeyStats total;
  for (const auto& [key, stats] : rows)
    total.Merge(stats);
  return total;
}

// A letters-only name, which is its own template (key_template.h): rows that folding cannot
// merge.
std::string Word(int i) {
  std::string word = "w";
  for (; i > 0; i /= 26)
    word += static_cast<char>('a' + i % 26);
  return word;
}

TEST(KeyTableMemoryTest, ThreadAllocatedBytesCountsEveryHistogramAllocation) {
  uint64_t before = Histogram::ThreadAllocatedBytes();
  KeyStats stats;
  RecordSpread(&stats, 300, 0);
  ASSERT_FALSE(stats.histogram.sparse());
  uint64_t grown = Histogram::ThreadAllocatedBytes() - before;
  EXPECT_GE(grown, stats.histogram.allocated_bytes());  // the spill it had before, too
  Histogram copy = stats.histogram;
  EXPECT_EQ(Histogram::ThreadAllocatedBytes() - before, grown + copy.allocated_bytes());
}

TEST(KeyTableMemoryTest, ATableOverItsBudgetFoldsAndItsRowsMergeExactly) {
  KeyTable table(10000, 1 * kMiB);
  KeyStats expected;
  uint64_t generation = table.generation();
  for (int i = 0; i < 200; ++i) {
    std::string key =
        "http://127.0.0.1/item/" + std::to_string(i) + "?ref=" + std::to_string(i * 7);
    RecordSpread(table.StatsFor(key), 300, i);
    RecordSpread(&expected, 300, i);
    table.StatsFor(key)->RecordFailure(Failure::kTimeout);
    expected.RecordFailure(Failure::kTimeout);
    if (i == 0) {
      table.CheckMemory();  // one key's tens of KiB: within the budget
      EXPECT_FALSE(table.folded());
      EXPECT_EQ(table.generation(), generation);
      EXPECT_GT(table.MemoryBytes(), 16u * 1024);
    }
    table.CheckMemory();  // as a load worker does every 1024 results
  }
  ASSERT_TRUE(table.folded());
  EXPECT_NE(table.generation(), generation);
  EXPECT_LE(table.MemoryBytes(), 1 * kMiB);
  KeyFolding folding = table.Folding();
  EXPECT_TRUE(folding.for_memory);
  EXPECT_FALSE(folding.shed);
  EXPECT_EQ(folding.rows, 1u);
  EXPECT_EQ(folding.other_requests, 0u);
  EXPECT_EQ(folding.Limit(), "--max-key-memory");
  EXPECT_NEAR(static_cast<double>(folding.distinct_keys), 200.0, 4.0);
  EXPECT_EQ(folding.Describe(), "the statistics of about " + std::to_string(folding.distinct_keys) +
                                    " distinct keys exceeded --max-key-memory 1MiB: grouped by "
                                    "path template into 1 row");
  Rows rows = table.TakeRows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].first, "http://127.0.0.1/item/{id}?ref={id}");
  EXPECT_EQ(rows[0].second, expected);  // counts, errors, sums and the histogram (operator==)
  EXPECT_EQ(rows[0].second.histogram, expected.histogram);
}

TEST(KeyTableMemoryTest, AFoldedTableOverItsBudgetSendsItsQuietestRowsToOther) {
  constexpr uint64_t kBudget = 1 * kMiB;
  KeyTable table(10000, kBudget);
  std::map<std::string, KeyStats> expected;  // each key's own figures
  for (int i = 0; i < 40; ++i) {
    std::string key = "http://127.0.0.1/" + Word(i);
    KeyStats* row = table.StatsFor(key);
    RecordSpread(row, 300 + i, i);  // busier with i
    RecordSpread(&expected[key], 300 + i, i);
    table.CheckMemory();
  }
  ASSERT_TRUE(table.folded());
  KeyFolding folding = table.Folding();
  EXPECT_TRUE(folding.for_memory);
  EXPECT_TRUE(folding.shed);
  EXPECT_GT(folding.other_requests, 0u);
  EXPECT_NE(folding.Describe().find(" requests of the quietest rows in (other) to stay within it"),
            std::string::npos)
      << folding.Describe();
  EXPECT_LE(table.MemoryBytes(), kBudget);
  Rows rows = table.TakeRows();
  KeyStats all;
  for (const auto& [key, stats] : expected)
    all.Merge(stats);
  EXPECT_EQ(Sum(rows), all);  // nothing dropped: counts, sums and histograms add up
  // The rows left are the busiest keys, each exact; (other) is the exact merge of the rest.
  KeyStats other_expected = all;
  KeyStats other;
  uint64_t quietest_kept = UINT64_MAX;
  for (const auto& [key, stats] : rows) {
    if (key == kOtherKey) {
      other = stats;
      continue;
    }
    EXPECT_EQ(stats, expected.at(key)) << key;
    quietest_kept = std::min(quietest_kept, stats.total());
  }
  ASSERT_GT(other.total(), 0u);
  uint64_t other_requests = 0;
  KeyStats shed;
  for (const auto& [key, stats] : expected) {
    bool kept = false;
    for (const auto& row : rows)
      kept = kept || row.first == key;
    if (kept) continue;
    EXPECT_LT(stats.total(), quietest_kept) << key;
    other_requests += stats.total();
    shed.Merge(stats);
  }
  EXPECT_EQ(other.total(), other_requests);
  EXPECT_EQ(other.histogram, shed.histogram);
  EXPECT_EQ(other, shed);
  EXPECT_GT(rows.size(), 2u);  // shedding stopped at 3/4 of the budget, not at one row
}

TEST(KeyTableMemoryTest, ZeroBudgetOrZeroMaxKeysNeverFoldsForMemory) {
  for (auto [max_keys, max_bytes] : {std::pair<size_t, uint64_t>{10000, 0}, {0, 1024}}) {
    KeyTable table(max_keys, max_bytes);
    for (int i = 0; i < 50; ++i) {
      RecordSpread(table.StatsFor("http://127.0.0.1/item/" + std::to_string(i)), 300, i);
      table.CheckMemory();
    }
    EXPECT_FALSE(table.folded()) << max_keys;
    EXPECT_EQ(table.size(), 50u);
    EXPECT_GT(table.MemoryBytes(), 50u * 16 * 1024);
    EXPECT_EQ(table.Folding().Describe(), "");
  }
}

TEST(KeyTableMemoryTest, MergeRespectsTheBudgetAndFreesTheMergedTable) {
  // Two workers' tables each within its budget (a paged key here is 80 KiB); their union is
  // not within the merged table's.
  constexpr uint64_t kBudget = 1 * kMiB;
  KeyTable workers[2] = {KeyTable(10000, 2 * kBudget), KeyTable(10000, 2 * kBudget)};
  KeyStats expected;
  for (int i = 0; i < 24; ++i) {
    KeyTable& worker = workers[i % 2];
    RecordSpread(worker.StatsFor("http://127.0.0.1/item/" + std::to_string(i)), 300, i);
    RecordSpread(&expected, 300, i);
    worker.StatsFor("http://127.0.0.1/about")->RecordFailure(Failure::kConnect);
    expected.RecordFailure(Failure::kConnect);
    worker.CheckMemory();
  }
  ASSERT_FALSE(workers[0].folded());
  ASSERT_FALSE(workers[1].folded());
  ASSERT_GT(workers[0].MemoryBytes() + workers[1].MemoryBytes(), kBudget);

  KeyTable merged(10000, kBudget);
  merged.Merge(workers[0]);  // a copy: the worker keeps its rows
  // Moved: its rows leave it as they are merged, their histograms moved into new rows, not
  // copied (no allocation here but the merged table's own rows).
  KeyTable moved(10000, 4 * kBudget);
  KeyTable moved_copy = workers[1];
  const uint64_t before_move = Histogram::ThreadAllocatedBytes();
  moved.Merge(std::move(moved_copy));
  EXPECT_EQ(Histogram::ThreadAllocatedBytes(), before_move);
  EXPECT_EQ(moved_copy.size(), 0u);
  EXPECT_EQ(moved.MemoryBytes(), workers[1].MemoryBytes());
  moved.CheckMemory();
  EXPECT_FALSE(moved.folded());  // the moved histograms count: 4 MiB holds them
  KeyTable tight(10000, kBudget / 2);
  KeyTable tight_copy = workers[1];
  tight.Merge(std::move(tight_copy));
  EXPECT_TRUE(tight.folded());  // and so do they against a budget they pass
  EXPECT_LE(tight.MemoryBytes(), kBudget / 2);
  // It folded once it held the rows (an empty table takes them whole): nothing was lost.
  KeyStats worker_total;
  workers[1].ForEachSorted(
      [&](std::string_view, const KeyStats& stats) { worker_total.Merge(stats); });
  KeyStats tight_total;
  for (const auto& [key, stats] : tight.TakeRows())
    tight_total.Merge(stats);
  EXPECT_EQ(tight_total, worker_total);
  merged.Merge(std::move(workers[1]));
  EXPECT_EQ(workers[0].size(), 13u);
  EXPECT_EQ(workers[1].size(), 0u);
  EXPECT_EQ(workers[1].MemoryBytes(), 0u);
  ASSERT_TRUE(merged.folded());
  EXPECT_LE(merged.MemoryBytes(), kBudget);
  KeyFolding folding = merged.Folding();
  EXPECT_TRUE(folding.for_memory);
  EXPECT_EQ(folding.rows, 2u);
  Rows rows = merged.TakeRows();
  EXPECT_EQ(Sum(rows), expected);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].first, "http://127.0.0.1/about");
  EXPECT_EQ(rows[0].second.errors, 24u);
  EXPECT_EQ(rows[1].first, "http://127.0.0.1/item/{id}");
  EXPECT_EQ(rows[1].second.histogram, expected.histogram);

  // A table that folded for memory folds the table it is merged into for the same reason.
  KeyTable folded(10000, 256 * 1024);
  for (int i = 0; i < 10; ++i) {
    RecordSpread(folded.StatsFor("http://127.0.0.1/user/" + std::to_string(i)), 300, i);
    folded.CheckMemory();
  }
  ASSERT_TRUE(folded.Folding().for_memory);
  KeyTable fresh(10000, kBudget);
  fresh.Merge(folded);
  EXPECT_TRUE(fresh.Folding().for_memory);
  EXPECT_EQ(fresh.Folding().Limit(), "--max-key-memory");
}

TEST(KeyTableMemoryTest, SheddingAfterAKeyCountFoldSaysBoth) {
  KeyFolding folding;
  folding.max_keys = 3;
  folding.max_bytes = 64 * kMiB;
  folding.folded = true;
  folding.shed = true;
  folding.distinct_keys = 9;
  folding.rows = 2;
  folding.other_requests = 5;
  EXPECT_EQ(folding.Describe(),
            "about 9 distinct keys exceeded --max-keys 3: grouped by path template into 2 rows, "
            "and 5 requests of keys beyond that and of the quietest rows in (other) to stay "
            "within --max-key-memory 64MiB");
  EXPECT_EQ(folding.Limit(), "--max-keys");
}

}  // namespace
}  // namespace hammer::stats
