#include "hammer/search/routing_function.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace hammer::search {
namespace {

// OpenSearch writes (major*1'000'000 + minor*10'000 + revision*100 + 99) ^ 0x08000000.
constexpr int32_t OpenSearchId(int major, int minor, int revision) {
  return (major * 1'000'000 + minor * 10'000 + revision * 100 + 99) ^ kOpenSearchVersionMask;
}

TEST(DistributionTest, FromGetRootVersionInfo) {
  // Elasticsearch's GET / has no version.distribution; OpenSearch's says "opensearch".
  EXPECT_EQ(*DistributionFromVersionInfo(std::nullopt), SearchDistribution::kElasticsearch);
  EXPECT_EQ(*DistributionFromVersionInfo("opensearch"), SearchDistribution::kOpenSearch);
  EXPECT_EQ(*DistributionFromVersionInfo("elasticsearch"), SearchDistribution::kElasticsearch);
  EXPECT_FALSE(DistributionFromVersionInfo("astra").ok());
  EXPECT_FALSE(DistributionFromVersionInfo("").ok());
  EXPECT_FALSE(ParseDistribution("OpenSearch").ok());  // the engines spell it in lower case
  for (SearchDistribution d :
       {SearchDistribution::kElasticsearch, SearchDistribution::kOpenSearch}) {
    EXPECT_EQ(*ParseDistribution(DistributionName(d)), d);
  }
}

TEST(SelectRoutingFunctionTest, ElasticsearchCutOverAtModRoutingFunction) {
  const auto es = SearchDistribution::kElasticsearch;
  EXPECT_EQ(*SelectRoutingFunction(es, 6'08'23'99), RoutingFunction::kRoutingNumShards);
  EXPECT_EQ(*SelectRoutingFunction(es, 7'17'00'99), RoutingFunction::kRoutingNumShards);
  EXPECT_EQ(*SelectRoutingFunction(es, 8'10'04'99), RoutingFunction::kRoutingNumShards);
  EXPECT_EQ(*SelectRoutingFunction(es, 8'525'0'00), RoutingFunction::kRoutingNumShards);
  // IndexRoutingTests.testSimpleRoutingPreAndPostModRoutingChange uses 9_062_0_00 as "before".
  EXPECT_EQ(*SelectRoutingFunction(es, 9'062'0'00), RoutingFunction::kRoutingNumShards);
  EXPECT_EQ(*SelectRoutingFunction(es, 9'064'0'00 - 1), RoutingFunction::kRoutingNumShards);
  EXPECT_EQ(*SelectRoutingFunction(es, 9'064'0'00), RoutingFunction::kModuloNumberOfShards);
  EXPECT_EQ(*SelectRoutingFunction(es, 9'071'0'00), RoutingFunction::kModuloNumberOfShards);
}

TEST(SelectRoutingFunctionTest, OpenSearchAlwaysUsesRoutingNumShards) {
  const auto os = SearchDistribution::kOpenSearch;
  EXPECT_EQ(OpenSearchId(2, 19, 0), 136'407'827);
  for (int32_t id : {OpenSearchId(1, 0, 0), OpenSearchId(2, 19, 0), OpenSearchId(3, 5, 0)}) {
    // Numerically far above 9_064_0_00, yet not modulo.
    EXPECT_GT(id, kElasticsearchModRoutingFunction);
    EXPECT_EQ(*SelectRoutingFunction(os, id), RoutingFunction::kRoutingNumShards);
  }
  // Indices carried over from Elasticsearch up to 7.10.2 keep their unmasked ids.
  EXPECT_EQ(*SelectRoutingFunction(os, 7'10'02'99), RoutingFunction::kRoutingNumShards);
  EXPECT_EQ(*SelectRoutingFunction(os, 6'08'00'99), RoutingFunction::kRoutingNumShards);
}

TEST(SelectRoutingFunctionTest, RejectsInconsistentInput) {
  EXPECT_FALSE(SelectRoutingFunction(SearchDistribution::kElasticsearch, 0).ok());
  EXPECT_FALSE(SelectRoutingFunction(SearchDistribution::kElasticsearch, -1).ok());
  // An OpenSearch id given with the Elasticsearch distribution.
  EXPECT_FALSE(
      SelectRoutingFunction(SearchDistribution::kElasticsearch, OpenSearchId(2, 19, 0)).ok());
  // An Elasticsearch 8.x/9.x id cannot exist in an OpenSearch cluster.
  EXPECT_FALSE(SelectRoutingFunction(SearchDistribution::kOpenSearch, 7'11'00'99).ok());
  EXPECT_FALSE(SelectRoutingFunction(SearchDistribution::kOpenSearch, 9'064'0'00).ok());
}

TEST(DefaultRoutingNumShardsTest, UpstreamPinnedValues) {
  // MetadataCreateIndexServiceTests.testCalculateNumRoutingShards (ES and OpenSearch), as listed
  // in es-routing.md §3.
  const int32_t es_7 = 7'00'00'99;
  EXPECT_EQ(*DefaultRoutingNumShards(1, es_7), 1024);
  EXPECT_EQ(*DefaultRoutingNumShards(2, es_7), 1024);
  EXPECT_EQ(*DefaultRoutingNumShards(3, es_7), 768);
  EXPECT_EQ(*DefaultRoutingNumShards(9, es_7), 576);
  EXPECT_EQ(*DefaultRoutingNumShards(512, es_7), 1024);
  EXPECT_EQ(*DefaultRoutingNumShards(1024, es_7), 2048);
  EXPECT_EQ(*DefaultRoutingNumShards(2048, es_7), 4096);
}

TEST(DefaultRoutingNumShardsTest, WorkedTable) {
  // es-routing.md §3 "Worked examples": {primaries, routing_num_shards}.
  const int32_t table[][2] = {{1, 1024},   {2, 1024},    {3, 768},    {4, 1024},  {5, 640},
                              {6, 768},    {8, 1024},    {9, 576},    {10, 640},  {12, 768},
                              {16, 1024},  {20, 640},    {30, 960},   {100, 800}, {512, 1024},
                              {513, 1026}, {1000, 2000}, {1024, 2048}};
  for (const auto& [shards, expected] : table) {
    EXPECT_EQ(*DefaultRoutingNumShards(shards, 8'10'04'99), expected) << shards << " shards";
    EXPECT_EQ(*DefaultRoutingNumShards(shards, OpenSearchId(2, 19, 0)), expected)
        << shards << " shards on OpenSearch";
  }
}

TEST(DefaultRoutingNumShardsTest, BeforeSevenZeroIsNumberOfShards) {
  EXPECT_EQ(*DefaultRoutingNumShards(5, 6'08'23'99), 5);
  EXPECT_EQ(*DefaultRoutingNumShards(5, 7'00'00'99 - 1), 5);  // 7.0.0 pre-releases
  EXPECT_EQ(*DefaultRoutingNumShards(5, 7'00'00'99), 640);
}

TEST(DefaultRoutingNumShardsTest, Errors) {
  EXPECT_FALSE(DefaultRoutingNumShards(0, 7'17'00'99).ok());
  EXPECT_FALSE(DefaultRoutingNumShards(-3, 7'17'00'99).ok());
  EXPECT_FALSE(DefaultRoutingNumShards(5, 0).ok());
  EXPECT_EQ(*DefaultRoutingNumShards(1 << 29, 7'17'00'99), 1 << 30);
  EXPECT_FALSE(DefaultRoutingNumShards(1 << 30, 7'17'00'99).ok());  // 2^31 overflows int32
}

}  // namespace
}  // namespace hammer::search
