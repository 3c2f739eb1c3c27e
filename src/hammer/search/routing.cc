#include "hammer/search/routing.h"

#include <string>

#include "hammer/search/murmur3.h"
#include "hammer/search/utf16.h"

namespace hammer::search {
namespace {

// Java int addition: wraps modulo 2^32. Signed overflow is undefined in C++, so add unsigned;
// the conversion back to int32_t is modular since C++20.
int32_t WrappingAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

}  // namespace

int32_t FloorMod(int32_t value, int32_t modulus) {
  const int32_t remainder = value % modulus;  // modulus > 0, so no INT32_MIN % -1 trap
  return remainder < 0 ? remainder + modulus : remainder;
}

Result<int32_t> HashRoutingValue(std::string_view utf8) {
  // Streams the code units into the hasher: no UTF-16 buffer, one pass.
  Murmur3X86_32Hasher hasher(/*seed=*/0);
  Status status = ForEachUtf16CodeUnit(utf8, [&hasher](char16_t unit) {
    const uint8_t little_endian[2] = {static_cast<uint8_t>(unit & 0xFF),
                                      static_cast<uint8_t>(unit >> 8)};
    hasher.Update(little_endian);
  });
  if (!status.ok()) return status;
  return static_cast<int32_t>(hasher.Finish());
}

std::string_view UnroutableReasonName(UnroutableReason reason) {
  switch (reason) {
    case UnroutableReason::kRoutingFromSource:
      return "routing_from_source";
    case UnroutableReason::kIdAssignedByServer:
      return "id_assigned_by_server";
    case UnroutableReason::kRoutingRequired:
      return "routing_required";
  }
  return "unknown";
}

Result<ShardRouter> ShardRouter::Create(const IndexRoutingSpec& spec) {
  if (spec.number_of_shards < 1) {
    return Status::Error("number_of_shards must be at least 1, got " +
                         std::to_string(spec.number_of_shards));
  }
  if (spec.routing_partition_size < 1) {
    return Status::Error("routing_partition_size must be at least 1, got " +
                         std::to_string(spec.routing_partition_size));
  }
  Result<RoutingFunction> function = SelectRoutingFunction(spec.distribution, spec.version_created);
  if (!function.ok()) return function.status();

  ShardRouter router;
  router.function_ = *function;
  router.number_of_shards_ = spec.number_of_shards;
  router.routing_partition_size_ = spec.routing_partition_size;
  router.has_routing_path_ = spec.has_routing_path;
  if (router.function_ == RoutingFunction::kModuloNumberOfShards) {
    // floorMod(h, n) is the legacy formula with routing_num_shards = n (factor 1).
    router.routing_num_shards_ = spec.number_of_shards;
    router.routing_factor_ = 1;
    return router;
  }
  int32_t routing_num_shards = 0;
  if (spec.routing_num_shards.has_value()) {
    routing_num_shards = *spec.routing_num_shards;
  } else {
    Result<int32_t> computed = DefaultRoutingNumShards(spec.number_of_shards, spec.version_created);
    if (!computed.ok()) return computed.status();
    routing_num_shards = *computed;
  }
  // IndexMetadata.getRoutingFactor asserts the same: an exact, positive multiple.
  if (routing_num_shards < spec.number_of_shards ||
      routing_num_shards % spec.number_of_shards != 0) {
    return Status::Error("routing_num_shards " + std::to_string(routing_num_shards) +
                         " is not a positive multiple of number_of_shards " +
                         std::to_string(spec.number_of_shards));
  }
  router.routing_num_shards_ = routing_num_shards;
  router.routing_factor_ = routing_num_shards / spec.number_of_shards;
  return router;
}

Result<ShardRoute> ShardRouter::Route(std::optional<std::string_view> id,
                                      std::optional<std::string_view> routing) const {
  if (has_routing_path_) return ShardRoute::Unroutable(UnroutableReason::kRoutingFromSource);
  if (routing.has_value() && routing->empty()) routing.reset();
  if (id.has_value() && id->empty()) {
    return Status::Error("if _id is specified it must not be empty");
  }

  // Hash every value given, even one the formula does not use, so that invalid UTF-8 is
  // reported the same way whatever the index settings are.
  std::optional<int32_t> id_hash;
  if (id.has_value()) {
    Result<int32_t> hash = HashRoutingValue(*id);
    if (!hash.ok()) return Status::Error("_id: " + hash.status().message());
    id_hash = *hash;
  }
  std::optional<int32_t> routing_hash;
  if (routing.has_value()) {
    Result<int32_t> hash = HashRoutingValue(*routing);
    if (!hash.ok()) return Status::Error("routing: " + hash.status().message());
    routing_hash = *hash;
  }

  if (routing_partition_size_ > 1) {
    if (!routing_hash.has_value())
      return ShardRoute::Unroutable(UnroutableReason::kRoutingRequired);
    if (!id_hash.has_value()) return ShardRoute::Unroutable(UnroutableReason::kIdAssignedByServer);
    const int32_t offset = FloorMod(*id_hash, routing_partition_size_);
    return ShardRoute::ToShard(ShardForHash(WrappingAdd(*routing_hash, offset)));
  }
  if (routing_hash.has_value()) return ShardRoute::ToShard(ShardForHash(*routing_hash));
  if (id_hash.has_value()) return ShardRoute::ToShard(ShardForHash(*id_hash));
  return ShardRoute::Unroutable(UnroutableReason::kIdAssignedByServer);
}

}  // namespace hammer::search
