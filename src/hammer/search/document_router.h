// DocumentRouter: the primary shard of one bulk document for one target (index or alias), or
// why hammer cannot know it. ShardRouter does the arithmetic; this class decides which _id and
// routing the server will see for the document:
//  * alias `index_routing` overrides the document's routing when the document targets the alias
//    (no _index, or _index equal to the alias): the server does the same and rejects a
//    different explicit routing, which then fails as an item error, never silently;
//  * a document whose _index names another index is unroutable ("other_index");
//  * an _id that is neither a string nor an integer is unroutable when the shard depends on it
//    ("id_not_string");
//  * the rest is ShardRouter::Route (routing_path indices, id-less documents and missing
//    routing on partitioned indices are unroutable with ShardRouter's reasons).
//
// Errors: Route() returns an error Status for a document the server would reject for its
// _id/routing (an empty _id); the caller dead-letters it.
// Ownership and threads: an immutable value after construction; const methods may be called
// from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hammer/base/status.h"
#include "hammer/search/bulk_input.h"
#include "hammer/search/routing.h"

namespace hammer::search {

struct DocumentRoute {
  int32_t shard = -1;       // -1: unroutable
  std::string_view reason;  // unroutable: a stable lower_snake_case name; else ""
  bool routable() const { return shard >= 0; }
};

inline constexpr std::string_view kOtherIndexReason = "other_index";
inline constexpr std::string_view kIdNotStringReason = "id_not_string";

class DocumentRouter {
 public:
  // `target`: the name documents are sent to (what the user named: index or alias); empty
  // when unknown (offline routing), and then every document counts as one for this index.
  // `index`: the concrete index it resolves to (== target when it is an index).
  // `alias_routing`: the alias's index_routing, if any.
  DocumentRouter(ShardRouter router, std::string target, std::string index,
                 std::optional<std::string> alias_routing);

  Result<DocumentRoute> Route(const BulkDocument& document) const;

  const ShardRouter& shard_router() const { return router_; }
  int32_t number_of_shards() const { return router_.number_of_shards(); }
  const std::string& target() const { return target_; }
  const std::string& index() const { return index_; }
  const std::optional<std::string>& alias_routing() const { return alias_routing_; }

 private:
  ShardRouter router_;
  std::string target_;
  std::string index_;
  std::optional<std::string> alias_routing_;
};

}  // namespace hammer::search
