// ShardRouter: predicts, on the client, the primary shard Elasticsearch or OpenSearch will pick for
// a document, so a bulk writer can send each document straight to the node holding its primary.
//
// The algorithm (Elasticsearch's IndexRouting and Murmur3HashFunction; OpenSearch's
// OperationRouting.generateShardId), for an index without routing_path:
//   h     = Murmur3HashFunction.hash(routing if present, else _id)       (HashRoutingValue)
//   if routing_partition_size p > 1:
//     h   = int32_wrap(hash(routing) + floorMod(hash(_id), p))           (routing is required)
//   shard = floorMod(h, routing_num_shards) / (routing_num_shards / number_of_shards)
//           or floorMod(h, number_of_shards) for RoutingFunction::kModuloNumberOfShards.
// A wrong prediction costs one extra hop on the server, never correctness; but this class never
// guesses: documents whose shard the client cannot know get an explicit Unroutable result.
//
// Errors: invalid index metadata is rejected by Create(); an _id or routing that is not valid
// UTF-8, or an empty _id (the server rejects it too), makes Route() return an error Status.
// Ownership: IndexRoutingSpec and ShardRouter are small values; Route() only reads its arguments
// during the call.
// Threads: a ShardRouter is immutable after Create(); any number of threads may call its const
// methods concurrently. The free functions are pure and reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "hammer/base/status.h"
#include "hammer/search/routing_function.h"

namespace hammer::search {

// Java's Math.floorMod(value, modulus) for modulus > 0: the result is always in [0, modulus),
// also for negative values (unlike %, and unlike an unsigned remainder unless modulus is a power
// of two).
int32_t FloorMod(int32_t value, int32_t modulus);

// Elasticsearch/OpenSearch Murmur3HashFunction.hash(String) of the string whose UTF-8 encoding is
// `utf8`: MurmurHash3 x86_32, seed 0, over each UTF-16 code unit as 2 little-endian bytes, read as
// a signed int32. Errors: invalid UTF-8 (see utf16.h). A Java String holding a lone surrogate
// (possible through a JSON "\ud800" escape) has no UTF-8 form, so it cannot be hashed here.
Result<int32_t> HashRoutingValue(std::string_view utf8);

// Why a document has no client-side shard. The caller should send it to any node.
enum class UnroutableReason {
  // The index has index.routing_path (time series, some LogsDB): the shard is hashed from
  // _source fields with a different algorithm.
  kRoutingFromSource,
  // No _id: the server generates one, and the shard depends on it (no routing given, or the
  // index is partitioned and the offset is hashed from the _id).
  kIdAssignedByServer,
  // Partitioned index (routing_partition_size > 1) without routing: the server rejects the
  // document ("routing is required").
  kRoutingRequired,
};

// A stable lower_snake_case name for reports, e.g. "routing_from_source".
std::string_view UnroutableReasonName(UnroutableReason reason);

// Outcome of ShardRouter::Route: a shard number, or the reason there is none.
class ShardRoute {
 public:
  static ShardRoute ToShard(int32_t shard) { return ShardRoute(shard); }
  static ShardRoute Unroutable(UnroutableReason reason) { return ShardRoute(reason); }

  bool routable() const { return std::holds_alternative<int32_t>(value_); }
  // Requires routable().
  int32_t shard() const { return std::get<int32_t>(value_); }
  // Requires !routable().
  UnroutableReason unroutable_reason() const { return std::get<UnroutableReason>(value_); }

  bool operator==(const ShardRoute&) const = default;

 private:
  explicit ShardRoute(std::variant<int32_t, UnroutableReason> value) : value_(value) {}
  std::variant<int32_t, UnroutableReason> value_;
};

// The routing-relevant metadata of one concrete index, as read from the cluster
// (`GET _cluster/state/metadata/<index>` and `GET /` for the distribution).
struct IndexRoutingSpec {
  SearchDistribution distribution = SearchDistribution::kElasticsearch;
  int32_t version_created = 0;   // settings.index.version.created
  int32_t number_of_shards = 0;  // settings.index.number_of_shards
  // routing_num_shards from the cluster state. When absent, DefaultRoutingNumShards() for
  // version_created is assumed, which is wrong after shrink/split/clone or an explicit
  // index.number_of_routing_shards. Ignored by RoutingFunction::kModuloNumberOfShards.
  std::optional<int32_t> routing_num_shards;
  int32_t routing_partition_size = 1;  // settings.index.routing_partition_size
  bool has_routing_path = false;       // settings.index.routing_path is set
};

class ShardRouter {
 public:
  // Validates `spec` and fixes the formula. Errors: number_of_shards < 1,
  // routing_partition_size < 1, a version/distribution SelectRoutingFunction rejects, or (for
  // the routing_num_shards formula) a routing_num_shards that is not a positive multiple of
  // number_of_shards.
  static Result<ShardRouter> Create(const IndexRoutingSpec& spec);

  // The primary shard for a document with `id` (_id) and `routing` (_routing, after alias
  // index_routing has been applied). An empty routing counts as none, as in the server's
  // IndexRequest.routing(""). Errors: invalid UTF-8 in either value, or an empty id.
  Result<ShardRoute> Route(std::optional<std::string_view> id,
                           std::optional<std::string_view> routing) const;

  // The last step alone: the shard for an (already partition-offset) routing hash.
  int32_t ShardForHash(int32_t hash) const {
    return FloorMod(hash, routing_num_shards_) / routing_factor_;
  }

  RoutingFunction function() const { return function_; }
  int32_t number_of_shards() const { return number_of_shards_; }
  // The modulus in effect: number_of_shards under kModuloNumberOfShards.
  int32_t routing_num_shards() const { return routing_num_shards_; }
  int32_t routing_factor() const { return routing_factor_; }
  int32_t routing_partition_size() const { return routing_partition_size_; }

 private:
  ShardRouter() = default;

  RoutingFunction function_ = RoutingFunction::kRoutingNumShards;
  int32_t number_of_shards_ = 1;
  int32_t routing_num_shards_ = 1;
  int32_t routing_factor_ = 1;
  int32_t routing_partition_size_ = 1;
  bool has_routing_path_ = false;
};

}  // namespace hammer::search
