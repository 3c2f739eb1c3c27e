#include "hammer/search/bulk_batch.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace hammer::search {
namespace {

struct OwnedDoc {
  std::string action, source;
  BulkDocument view(std::optional<std::string_view> id = "x") const {
    BulkDocument d;
    d.action = action;
    d.source = source;
    d.has_source = !source.empty();
    d.id = id;
    return d;
  }
};

OwnedDoc Pair(int n, size_t source_bytes = 10) {
  return {R"({"index":{"_id":")" + std::to_string(n) + R"("}})",
          R"({"s":")" + std::string(source_bytes, 'x') + R"("})"};
}

TEST(BulkBatchTest, BodyIsNdjsonAndItemsIndexIt) {
  BulkBatch batch(2);
  OwnedDoc a = Pair(1), b{R"({"delete":{"_id":"2"}})", ""};
  batch.Add(a.view(), 2);
  batch.Add(b.view(std::nullopt), 2);
  EXPECT_EQ(batch.body(), a.action + "\n" + a.source + "\n" + b.action + "\n");
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch.Action(batch.items()[0]), a.action);
  EXPECT_EQ(batch.Source(batch.items()[0]), a.source);
  EXPECT_EQ(batch.Action(batch.items()[1]), b.action);
  EXPECT_FALSE(batch.items()[1].has_source);
  EXPECT_TRUE(batch.items()[0].has_id);
  EXPECT_FALSE(batch.items()[1].has_id);
  EXPECT_EQ(batch.items()[0].bytes() + batch.items()[1].bytes(), batch.body().size());
  EXPECT_EQ(batch.PrefixBody(1), a.action + "\n" + a.source + "\n");
  EXPECT_EQ(batch.PrefixBody(2), batch.body());
  EXPECT_EQ(batch.PrefixBody(0), "");
}

TEST(BulkBatchTest, AddItemCopiesLinesAndState) {
  BulkBatch from(0), to(0);
  OwnedDoc a = Pair(1), b = Pair(2);
  from.Add(a.view(), 0);
  from.Add(b.view(), 0);
  BatchItem second = from.items()[1];
  second.retries = 3;
  second.maybe_applied = true;
  to.AddItem(from, second);
  EXPECT_EQ(to.body(), b.action + "\n" + b.source + "\n");
  EXPECT_EQ(to.items()[0].offset, 0u);
  EXPECT_EQ(to.items()[0].retries, 3);
  EXPECT_TRUE(to.items()[0].maybe_applied);
}

TEST(BatchBuilderTest, ClosesAtTheDocumentLimitPerLane) {
  BatchBuilder builder(3, {2, 1 << 20});
  std::vector<std::unique_ptr<BulkBatch>> full;
  OwnedDoc d = Pair(1);
  builder.Add(0, d.view(), 0, &full);
  builder.Add(1, d.view(), 1, &full);
  EXPECT_TRUE(full.empty());
  builder.Add(0, d.view(), 0, &full);
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(full[0]->lane(), 0);
  EXPECT_EQ(full[0]->size(), 2u);
  full.clear();
  builder.TakeAll(&full);
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(full[0]->lane(), 1);
  full.clear();
  builder.TakeAll(&full);
  EXPECT_TRUE(full.empty());
}

TEST(BatchBuilderTest, ClosesBeforeTheByteLimitWouldBeExceeded) {
  const OwnedDoc d = Pair(1, 100);
  const size_t bytes = DocumentBytes(d.view());
  BatchBuilder builder(1, {1000, 2 * bytes + 10});
  std::vector<std::unique_ptr<BulkBatch>> full;
  builder.Add(0, d.view(), 0, &full);
  builder.Add(0, d.view(), 0, &full);
  EXPECT_TRUE(full.empty());
  builder.Add(0, d.view(), 0, &full);  // would make 3*bytes > limit: the first two leave
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(full[0]->size(), 2u);
  EXPECT_LE(full[0]->body().size(), 2 * bytes + 10);
}

TEST(BatchBuilderTest, ADocumentLargerThanTheLimitTravelsAlone) {
  const OwnedDoc small = Pair(1, 10), big = Pair(2, 1000);
  BatchBuilder builder(1, {1000, 200});
  std::vector<std::unique_ptr<BulkBatch>> full;
  builder.Add(0, small.view(), 0, &full);
  builder.Add(0, big.view(), 0, &full);
  ASSERT_EQ(full.size(), 2u);
  EXPECT_EQ(full[0]->size(), 1u);
  EXPECT_EQ(full[1]->size(), 1u);
  EXPECT_EQ(full[1]->Source(full[1]->items()[0]), big.source);
}

}  // namespace
}  // namespace hammer::search
