// ClusterView: what shard-aware writing needs to know about a cluster and one target index,
// and the parsers that read it from the REST answers (cluster_discovery.h does the fetching).
//
//   GET /                                   → distribution ("opensearch" or Elasticsearch), version
//   GET /_alias/<target>                    → 404: the target is an index; 200: the alias's write
//                                             index and its index_routing
//   GET /_cluster/state/metadata/<index>    → routing_num_shards, number_of_shards,
//                                             version.created, routing_partition_size,
//                                             routing_path, default/final pipeline
//   GET /_cat/shards/<index>?format=json    → the node id of each primary
//   GET /_nodes/http                        → node id → name, HTTP publish address
//
// Errors: every Parse* returns an error naming what is missing or malformed ("index t6 not
// found", "alias a points to 2 indices and none is the write index", ...). Nothing is guessed:
// an unassigned primary is "" (not a node), a node without HTTP is left out.
// Ownership: plain values. Threads: parsers are reentrant (each call uses its own parser).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/search/routing.h"
#include "hammer/search/routing_function.h"

namespace hammer::search {

struct ClusterNode {
  std::string id;
  std::string name;
  std::string http_address;  // "host:port" (the part of publish_address after any '/')
};

struct ServerInfo {
  SearchDistribution distribution = SearchDistribution::kElasticsearch;
  std::string version;  // version.number
};

struct IndexTarget {
  std::string index;  // the concrete (write) index
  bool is_alias = false;
  std::optional<std::string> index_routing;  // the alias's index_routing
};

struct IndexMetadata {
  IndexRoutingSpec spec;
  std::string default_pipeline;  // index.default_pipeline ("" or "_none": none)
  std::string final_pipeline;    // index.final_pipeline
};

struct ClusterView {
  ServerInfo server;
  std::string target;  // the name the user gave (index or alias)
  IndexTarget resolved;
  IndexMetadata metadata;
  std::vector<std::string> primary_node_ids;  // per shard; "" while unassigned
  std::vector<ClusterNode> nodes;             // nodes with HTTP, by name

  // Index into `nodes` of the node holding shard `shard`'s primary, or -1.
  int PrimaryNodeIndex(int32_t shard) const;
  // Index into `nodes` of the node with this id, or -1.
  int NodeIndexById(std::string_view id) const;
};

Result<ServerInfo> ParseServerInfo(std::string_view body);
// `target` is the alias name asked for. Call only with a 200 answer (404 means "not an alias").
Result<IndexTarget> ParseAliasTarget(std::string_view body, std::string_view target);
Result<IndexMetadata> ParseIndexMetadata(std::string_view body, std::string_view index,
                                         SearchDistribution distribution);
// Primary node ids per shard, from _cat/shards JSON (h=index,shard,prirep,state,id).
Result<std::vector<std::string>> ParsePrimaryPlacement(std::string_view body,
                                                       std::string_view index,
                                                       int32_t number_of_shards);
Result<std::vector<ClusterNode>> ParseHttpNodes(std::string_view body);

// Percent-encodes a path segment (index and alias names may hold '+', '%', non-ASCII).
std::string EncodePathSegment(std::string_view segment);

}  // namespace hammer::search
