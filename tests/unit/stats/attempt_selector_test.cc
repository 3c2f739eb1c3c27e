// AttemptSelector: of the partials of several attempts of one task, one attempt's are kept — the
// last complete one — and the others are dropped and counted.
#include "hammer/stats/attempt_selector.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hammer/stats/partial.h"

namespace hammer::stats {
namespace {

// A partial of `requests` successes of 1 ms for `key`, written by `attempt` of `task`.
std::string Line(std::string_view task, std::string_view attempt, int64_t started_ms,
                 uint64_t lines, std::string_view key, int requests) {
  KeyStats stats;
  for (int i = 0; i < requests; ++i)
    stats.RecordSuccess(1000);
  std::string line;
  AppendPartialRecord(line, key, stats,
                      {.task = task, .attempt = attempt, .started_ms = started_ms, .lines = lines});
  line.pop_back();  // the '\n'
  return line;
}

class AttemptSelectorTest : public ::testing::Test {
 protected:
  void Add(const std::string& line) {
    lines_.push_back(line);
    ParsedRecord record = ParseRecordLine(lines_.back());
    ASSERT_EQ(record.kind, RecordKind::kPartial) << record.error;
    ASSERT_TRUE(selector_.Add(lines_.back(), record).ok());
  }
  std::vector<std::string> Kept() {
    std::vector<std::string> kept;
    selector_.Finish([&](std::string_view line) { kept.emplace_back(line); });
    return kept;
  }

  AttemptSelector selector_;
  std::vector<std::string> lines_;
};

// Hadoop's attempts _0 and _1 of one task, each complete: the later one is kept, once.
TEST_F(AttemptSelectorTest, TheLastCompleteAttemptOfATaskIsKept) {
  const std::string first_a = Line("task_m_000000", "attempt_m_000000_0", 1000, 2, "/a", 50);
  const std::string first_b = Line("task_m_000000", "attempt_m_000000_0", 1000, 2, "/b", 50);
  const std::string second_a = Line("task_m_000000", "attempt_m_000000_1", 2000, 2, "/a", 40);
  const std::string second_b = Line("task_m_000000", "attempt_m_000000_1", 2000, 2, "/b", 60);
  for (const std::string& line : {second_a, first_a, first_b, second_b})
    Add(line);
  EXPECT_EQ(Kept(), (std::vector<std::string>{second_a, second_b}));
  const AttemptSelector::Summary& summary = selector_.summary();
  EXPECT_EQ(summary.tasks, 1u);
  EXPECT_EQ(summary.attempts_dropped, 1u);
  EXPECT_EQ(summary.lines_dropped, 2u);
  EXPECT_EQ(summary.incomplete_kept, 0u);
  EXPECT_EQ(summary.first_drop,
            "task task_m_000000: kept attempt attempt_m_000000_1 (complete), dropped "
            "attempt_m_000000_0 (complete)");
}

// An attempt killed while writing its partials has fewer lines than it declared: an earlier
// complete attempt wins over it.
TEST_F(AttemptSelectorTest, ACompleteAttemptWinsOverALaterCutOne) {
  const std::string whole_a = Line("3", "load-3-aaaaa", 1000, 2, "/a", 10);
  const std::string whole_b = Line("3", "load-3-aaaaa", 1000, 2, "/b", 10);
  const std::string cut_a = Line("3", "load-3-bbbbb", 2000, 2, "/a", 10);
  for (const std::string& line : {whole_a, whole_b, cut_a})
    Add(line);
  EXPECT_EQ(Kept(), (std::vector<std::string>{whole_a, whole_b}));
  EXPECT_EQ(selector_.summary().attempts_dropped, 1u);
  EXPECT_EQ(selector_.summary().lines_dropped, 1u);
  EXPECT_EQ(selector_.summary().incomplete_kept, 0u);
}

// No attempt is complete: the last one is kept, and said.
TEST_F(AttemptSelectorTest, WithNoCompleteAttemptTheLastIsKept) {
  const std::string first = Line("t", "a0", 1000, 3, "/a", 1);
  const std::string second = Line("t", "a1", 2000, 3, "/a", 2);
  Add(first);
  Add(second);
  EXPECT_EQ(Kept(), std::vector<std::string>{second});
  EXPECT_EQ(selector_.summary().incomplete_kept, 1u);
}

// Different tasks are all kept; the same line given twice (a file passed twice) counts once.
TEST_F(AttemptSelectorTest, TasksAreKeptAndRepeatedLinesCountOnce) {
  const std::string zero = Line("0", "pod-0", 1000, 1, "/a", 5);
  const std::string one = Line("1", "pod-1", 1000, 1, "/a", 7);
  for (const std::string& line : {one, zero, one})
    Add(line);
  EXPECT_EQ(Kept(), (std::vector<std::string>{zero, one}));
  EXPECT_EQ(selector_.summary().tasks, 2u);
  EXPECT_EQ(selector_.summary().attempts_dropped, 0u);
  EXPECT_EQ(selector_.summary().duplicate_lines, 1u);
}

TEST_F(AttemptSelectorTest, AWrongPartialIsRefused) {
  lines_.push_back("k\t#ha1 t a 1 1 1 0 5 9 9 - notbase64");
  ParsedRecord record = ParseRecordLine(lines_.back());
  ASSERT_EQ(record.kind, RecordKind::kPartial);
  EXPECT_FALSE(selector_.Add(lines_.back(), record).ok());
  EXPECT_TRUE(selector_.empty());
}

}  // namespace
}  // namespace hammer::stats
