#include "hammer/search/document_router.h"

#include <utility>

namespace hammer::search {

DocumentRouter::DocumentRouter(ShardRouter router, std::string target, std::string index,
                               std::optional<std::string> alias_routing)
    : router_(router),
      target_(std::move(target)),
      index_(std::move(index)),
      alias_routing_(std::move(alias_routing)) {}

Result<DocumentRoute> DocumentRouter::Route(const BulkDocument& document) const {
  std::optional<std::string_view> routing = document.routing;
  const bool via_target = !document.index || target_.empty() || *document.index == target_;
  if (!via_target && *document.index != index_) {
    return DocumentRoute{-1, kOtherIndexReason};
  }
  if (via_target && alias_routing_) routing = *alias_routing_;
  if (document.id_unusable) {
    const bool routing_decides =
        routing && !routing->empty() && router_.routing_partition_size() == 1;
    if (!routing_decides) return DocumentRoute{-1, kIdNotStringReason};
  }
  Result<ShardRoute> route =
      router_.Route(document.id_unusable ? std::nullopt : document.id, routing);
  if (!route.ok()) return route.status();
  if (!route->routable())
    return DocumentRoute{-1, UnroutableReasonName(route->unroutable_reason())};
  return DocumentRoute{route->shard(), ""};
}

}  // namespace hammer::search
