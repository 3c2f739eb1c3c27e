// libFuzzer target for the JSON answers `hammer bulk` reads: the _bulk response
// (BulkResponseParser) and the discovery answers (cluster_view.h parsers).
//
// Input layout: byte 0 is the number of actions the response must describe (0-255) and the
// number of shards (1 + byte % 16) for the placement parser; the rest is the body.
// Traps (besides crashes, sanitizer reports and escaping simdjson exceptions) when: a parse
// that succeeds yields another number of items than expected, an item status outside
// 100..599, an error item without a reason; a placement with another size than the shard
// count; a node without an id or an address.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hammer/search/bulk_response.h"
#include "hammer/search/cluster_view.h"

namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hammer::search;
  if (size < 1) return 0;
  const size_t expected = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);

  static BulkResponseParser parser;
  BulkResponse response;
  if (parser.Parse(body, expected, &response).ok()) {
    Check(response.items.size() == expected);
    for (const BulkItemResult& item : response.items) {
      Check(item.status >= 100 && item.status <= 599);
      if (!item.ok() && item.status != 404) Check(!item.reason.empty());
      (void)IsRetryableItemFailure(item.status, item.error_type);
    }
  }

  (void)ParseServerInfo(body);
  (void)ParseAliasTarget(body, "a");
  (void)ParseIndexMetadata(body, "t", SearchDistribution::kOpenSearch);
  const int32_t shards = 1 + data[0] % 16;
  hammer::Result<std::vector<std::string>> placement = ParsePrimaryPlacement(body, "t", shards);
  if (placement.ok()) Check(placement->size() == static_cast<size_t>(shards));
  hammer::Result<std::vector<ClusterNode>> nodes = ParseHttpNodes(body);
  if (nodes.ok()) {
    for (const ClusterNode& node : *nodes)
      Check(!node.id.empty());
  }
  return 0;
}
