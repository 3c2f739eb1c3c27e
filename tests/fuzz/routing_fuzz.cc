// libFuzzer target for the client-side shard routing path: UTF-8 → UTF-16 → murmur3 → shard.
//
// Input layout: 4 parameter bytes, then the _id and the routing value separated by the first
// '\n' (no '\n': everything is the _id).
//   byte 0: number_of_shards = 1 + b % 64
//   byte 1: bits 0-1 index version (ES 8.10 legacy, ES 9_064_0_00 modulo, OpenSearch 2.19,
//           ES 6.8); bit 2 explicit routing_num_shards = n << (1 + (b >> 3) % 6), else default
//   byte 2: routing_partition_size = 1 + b % 8
//   byte 3: bit 0 _id present, bit 1 routing present, bit 2 index.routing_path set
// Checks, with independent arithmetic (int64, no shared helpers beyond the hash): the decoder
// round-trips valid UTF-8 and rejects exactly what the hash rejects; the streaming hash equals
// the one-shot hash of the UTF-16LE bytes; Route() returns the expected error, unroutable reason
// or shard, and the shard is in [0, number_of_shards).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/search/murmur3.h"
#include "hammer/search/routing.h"
#include "hammer/search/utf16.h"

namespace {

using hammer::search::IndexRoutingSpec;
using hammer::search::RoutingFunction;
using hammer::search::SearchDistribution;
using hammer::search::ShardRoute;
using hammer::search::ShardRouter;
using hammer::search::UnroutableReason;

void Check(bool condition) {
  if (!condition) std::abort();
}

// UTF-16 → UTF-8, written independently of the decoder under test.
std::string EncodeUtf8(const std::u16string& utf16) {
  std::string out;
  for (size_t i = 0; i < utf16.size(); ++i) {
    uint32_t c = utf16[i];
    if (c >= 0xD800 && c <= 0xDBFF) {
      Check(i + 1 < utf16.size() && utf16[i + 1] >= 0xDC00 && utf16[i + 1] <= 0xDFFF);
      c = 0x10000 + ((c - 0xD800) << 10) + (utf16[++i] - 0xDC00);
    } else {
      Check(c < 0xDC00 || c > 0xDFFF);  // no lone low surrogate
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

int64_t FloorMod64(int64_t value, int64_t modulus) {
  return ((value % modulus) + modulus) % modulus;
}

// Checks the hash of one value; returns it, or nullopt when the value is not valid UTF-8.
std::optional<int32_t> CheckedHash(std::string_view utf8) {
  hammer::Result<std::u16string> utf16 = hammer::search::Utf8ToUtf16(utf8);
  hammer::Result<int32_t> hash = hammer::search::HashRoutingValue(utf8);
  Check(utf16.ok() == hash.ok());
  if (!utf16.ok()) return std::nullopt;
  Check(EncodeUtf8(*utf16) == utf8);
  std::vector<uint8_t> bytes;
  for (char16_t unit : *utf16) {
    bytes.push_back(static_cast<uint8_t>(unit & 0xFF));
    bytes.push_back(static_cast<uint8_t>(unit >> 8));
  }
  Check(static_cast<int32_t>(hammer::search::Murmur3X86_32(bytes, 0)) == *hash);
  hammer::search::Murmur3X86_32Hasher split;  // an uneven split exercises the pending bytes
  const size_t cut = bytes.size() / 3;
  split.Update(std::span(bytes.data(), cut));
  split.Update(std::span(bytes.data() + cut, bytes.size() - cut));
  Check(static_cast<int32_t>(split.Finish()) == *hash);
  return *hash;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 4), size - 4);
  const size_t newline = text.find('\n');
  const std::string_view id_text = text.substr(0, newline);
  const std::string_view routing_text =
      newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);

  IndexRoutingSpec spec;
  spec.number_of_shards = 1 + data[0] % 64;
  const int32_t versions[] = {8'10'04'99, 9'064'0'00, 2'19'00'99 ^ 0x08000000, 6'08'23'99};
  spec.version_created = versions[data[1] & 3];
  spec.distribution =
      (data[1] & 3) == 2 ? SearchDistribution::kOpenSearch : SearchDistribution::kElasticsearch;
  if (data[1] & 4) spec.routing_num_shards = spec.number_of_shards << (1 + (data[1] >> 3) % 6);
  spec.routing_partition_size = 1 + data[2] % 8;
  spec.has_routing_path = (data[3] & 4) != 0;
  const std::optional<std::string_view> id = (data[3] & 1) ? std::optional(id_text) : std::nullopt;
  const std::optional<std::string_view> routing =
      (data[3] & 2) ? std::optional(routing_text) : std::nullopt;

  const std::optional<int32_t> id_hash = CheckedHash(id_text);
  const std::optional<int32_t> routing_hash = CheckedHash(routing_text);

  hammer::Result<ShardRouter> router = ShardRouter::Create(spec);
  Check(router.ok());
  hammer::Result<ShardRoute> route = router->Route(id, routing);

  if (spec.has_routing_path) {
    Check(route.ok() && *route == ShardRoute::Unroutable(UnroutableReason::kRoutingFromSource));
    return 0;
  }
  const bool has_id = id.has_value();
  const bool has_routing = routing.has_value() && !routing->empty();
  if ((has_id && id->empty()) || (has_id && !id_hash) || (has_routing && !routing_hash)) {
    Check(!route.ok());
    return 0;
  }
  Check(route.ok());
  int64_t hash = 0;
  if (spec.routing_partition_size > 1) {
    if (!has_routing) {
      Check(*route == ShardRoute::Unroutable(UnroutableReason::kRoutingRequired));
      return 0;
    }
    if (!has_id) {
      Check(*route == ShardRoute::Unroutable(UnroutableReason::kIdAssignedByServer));
      return 0;
    }
    hash = int64_t{*routing_hash} + FloorMod64(*id_hash, spec.routing_partition_size);
    if (hash > INT32_MAX) hash -= int64_t{1} << 32;
  } else if (has_routing) {
    hash = *routing_hash;
  } else if (has_id) {
    hash = *id_hash;
  } else {
    Check(*route == ShardRoute::Unroutable(UnroutableReason::kIdAssignedByServer));
    return 0;
  }
  const int64_t n = spec.number_of_shards;
  int64_t expected = 0;
  if (router->function() == RoutingFunction::kModuloNumberOfShards) {
    expected = FloorMod64(hash, n);
  } else {
    const int64_t rns = router->routing_num_shards();
    expected = FloorMod64(hash, rns) / (rns / n);
  }
  Check(route->routable() && route->shard() == expected && expected >= 0 && expected < n);
  return 0;
}
