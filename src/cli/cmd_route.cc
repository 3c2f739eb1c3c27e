// hammer route: per-document shard assignment, a partitioner for Hadoop and Spark.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "hammer/base/duration.h"
#include "hammer/base/hadoop_reporter.h"
#include "hammer/base/worker_identity.h"
#include "hammer/search/cluster_discovery.h"
#include "hammer/search/cluster_flags.h"
#include "hammer/search/json_text.h"
#include "hammer/search/route_run.h"

namespace hammer::cli {

namespace {

int Usage(const std::string& message) {
  return Complain("route", message, kExitUsage);
}

int Failure(const std::string& message) {
  return Complain("route", message, kExitFailure);
}

// --describe: what a Spark or Hadoop job needs to size itself, as one JSON object.
void Describe(const search::DocumentRouter& router, int32_t partitions_per_shard,
              const search::ClusterView* view) {
  const search::ShardRouter& r = router.shard_router();
  std::string out = "{\"index\":" + search::JsonString(router.index());
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
      out += node < 0 ? "null"
                      : search::JsonString(view->nodes[static_cast<size_t>(node)].http_address);
    }
    out += "]";
  }
  out += "}\n";
  std::fputs(out.c_str(), stdout);
}

}  // namespace

int RunRoute(int argc, char** argv) {
  CLI::App app{
      "Assign each document to the primary shard Elasticsearch/OpenSearch will store it in.\n\n"
      "Input (FILE or - for stdin): a _bulk body (action line + source line; delete has no\n"
      "source), or one JSON document per line with --id-field. Output (stdout), in input order:\n"
      "  KEY<TAB>PAYLOAD      KEY = shard*K + slot (K = --partitions-per-shard, slot = a hash\n"
      "                       of the _id mod K), or -1 when the shard cannot be known;\n"
      "                       PAYLOAD = action<TAB>source (delete: action), or the document line.\n"
      "Feed it to Hadoop (KeyFieldBasedPartitioner) or Spark (partitionBy(KEY)), then run\n"
      "'hammer bulk --from-route' in each partition. Counts go to stderr.\n\n"
      "Examples:\n"
      "  hammer route --cluster http://127.0.0.1:9200 --index logs bulk.ndjson\n"
      "  hammer route --shards 6 --id-field id docs.jsonl           (offline, default rns)\n"
      "  hammer route --cluster http://es:9200 --index logs --describe",
      "hammer route"};
  std::string input = "-";
  std::string cluster_text, index;
  int32_t shards = 0, routing_shards = 0, partition_size = 1, version_created = 0;
  std::string distribution_text;
  search::RouteOptions options;
  std::string op_text = "index";
  std::vector<std::string> header_flags;
  std::string timeout_text = "10s", connect_timeout_text = "5s";
  std::string max_line_text = "64m";
  bool insecure = false, quiet = false, describe = false;
  http::ClientOptions client_options;

  app.add_option("file", input, "input (default: standard input)");
  app.add_option("--cluster", cluster_text,
                 "node URL(s), comma-separated: read the index's routing and placement");
  app.add_option("--index", index, "index or alias (alias index_routing is applied)");
  app.add_option("--shards", shards, "offline: number_of_shards")->check(CLI::Range(1, 1 << 20));
  app.add_option("--routing-shards", routing_shards,
                 "offline: routing_num_shards (default: computed for an index created on "
                 "Elasticsearch 7+ or OpenSearch)")
      ->check(CLI::Range(1, INT32_MAX));
  app.add_option("--partition-size", partition_size, "offline: index.routing_partition_size")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--distribution", distribution_text, "offline: elasticsearch | opensearch");
  app.add_option("--version-created", version_created,
                 "offline: index.version.created (Elasticsearch >= 9064000 routes modulo shards)")
      ->check(CLI::Range(1, INT32_MAX));
  app.add_option("--id-field", options.input.id_field,
                 "one document per line; its _id is this field (dotted path)");
  app.add_option("--routing-field", options.input.routing_field,
                 "with --id-field: the routing value is this field");
  app.add_option("--op", op_text, "with --id-field: the action, index or create")
      ->capture_default_str();
  app.add_flag("--from-route", options.input.from_route, "input is KEY<TAB>PAYLOAD route lines");
  app.add_option("-k,--partitions-per-shard", options.partitions_per_shard,
                 "spread each shard over K partitions (keys shard*K .. shard*K+K-1)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--dead-letter", options.dead_letter_path,
                 "write rejected input here, one JSON object per line ({pid}: process id)");
  app.add_option("--max-line-bytes", max_line_text, "longest input line")->capture_default_str();
  app.add_option("-H,--header", header_flags, "header for cluster requests ('Name: value')");
  app.add_flag("--insecure", insecure, "https: do not verify certificates");
  app.add_option("--cacert", client_options.tls.ca_file, "https: trust these CA certificates");
  app.add_option("--timeout", timeout_text, "per cluster request")->capture_default_str();
  app.add_option("--connect-timeout", connect_timeout_text, "TCP connect timeout")
      ->capture_default_str();
  app.add_flag("--describe", describe,
               "print the index's routing (shards, partitions, primaries) as JSON and exit");
  app.add_flag("-q,--quiet", quiet, "no summary on stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  if (Status ok = search::ApplyDocumentFlags(op_text, &options.input); !ok.ok())
    return Usage(ok.message());
  options.input_path = input;
  Result<uint64_t> max_line = search::ParseByteSize(max_line_text);
  if (!max_line.ok() || *max_line < 1024) return Usage("--max-line-bytes: invalid");
  options.max_line_bytes = *max_line;
  if (insecure) client_options.tls.verify = false;
  Result<Nanos> connect_timeout = ParseDuration(connect_timeout_text);
  if (!connect_timeout.ok() || *connect_timeout == 0) return Usage("--connect-timeout: invalid");
  client_options.connect_timeout = *connect_timeout;

  const bool online = !cluster_text.empty();
  std::optional<search::ClusterView> view;
  std::optional<search::DocumentRouter> router;
  if (online) {
    if (shards > 0 || routing_shards > 0 || !distribution_text.empty() || version_created > 0) {
      return Usage("--cluster reads the routing from the cluster; drop --shards and friends");
    }
    search::DiscoveryOptions discovery;
    Result<std::vector<http::Url>> urls = search::ParseClusterUrls(cluster_text);
    if (!urls.ok()) return Usage("--cluster: " + urls.status().message());
    discovery.seeds = std::move(*urls);
    if (Status ok = search::CheckTargetName(index); !ok.ok())
      return Usage("--index: " + ok.message());
    discovery.target = index;
    Result<http::HeaderList> headers = search::ParseHeaderFlags(header_flags);
    if (!headers.ok()) return Usage("--header: " + headers.status().message());
    discovery.headers = std::move(*headers);
    Result<Nanos> timeout = ParseDuration(timeout_text);
    if (!timeout.ok() || *timeout == 0) return Usage("--timeout: invalid");
    discovery.timeout = *timeout;
    Result<search::ClusterView> found = search::DiscoverNow(discovery, client_options);
    if (!found.ok()) return Failure(found.status().message());
    Result<search::ShardRouter> shard_router = search::ShardRouter::Create(found->metadata.spec);
    if (!shard_router.ok())
      return Failure("index " + found->resolved.index + ": " + shard_router.status().message());
    view = std::move(*found);
    router.emplace(*shard_router, index, view->resolved.index, view->resolved.index_routing);
  } else {
    if (shards == 0) return Usage("give --cluster URL --index NAME, or --shards N (offline)");
    search::IndexRoutingSpec spec;
    spec.number_of_shards = shards;
    spec.routing_partition_size = partition_size;
    if (routing_shards > 0) spec.routing_num_shards = routing_shards;
    if (!distribution_text.empty()) {
      Result<search::SearchDistribution> d = search::ParseDistribution(distribution_text);
      if (!d.ok()) return Usage("--distribution: " + d.status().message());
      spec.distribution = *d;
    }
    // Without --version-created: an index made by Elasticsearch 7.0..9.2 or OpenSearch, which
    // all use the routing_num_shards formula.
    spec.version_created = version_created > 0 ? version_created
                           : spec.distribution == search::SearchDistribution::kOpenSearch
                               ? (2'00'00'99 ^ search::kOpenSearchVersionMask)
                               : search::kElasticsearchV7_0_0;
    Result<search::ShardRouter> shard_router = search::ShardRouter::Create(spec);
    if (!shard_router.ok()) return Usage(shard_router.status().message());
    router.emplace(*shard_router, index, index, std::nullopt);
  }
  if (describe) {
    Describe(*router, options.partitions_per_shard, view ? &*view : nullptr);
    return kExitOk;
  }

  Result<search::RouteStats> stats = search::RunRoute(options, *router, STDOUT_FILENO);
  if (!stats.ok()) return Failure(stats.status().message());
  if (!quiet) std::fputs(search::FormatRouteSummary(*stats).c_str(), stderr);
  HadoopReporter hadoop(DetectWorkerIdentity().in_hadoop());
  hadoop.Counter("hammer_route", "routed", stats->routed);
  hadoop.Counter("hammer_route", "unroutable", stats->unroutable);
  hadoop.Counter("hammer_route", "dead_lettered", stats->invalid_input);
  return kExitOk;
}

}  // namespace hammer::cli
