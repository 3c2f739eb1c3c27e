#include "hammer/search/routing_function.h"

#include <algorithm>
#include <bit>
#include <string>

namespace hammer::search {

std::string_view DistributionName(SearchDistribution distribution) {
  switch (distribution) {
    case SearchDistribution::kElasticsearch:
      return "elasticsearch";
    case SearchDistribution::kOpenSearch:
      return "opensearch";
  }
  return "unknown";
}

Result<SearchDistribution> ParseDistribution(std::string_view name) {
  for (SearchDistribution d :
       {SearchDistribution::kElasticsearch, SearchDistribution::kOpenSearch}) {
    if (name == DistributionName(d)) return d;
  }
  return Status::Error("unknown search engine distribution \"" + std::string(name) +
                       "\" (expected \"elasticsearch\" or \"opensearch\")");
}

Result<SearchDistribution> DistributionFromVersionInfo(
    std::optional<std::string_view> version_distribution) {
  if (!version_distribution.has_value()) return SearchDistribution::kElasticsearch;
  return ParseDistribution(*version_distribution);
}

Result<RoutingFunction> SelectRoutingFunction(SearchDistribution distribution,
                                              int32_t index_version_created) {
  if (index_version_created <= 0) {
    return Status::Error("index.version.created must be positive, got " +
                         std::to_string(index_version_created));
  }
  const bool opensearch_id = (index_version_created & kOpenSearchVersionMask) != 0;
  switch (distribution) {
    case SearchDistribution::kOpenSearch:
      // Either created by OpenSearch (masked id) or carried over from Elasticsearch ≤ 7.10.2.
      if (!opensearch_id && index_version_created > kElasticsearchV7_10_2) {
        return Status::Error("index.version.created " + std::to_string(index_version_created) +
                             " is an Elasticsearch version newer than 7.10.2, which OpenSearch "
                             "cannot hold; is the distribution right?");
      }
      return RoutingFunction::kRoutingNumShards;
    case SearchDistribution::kElasticsearch:
      if (opensearch_id) {
        return Status::Error("index.version.created " + std::to_string(index_version_created) +
                             " carries the OpenSearch version mask; is the distribution right?");
      }
      return index_version_created >= kElasticsearchModRoutingFunction
                 ? RoutingFunction::kModuloNumberOfShards
                 : RoutingFunction::kRoutingNumShards;
  }
  return Status::Error("unknown distribution");
}

Result<int32_t> DefaultRoutingNumShards(int32_t number_of_shards, int32_t index_version_created) {
  if (number_of_shards < 1) {
    return Status::Error("number_of_shards must be at least 1, got " +
                         std::to_string(number_of_shards));
  }
  if (index_version_created <= 0) {
    return Status::Error("index.version.created must be positive, got " +
                         std::to_string(index_version_created));
  }
  // Masked OpenSearch ids are all far above 7.0.0, so one comparison serves both engines.
  if (index_version_created < kElasticsearchV7_0_0) return number_of_shards;
  // ceil(log2(n)) as 32 - numberOfLeadingZeros(n - 1); 0 for n = 1.
  const int log2_shards = 32 - std::countl_zero(static_cast<uint32_t>(number_of_shards - 1));
  const int splits = std::max(1, 10 - log2_shards);
  const int64_t routing_num_shards = int64_t{number_of_shards} << splits;
  if (routing_num_shards > INT32_MAX) {
    return Status::Error("default routing_num_shards for " + std::to_string(number_of_shards) +
                         " shards overflows int32");
  }
  return static_cast<int32_t>(routing_num_shards);
}

}  // namespace hammer::search
