#include "hammer/search/route_line.h"

#include <span>

#include "hammer/search/murmur3.h"

namespace hammer::search {
namespace {

std::span<const uint8_t> Bytes(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

}  // namespace

uint32_t SlotHash(const BulkDocument& document) {
  std::string_view basis = document.source;
  if (document.id) {
    basis = *document.id;
  } else if (document.routing) {
    basis = *document.routing;
  }
  return Murmur3X86_32(Bytes(basis), kSlotHashSeed);
}

int64_t RouteKey(int32_t shard, uint32_t slot_hash, int32_t partitions_per_shard) {
  const uint32_t k = static_cast<uint32_t>(partitions_per_shard);
  return int64_t{shard} * partitions_per_shard + static_cast<int64_t>(slot_hash % k);
}

int32_t ShardOfRouteKey(int64_t key, int32_t partitions_per_shard) {
  if (key < 0) return -1;
  return static_cast<int32_t>(key / partitions_per_shard);
}

void AppendRouteLine(std::string* out, int64_t key, const BulkDocument& document,
                     InputFormat format) {
  out->append(std::to_string(key));
  out->push_back('\t');
  if (format == InputFormat::kDocuments) {
    out->append(document.document_line);
  } else {
    const size_t start = out->size();
    out->append(document.action);
    for (size_t i = start; i < out->size(); ++i) {
      if ((*out)[i] == '\t') (*out)[i] = ' ';
    }
    if (document.has_source) {
      out->push_back('\t');
      out->append(document.source);
    }
  }
  out->push_back('\n');
}

}  // namespace hammer::search
