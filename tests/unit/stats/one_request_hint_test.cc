#include "hammer/stats/one_request_hint.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "hammer/base/failure.h"
#include "hammer/stats/key_table.h"

namespace hammer::stats {
namespace {

using Rows = std::vector<std::pair<std::string, KeyStats>>;

// Rows of `keys` keys, the first `one_request` with one request each (a success, or a failure
// every third row) and the others with two; and an "(other)" row of one request.
Rows RowsOfRequests(size_t keys, size_t one_request) {
  Rows rows;
  for (size_t i = 0; i < keys; ++i) {
    KeyStats stats;
    if (i % 3 == 2) {
      stats.RecordFailure(Failure::kTimeout);
    } else {
      stats.RecordSuccess(100);
    }
    if (i >= one_request) stats.RecordSuccess(200);
    rows.emplace_back("http://127.0.0.1:8080/item/" + std::to_string(i), std::move(stats));
  }
  KeyStats other;
  other.RecordSuccess(300);
  rows.emplace_back(std::string(kOtherKey), std::move(other));
  return rows;
}

TEST(OneRequestRowsHintTest, SaysSoWhenNineInTenOfAtLeastAHundredRowsHaveOneRequest) {
  EXPECT_EQ(OneRequestRowsHint(RowsOfRequests(100, 100)),
            "each of the 100 keys had one request: group them into fewer rows with --key-pattern "
            "REGEX=NAME, or by path template with --max-keys below 100");
  EXPECT_EQ(OneRequestRowsHint(RowsOfRequests(1000, 900)),
            "900 of the 1000 keys had one request each: group them into fewer rows with "
            "--key-pattern REGEX=NAME, or by path template with --max-keys below 1000");
  // Fewer than 9 in 10, or fewer than 100 rows of one request ("(other)" is not a key): nothing.
  EXPECT_EQ(OneRequestRowsHint(RowsOfRequests(1000, 899)), "");
  EXPECT_EQ(OneRequestRowsHint(RowsOfRequests(99, 99)), "");
  EXPECT_EQ(OneRequestRowsHint(RowsOfRequests(200, 0)), "");
  EXPECT_EQ(OneRequestRowsHint(Rows()), "");
}

TEST(OneRequestRowsHintTest, CountsGiveWhatTheRowsGive) {
  for (auto [keys, one_request] : {std::pair<size_t, size_t>{100, 100},
                                   {1000, 900},
                                   {1000, 899},
                                   {99, 99},
                                   {200, 0},
                                   {0, 0}}) {
    EXPECT_EQ(OneRequestRowsHint(keys, one_request),
              OneRequestRowsHint(RowsOfRequests(keys, one_request)))
        << keys << " keys, " << one_request << " of one request";
  }
}

}  // namespace
}  // namespace hammer::stats
