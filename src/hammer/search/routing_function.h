// Which routing formula and default routing_num_shards an index uses, decided by the engine
// (Elasticsearch or OpenSearch) and the index's `index.version.created`.
//
// Facts (from the engines' sources: Elasticsearch's IndexRouting.java, IndexVersions.java and
// MetadataCreateIndexService.java, OpenSearch's OperationRouting.java and Version.java):
//  * Elasticsearch indices created at or after IndexVersions.MOD_ROUTING_FUNCTION (9_064_0_00,
//    PR #137062) route with floorMod(hash, number_of_shards); routing_num_shards is ignored.
//    Older indices keep the routing_num_shards formula forever.
//  * OpenSearch (1.x, 2.x, 3.x) always uses the routing_num_shards formula. OpenSearch writes its
//    own version ids XOR 0x08000000 (org.opensearch.Version.MASK), so an OpenSearch 2.x index has
//    a created id near 136 million, far above 9_064_0_00: gating on the number alone would pick
//    the wrong formula. That is why the distribution is an explicit input.
//  * Telling them apart from `GET /`: OpenSearch answers with "version": {"distribution":
//    "opensearch", ...} (even when compatibility.override_main_response_version makes
//    "number" read 7.10.2); Elasticsearch has no "distribution" field ("build_flavor" instead).
//
// Errors: unknown distribution names, missing/negative version ids and ids that cannot belong to
// the named distribution are errors, never guesses.
// Threads: all functions are pure and reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer::search {

enum class SearchDistribution { kElasticsearch, kOpenSearch };

// "elasticsearch" or "opensearch" (lower case, as the engines spell themselves).
std::string_view DistributionName(SearchDistribution distribution);
// Inverse of DistributionName; any other string is an error.
Result<SearchDistribution> ParseDistribution(std::string_view name);
// From the `version.distribution` field of `GET /`: absent means Elasticsearch, "opensearch"
// means OpenSearch, anything else (another fork, a proxy) is an error.
Result<SearchDistribution> DistributionFromVersionInfo(
    std::optional<std::string_view> version_distribution);

enum class RoutingFunction {
  // floorMod(hash, routing_num_shards) / (routing_num_shards / number_of_shards).
  kRoutingNumShards,
  // floorMod(hash, number_of_shards); Elasticsearch indices created at or after 9_064_0_00.
  kModuloNumberOfShards,
};

// Version ids as the engines store them in index.version.created.
// Elasticsearch: major*1'000'000 + minor*10'000 + revision*100 + build (99 = release) up to 8.10,
// then IndexVersion ids, which keep increasing.
inline constexpr int32_t kElasticsearchV7_0_0 = 7'00'00'99;
// The Elasticsearch release OpenSearch forked from; no later ES index can live in OpenSearch.
inline constexpr int32_t kElasticsearchV7_10_2 = 7'10'02'99;
// IndexVersions.MOD_ROUTING_FUNCTION (es-routing.md, TL;DR: "≥ 9064000 → modulo").
inline constexpr int32_t kElasticsearchModRoutingFunction = 9'064'0'00;
// OpenSearch-created ids are (major*1'000'000 + ...) ^ kOpenSearchVersionMask.
inline constexpr int32_t kOpenSearchVersionMask = 0x08000000;

// The formula the server uses for an index created at `index_version_created` (the raw
// `index.version.created` setting) on `distribution`.
Result<RoutingFunction> SelectRoutingFunction(SearchDistribution distribution,
                                              int32_t index_version_created);

// routing_num_shards the server stores for a new index with `number_of_shards` primaries and no
// explicit index.number_of_routing_shards, no resize source (MetadataCreateIndexService
// .calculateNumRoutingShards): for indices created on Elasticsearch ≥ 7.0.0 or on OpenSearch,
// number_of_shards << max(1, 10 - ceil(log2(number_of_shards))); before 7.0, number_of_shards.
// Prefer the value from the cluster state: shrink, split, clone and explicit settings change it.
// Errors: number_of_shards < 1, index_version_created < 1, or a result above INT32_MAX.
Result<int32_t> DefaultRoutingNumShards(int32_t number_of_shards, int32_t index_version_created);

}  // namespace hammer::search
