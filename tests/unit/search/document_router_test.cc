#include "hammer/search/document_router.h"

#include <gtest/gtest.h>

namespace hammer::search {
namespace {

constexpr int32_t kOpenSearch219 = 2'19'00'99 ^ kOpenSearchVersionMask;

DocumentRouter Make(int32_t shards, int32_t partition_size, std::string target, std::string index,
                    std::optional<std::string> alias_routing = std::nullopt,
                    bool routing_path = false) {
  IndexRoutingSpec spec;
  spec.distribution = SearchDistribution::kOpenSearch;
  spec.version_created = kOpenSearch219;
  spec.number_of_shards = shards;
  spec.routing_partition_size = partition_size;
  spec.has_routing_path = routing_path;
  return DocumentRouter(*ShardRouter::Create(spec), std::move(target), std::move(index),
                        std::move(alias_routing));
}

BulkDocument Doc(std::optional<std::string_view> id, std::optional<std::string_view> routing = {},
                 std::optional<std::string_view> index = {}) {
  BulkDocument d;
  d.id = id;
  d.routing = routing;
  d.index = index;
  return d;
}

TEST(DocumentRouterTest, RoutesByIdOrRouting) {
  DocumentRouter router = Make(6, 1, "t6", "t6");
  EXPECT_EQ(router.Route(Doc("1"))->shard, 4);
  EXPECT_EQ(router.Route(Doc("hello"))->shard, 5);
  EXPECT_EQ(router.Route(Doc("anything", "hello"))->shard, 5);  // routing wins over the id
  EXPECT_EQ(router.Route(Doc("1", std::nullopt, "t6"))->shard, 4);
}

TEST(DocumentRouterTest, AliasIndexRoutingOverridesForDocumentsSentThroughTheAlias) {
  DocumentRouter router = Make(6, 1, "a6", "t6", "hello");
  EXPECT_EQ(router.Route(Doc("1"))->shard, 5);
  EXPECT_EQ(router.Route(Doc("1", "other", "a6"))->shard, 5);
  // Straight to the index: the alias does not apply.
  EXPECT_EQ(router.Route(Doc("1", std::nullopt, "t6"))->shard, 4);
}

TEST(DocumentRouterTest, UnroutableReasons) {
  DocumentRouter router = Make(6, 1, "t6", "t6");
  DocumentRoute other = *router.Route(Doc("1", std::nullopt, "elsewhere"));
  EXPECT_FALSE(other.routable());
  EXPECT_EQ(other.reason, kOtherIndexReason);
  EXPECT_EQ(router.Route(Doc(std::nullopt))->reason, "id_assigned_by_server");
  BulkDocument float_id = Doc(std::nullopt);
  float_id.id_unusable = true;
  EXPECT_EQ(router.Route(float_id)->reason, kIdNotStringReason);
  float_id.routing = "hello";  // the routing decides: the id does not matter
  EXPECT_EQ(router.Route(float_id)->shard, 5);

  DocumentRouter partitioned = Make(6, 2, "p", "p");
  EXPECT_EQ(partitioned.Route(Doc("1"))->reason, "routing_required");
  float_id.routing = "hello";
  EXPECT_EQ(partitioned.Route(float_id)->reason, kIdNotStringReason);
  EXPECT_TRUE(partitioned.Route(Doc("1", "hello"))->routable());

  DocumentRouter time_series = Make(6, 1, "ts", "ts", std::nullopt, true);
  EXPECT_EQ(time_series.Route(Doc("1"))->reason, "routing_from_source");
}

TEST(DocumentRouterTest, OfflineRouterAcceptsAnyIndex) {
  DocumentRouter router = Make(6, 1, "", "");
  EXPECT_EQ(router.Route(Doc("1", std::nullopt, "whatever"))->shard, 4);
}

TEST(DocumentRouterTest, EmptyIdIsAnError) {
  DocumentRouter router = Make(6, 1, "t6", "t6");
  EXPECT_FALSE(router.Route(Doc("")).ok());
}

}  // namespace
}  // namespace hammer::search
