// RouteCommand: everything `hammer route` does besides reading its command line, so that the
// CLI (src/cli/cmd_route.cc) only fills RouteFlags and maps the outcome to an exit status.
//
// Create() checks the flags (usage errors: one line naming the flag) and, offline (--shards),
// builds the router. Run() reads the cluster's view of the index when --cluster is given
// (ClusterDiscovery), then writes the routing as JSON (--describe) or routes the input
// (RunRoute) to `out_fd`, prints the summary on stderr unless quiet, and in a Hadoop task adds
// the counters hammer_route,{routed,unroutable,dead_lettered}. Run's errors: the cluster could
// not be read, the input could not be read, the output could not be written. Threads: the
// caller's (discovery runs its own event loop until it has answered).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/http/client.h"
#include "hammer/search/cluster_discovery.h"
#include "hammer/search/cluster_view.h"
#include "hammer/search/document_router.h"
#include "hammer/search/route_run.h"

namespace hammer::search {

// `hammer route`'s flags as given (numbers as CLI11 read them, the rest as typed).
struct RouteFlags {
  std::string input = "-";
  std::string cluster;  // --cluster URL[,URL...]: online
  std::string index;
  int32_t shards = 0;  // offline: --shards and friends
  int32_t routing_shards = 0;
  int32_t partition_size = 1;
  int32_t version_created = 0;
  std::string distribution;
  RouteOptions route;  // --id-field, --routing-field, --from-route, -k, --dead-letter
  std::string op = "index";
  std::vector<std::string> headers;  // "Name: value"
  std::string timeout = "10s";
  std::string connect_timeout = "5s";
  std::string max_line_bytes = "64m";
  std::string cacert;
  bool insecure = false;
  bool quiet = false;
  bool describe = false;
  bool id_from_position = false;
};

// --describe: what a Spark or Hadoop job needs to size itself, as one JSON object with a '\n':
// {"index", "number_of_shards", "routing_num_shards", "routing_partition_size",
//  "partitions_per_shard", "partitions", "primaries" (with a view: each shard's primary node's
//  HTTP address, or null)}.
std::string DescribeRouting(const DocumentRouter& router, int32_t partitions_per_shard,
                            const ClusterView* view);

class RouteCommand {
 public:
  static Result<RouteCommand> Create(const RouteFlags& flags);

  Status Run(int out_fd);

 private:
  RouteCommand() = default;
  Status Discover();

  RouteOptions options_;
  http::ClientOptions client_;
  std::optional<DiscoveryOptions> discovery_;  // online
  std::optional<ClusterView> view_;
  std::optional<DocumentRouter> router_;
  std::string index_;
  bool quiet_ = false;
  bool describe_ = false;
};

}  // namespace hammer::search
