#include "hammer/search/route_command.h"

#include <cstdio>
#include <utility>

#include "hammer/base/duration.h"
#include "hammer/base/hadoop_reporter.h"
#include "hammer/base/worker_identity.h"
#include "hammer/base/write_all.h"
#include "hammer/search/cluster_flags.h"
#include "hammer/search/json_text.h"

namespace hammer::search {

std::string DescribeRouting(const DocumentRouter& router, int32_t partitions_per_shard,
                            const ClusterView* view) {
  const ShardRouter& r = router.shard_router();
  std::string out = "{\"index\":" + JsonString(router.index());
  out += ",\"number_of_shards\":" + std::to_string(r.number_of_shards());
  out += ",\"routing_num_shards\":" + std::to_string(r.routing_num_shards());
  out += ",\"routing_partition_size\":" + std::to_string(r.routing_partition_size());
  out += ",\"partitions_per_shard\":" + std::to_string(partitions_per_shard);
  out += ",\"partitions\":" + std::to_string(int64_t{r.number_of_shards()} * partitions_per_shard);
  if (view != nullptr) {
    out += ",\"primaries\":[";
    for (int32_t shard = 0; shard < r.number_of_shards(); ++shard) {
      const int node = view->PrimaryNodeIndex(shard);
      out += shard == 0 ? "" : ",";
      out += node < 0 ? "null" : JsonString(view->nodes[static_cast<size_t>(node)].http_address);
    }
    out += "]";
  }
  out += "}\n";
  return out;
}

Result<RouteCommand> RouteCommand::Create(const RouteFlags& flags) {
  RouteCommand command;
  command.options_ = flags.route;
  command.index_ = flags.index;
  command.quiet_ = flags.quiet;
  command.describe_ = flags.describe;
  if (Status ok = ApplyDocumentFlags(flags.op, &command.options_.input); !ok.ok()) return ok;
  if (Status ok = ApplyIdFromPosition(flags.id_from_position, flags.input, &command.options_.input);
      !ok.ok()) {
    return ok;
  }
  command.options_.input_path = flags.input;
  Result<uint64_t> max_line = ParseByteSize(flags.max_line_bytes);
  if (!max_line.ok() || *max_line < 1024) return Status::Error("--max-line-bytes: invalid");
  command.options_.max_line_bytes = *max_line;
  command.client_.tls.ca_file = flags.cacert;
  if (flags.insecure) command.client_.tls.verify = false;
  Result<Nanos> connect_timeout = ParseDuration(flags.connect_timeout);
  if (!connect_timeout.ok() || *connect_timeout == 0) {
    return Status::Error("--connect-timeout: invalid");
  }
  command.client_.connect_timeout = *connect_timeout;

  if (!flags.cluster.empty()) {
    if (flags.shards > 0 || flags.routing_shards > 0 || !flags.distribution.empty() ||
        flags.version_created > 0) {
      return Status::Error(
          "--cluster reads the routing from the cluster; drop --shards and friends");
    }
    DiscoveryOptions discovery;
    Result<std::vector<http::Url>> urls = ParseClusterUrls(flags.cluster);
    if (!urls.ok()) return Status::Error("--cluster: " + urls.status().message());
    discovery.seeds = std::move(*urls);
    if (Status ok = CheckTargetName(flags.index); !ok.ok()) {
      return Status::Error("--index: " + ok.message());
    }
    discovery.target = flags.index;
    Result<http::HeaderList> headers = http::ParseHeaderFlags(flags.headers);
    if (!headers.ok()) return Status::Error("--header: " + headers.status().message());
    discovery.headers = std::move(*headers);
    Result<Nanos> timeout = ParseDuration(flags.timeout);
    if (!timeout.ok() || *timeout == 0) return Status::Error("--timeout: invalid");
    discovery.timeout = *timeout;
    command.discovery_ = std::move(discovery);
    return command;
  }

  if (flags.shards == 0)
    return Status::Error("give --cluster URL --index NAME, or --shards N (offline)");
  IndexRoutingSpec spec;
  spec.number_of_shards = flags.shards;
  spec.routing_partition_size = flags.partition_size;
  if (flags.routing_shards > 0) spec.routing_num_shards = flags.routing_shards;
  if (!flags.distribution.empty()) {
    Result<SearchDistribution> d = ParseDistribution(flags.distribution);
    if (!d.ok()) return Status::Error("--distribution: " + d.status().message());
    spec.distribution = *d;
  }
  // Without --version-created: an index made by Elasticsearch 7.0..9.2 or OpenSearch, which
  // all use the routing_num_shards formula.
  spec.version_created = flags.version_created > 0 ? flags.version_created
                         : spec.distribution == SearchDistribution::kOpenSearch
                             ? (2'00'00'99 ^ kOpenSearchVersionMask)
                             : kElasticsearchV7_0_0;
  Result<ShardRouter> shard_router = ShardRouter::Create(spec);
  if (!shard_router.ok()) return shard_router.status();
  command.router_.emplace(*shard_router, flags.index, flags.index, std::nullopt);
  return command;
}

Status RouteCommand::Discover() {
  Result<ClusterView> found = DiscoverNow(*discovery_, client_);
  if (!found.ok()) return found.status();
  Result<ShardRouter> shard_router = ShardRouter::Create(found->metadata.spec);
  if (!shard_router.ok()) {
    return Status::Error("index " + found->resolved.index + ": " + shard_router.status().message());
  }
  view_ = std::move(*found);
  router_.emplace(*shard_router, index_, view_->resolved.index, view_->resolved.index_routing);
  return Status::Ok();
}

Status RouteCommand::Run(int out_fd) {
  if (discovery_) {
    if (Status ok = Discover(); !ok.ok()) return ok;
  }
  if (describe_) {
    return WriteAll(
        out_fd, DescribeRouting(*router_, options_.partitions_per_shard, view_ ? &*view_ : nullptr),
        "cannot write to standard output");
  }
  Result<RouteStats> stats = RunRoute(options_, *router_, out_fd);
  if (!stats.ok()) return stats.status();
  if (!quiet_) std::fputs(FormatRouteSummary(*stats).c_str(), stderr);
  HadoopReporter hadoop(DetectWorkerIdentity().in_hadoop());
  hadoop.Counter("hammer_route", "routed", stats->routed);
  hadoop.Counter("hammer_route", "unroutable", stats->unroutable);
  hadoop.Counter("hammer_route", "dead_lettered", stats->invalid_input);
  return Status::Ok();
}

}  // namespace hammer::search
