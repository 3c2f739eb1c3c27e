#include "hammer/search/cluster_view.h"

#include <gtest/gtest.h>

#include "hammer/search/cluster_flags.h"

namespace hammer::search {
namespace {

// Answers recorded from the OpenSearch 2.19.6 test cluster (tests/integration/opensearch.py).
constexpr char kRoot[] = R"({
  "name" : "node-1", "cluster_name" : "hammer-it",
  "version" : { "distribution" : "opensearch", "number" : "2.19.6", "build_type" : "unknown",
    "lucene_version" : "9.12.3", "minimum_wire_compatibility_version" : "7.10.0" },
  "tagline" : "The OpenSearch Project: https://opensearch.org/" })";
constexpr char kMetadata[] =
    R"({"metadata":{"indices":{"t6":{"routing_num_shards":768,"settings":{"index":{)"
    R"("replication":{"type":"DOCUMENT"},"number_of_shards":"6","provided_name":"t6",)"
    R"("number_of_replicas":"1","version":{"created":"136408427"}}}}}}})";
constexpr char kShards[] =
    R"([{"index":"t6","shard":"0","prirep":"p","state":"STARTED","id":"N3","node":"node-3"},)"
    R"({"index":"t6","shard":"0","prirep":"r","state":"INITIALIZING","id":"N2","node":"node-2"},)"
    R"({"index":"t6","shard":"1","prirep":"r","state":"STARTED","id":"N3","node":"node-3"},)"
    R"({"index":"t6","shard":"1","prirep":"p","state":"RELOCATING","id":"N2","node":"node-2"},)"
    R"({"index":"t6","shard":"2","prirep":"p","state":"UNASSIGNED","id":null,"node":null}])";
constexpr char kNodes[] =
    R"({"nodes":{"N1":{"name":"node-1","http":{"publish_address":"127.0.0.1:41781"}},)"
    R"("N3":{"name":"node-3","http":{"publish_address":"localhost/127.0.0.1:34941"}},)"
    R"("N2":{"name":"node-2","http":{"publish_address":"127.0.0.1:42035"}},"N4":{"name":"x"}}})";

TEST(ClusterViewTest, ServerInfo) {
  Result<ServerInfo> info = ParseServerInfo(kRoot);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->distribution, SearchDistribution::kOpenSearch);
  EXPECT_EQ(info->version, "2.19.6");
  Result<ServerInfo> es =
      ParseServerInfo(R"({"version":{"number":"8.15.0","build_flavor":"default"}})");
  ASSERT_TRUE(es.ok());
  EXPECT_EQ(es->distribution, SearchDistribution::kElasticsearch);
  EXPECT_FALSE(ParseServerInfo(R"({"version":{"distribution":"fork"}})").ok());
  EXPECT_FALSE(ParseServerInfo(R"({"ok":true})").ok());
  EXPECT_FALSE(ParseServerInfo("<html>").ok());
}

TEST(ClusterViewTest, IndexMetadata) {
  Result<IndexMetadata> metadata =
      ParseIndexMetadata(kMetadata, "t6", SearchDistribution::kOpenSearch);
  ASSERT_TRUE(metadata.ok()) << metadata.status().message();
  EXPECT_EQ(metadata->spec.number_of_shards, 6);
  EXPECT_EQ(metadata->spec.routing_num_shards, 768);
  EXPECT_EQ(metadata->spec.version_created, 136408427);
  EXPECT_EQ(metadata->spec.routing_partition_size, 1);
  EXPECT_FALSE(metadata->spec.has_routing_path);
  EXPECT_TRUE(metadata->default_pipeline.empty());
  Result<ShardRouter> router = ShardRouter::Create(metadata->spec);
  ASSERT_TRUE(router.ok());
  EXPECT_EQ(router->Route("1", std::nullopt)->shard(), 4);  // es-routing.md worked example
  EXPECT_EQ(router->Route("hello", std::nullopt)->shard(), 5);
}

TEST(ClusterViewTest, IndexMetadataVariants) {
  Result<IndexMetadata> partitioned = ParseIndexMetadata(
      R"({"metadata":{"indices":{"p":{"routing_num_shards":640,"settings":{"index":{)"
      R"("number_of_shards":"5","routing_partition_size":"2","routing_path":["host"],)"
      R"("default_pipeline":"enrich","final_pipeline":"_none","version":{"created":"8100499"}}}}}}})",
      "p", SearchDistribution::kElasticsearch);
  ASSERT_TRUE(partitioned.ok()) << partitioned.status().message();
  EXPECT_EQ(partitioned->spec.routing_partition_size, 2);
  EXPECT_TRUE(partitioned->spec.has_routing_path);
  EXPECT_EQ(partitioned->default_pipeline, "enrich");
  EXPECT_EQ(partitioned->final_pipeline, "");
  Result<IndexMetadata> flat =
      ParseIndexMetadata(R"({"metadata":{"indices":{"f":{"settings":{"index.number_of_shards":3,)"
                         R"("index.version.created":"7100299"}}}}})",
                         "f", SearchDistribution::kElasticsearch);
  ASSERT_TRUE(flat.ok()) << flat.status().message();
  EXPECT_EQ(flat->spec.number_of_shards, 3);
  EXPECT_FALSE(flat->spec.routing_num_shards.has_value());  // computed from the version later
  Result<IndexMetadata> missing =
      ParseIndexMetadata(R"({"metadata":{"indices":{}}})", "nope", SearchDistribution::kOpenSearch);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "index nope not found");
  EXPECT_FALSE(
      ParseIndexMetadata(
          R"({"metadata":{"indices":{"x":{"settings":{"index":{"number_of_shards":"a"}}}}}})", "x",
          SearchDistribution::kOpenSearch)
          .ok());
}

TEST(ClusterViewTest, PrimaryPlacement) {
  Result<std::vector<std::string>> primaries = ParsePrimaryPlacement(kShards, "t6", 3);
  ASSERT_TRUE(primaries.ok()) << primaries.status().message();
  EXPECT_EQ(*primaries, (std::vector<std::string>{"N3", "N2", ""}));
  EXPECT_FALSE(ParsePrimaryPlacement(kShards, "t6", 1).ok());  // shard 1 out of range
  EXPECT_FALSE(ParsePrimaryPlacement("{}", "t6", 1).ok());
}

TEST(ClusterViewTest, HttpNodesSortedByNameWithoutHostPrefix) {
  Result<std::vector<ClusterNode>> nodes = ParseHttpNodes(kNodes);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 3u);  // N4 has no HTTP
  EXPECT_EQ((*nodes)[0].name, "node-1");
  EXPECT_EQ((*nodes)[1].id, "N2");
  EXPECT_EQ((*nodes)[2].http_address, "127.0.0.1:34941");
  EXPECT_FALSE(ParseHttpNodes(R"({"nodes":{}})").ok());
}

TEST(ClusterViewTest, HttpNodesWithoutIdOrAddressAreLeftOut) {
  // Found by bulk_response_fuzz: an empty node id was accepted.
  Result<std::vector<ClusterNode>> nodes =
      ParseHttpNodes(R"({"nodes":{"":{"name":"x","http":{"publish_address":"h/127.0.0.1:1"}},)"
                     R"("N1":{"name":"y","http":{"publish_address":"h/"}},)"
                     R"("N2":{"name":"z","http":{"publish_address":"127.0.0.1:2"}}}})");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].id, "N2");
  EXPECT_FALSE(ParseHttpNodes(R"({"nodes":{"":{"http":{"publish_address":"a:1"}}}})").ok());
}

TEST(ClusterViewTest, ViewLookups) {
  ClusterView view;
  view.nodes = *ParseHttpNodes(kNodes);
  view.primary_node_ids = *ParsePrimaryPlacement(kShards, "t6", 3);
  EXPECT_EQ(view.PrimaryNodeIndex(0), 2);
  EXPECT_EQ(view.PrimaryNodeIndex(1), 1);
  EXPECT_EQ(view.PrimaryNodeIndex(2), -1);
  EXPECT_EQ(view.PrimaryNodeIndex(3), -1);
  EXPECT_EQ(view.NodeIndexById("nope"), -1);
}

TEST(ClusterViewTest, AliasTarget) {
  Result<IndexTarget> single = ParseAliasTarget(
      R"({"t6":{"aliases":{"a6":{"index_routing":"r1","search_routing":"r1"}}}})", "a6");
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->index, "t6");
  EXPECT_TRUE(single->is_alias);
  EXPECT_EQ(single->index_routing, "r1");
  Result<IndexTarget> rollover =
      ParseAliasTarget(R"({"logs-1":{"aliases":{"logs":{"is_write_index":false}}},)"
                       R"("logs-2":{"aliases":{"logs":{"is_write_index":true}}}})",
                       "logs");
  ASSERT_TRUE(rollover.ok());
  EXPECT_EQ(rollover->index, "logs-2");
  EXPECT_FALSE(rollover->index_routing.has_value());
  Result<IndexTarget> ambiguous =
      ParseAliasTarget(R"({"a":{"aliases":{"x":{}}},"b":{"aliases":{"x":{}}}})", "x");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.status().message(),
            "alias x points to 2 indices and none is the write index");
}

TEST(ClusterViewTest, PathSegmentsArePercentEncoded) {
  EXPECT_EQ(EncodePathSegment("logs-2024.01_a"), "logs-2024.01_a");
  EXPECT_EQ(EncodePathSegment("a+b%c\xc3\xa9"), "a%2Bb%25c%C3%A9");
}

TEST(ClusterFlagsTest, ClusterUrls) {
  Result<std::vector<http::Url>> urls = ParseClusterUrls("http://127.0.0.1:9200,https://h:9201/");
  ASSERT_TRUE(urls.ok());
  ASSERT_EQ(urls->size(), 2u);
  EXPECT_EQ((*urls)[0].Origin(), "http://127.0.0.1:9200");
  EXPECT_TRUE((*urls)[1].tls());
  EXPECT_FALSE(ParseClusterUrls("").ok());
  EXPECT_FALSE(ParseClusterUrls("http://h:9200/prefix").ok());
  EXPECT_FALSE(ParseClusterUrls("ftp://h").ok());
}

TEST(ClusterFlagsTest, TargetNamesAndSizes) {
  EXPECT_TRUE(CheckTargetName("logs-2024").ok());
  EXPECT_FALSE(CheckTargetName("logs-*").ok());
  EXPECT_FALSE(CheckTargetName("a,b").ok());
  EXPECT_FALSE(CheckTargetName("_all").ok());
  EXPECT_FALSE(CheckTargetName("").ok());
  EXPECT_EQ(*ParseByteSize("1048576"), 1048576u);
  EXPECT_EQ(*ParseByteSize("5m"), 5u * 1024 * 1024);
  EXPECT_EQ(*ParseByteSize("512KB"), 512u * 1024);
  EXPECT_EQ(*ParseByteSize("1GiB"), 1024u * 1024 * 1024);
  EXPECT_FALSE(ParseByteSize("5x").ok());
  EXPECT_FALSE(ParseByteSize("m").ok());
  Result<http::HeaderList> headers = http::ParseHeaderFlags({"Authorization: Basic eA=="});
  ASSERT_TRUE(headers.ok());
  EXPECT_EQ((*headers)[0].second, "Basic eA==");
  EXPECT_FALSE(http::ParseHeaderFlags({"nocolon"}).ok());
}

TEST(ClusterFlagsTest, DocumentFlags) {
  InputOptions pairs;
  ASSERT_TRUE(ApplyDocumentFlags("index", &pairs).ok());
  EXPECT_EQ(pairs.format, InputOptions().format);  // no id field: still action+source pairs
  InputOptions docs;
  docs.id_field = "id";
  ASSERT_TRUE(ApplyDocumentFlags("create", &docs).ok());
  EXPECT_EQ(docs.format, InputFormat::kDocuments);
  EXPECT_EQ(docs.document_op, BulkOp::kCreate);
  EXPECT_EQ(ApplyDocumentFlags("upsert", &docs).message(),
            "--op: expected index or create, got 'upsert'");
  InputOptions routing_only;
  routing_only.routing_field = "r";
  EXPECT_EQ(ApplyDocumentFlags("index", &routing_only).message(),
            "--routing-field needs --id-field");
}

}  // namespace
}  // namespace hammer::search
