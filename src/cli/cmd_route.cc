// hammer route: per-document shard assignment, a partitioner for Hadoop and Spark.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "hammer/search/route_command.h"

namespace hammer::cli {

namespace {

constexpr const char* kDescription =
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
    "  hammer route --cluster http://es:9200 --index logs --describe";

void AddRouteFlags(CLI::App& app, search::RouteFlags& f) {
  app.add_option("file", f.input, "input (default: standard input)");
  app.add_option("--cluster", f.cluster,
                 "node URL(s), comma-separated: read the index's routing and placement");
  app.add_option("--index", f.index, "index or alias (alias index_routing is applied)");
  app.add_option("--shards", f.shards, "offline: number_of_shards")->check(CLI::Range(1, 1 << 20));
  app.add_option("--routing-shards", f.routing_shards,
                 "offline: routing_num_shards (default: computed for an index created on "
                 "Elasticsearch 7+ or OpenSearch)")
      ->check(CLI::Range(1, INT32_MAX));
  app.add_option("--partition-size", f.partition_size, "offline: index.routing_partition_size")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--distribution", f.distribution, "offline: elasticsearch | opensearch");
  app.add_option("--version-created", f.version_created,
                 "offline: index.version.created (Elasticsearch >= 9064000 routes modulo shards)")
      ->check(CLI::Range(1, INT32_MAX));
  app.add_option("--id-field", f.route.input.id_field,
                 "one document per line; its _id is this field (dotted path)");
  app.add_option("--routing-field", f.route.input.routing_field,
                 "with --id-field: the routing value is this field");
  app.add_option("--op", f.op, "with --id-field: the action, index or create")
      ->capture_default_str();
  app.add_flag("--from-route", f.route.input.from_route, "input is KEY<TAB>PAYLOAD route lines");
  app.add_flag("--id-from-position", f.id_from_position,
               "a document without _id gets SOURCE:LINE as its _id (the input file, the Hadoop "
               "split FILE:START or $HAMMER_INPUT_NAME, and the line), the same in every attempt "
               "of a task; payloads are then action<TAB>source (bulk --from-route without "
               "--id-field)");
  app.add_option("-k,--partitions-per-shard", f.route.partitions_per_shard,
                 "spread each shard over K partitions (keys shard*K .. shard*K+K-1)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--dead-letter", f.route.dead_letter_path,
                 "write rejected input here, one JSON object per line ({pid}: process id)")
      ->type_name("FILE");
  app.add_option("--max-line-bytes", f.max_line_bytes, "longest input line")->capture_default_str();
  app.add_option("-H,--header", f.headers, "header for cluster requests ('Name: value')");
  app.add_flag("--insecure", f.insecure, "https: do not verify certificates");
  app.add_option("--cacert", f.cacert, "https: trust these CA certificates")->type_name("FILE");
  app.add_option("--timeout", f.timeout, "per cluster request")->capture_default_str();
  app.add_option("--connect-timeout", f.connect_timeout, "TCP connect timeout")
      ->capture_default_str();
  app.add_flag("--describe", f.describe,
               "print the index's routing (shards, partitions, primaries) as JSON and exit");
  app.add_flag("-q,--quiet", f.quiet, "no summary on stderr");
}

}  // namespace

int RouteMain(int argc, char** argv) {
  CLI::App app{kDescription, "hammer route"};
  search::RouteFlags flags;
  AddRouteFlags(app, flags);
  if (std::optional<int> exit = ParseCommandLine(app, argc, argv, "route")) return *exit;
  Result<search::RouteCommand> command = search::RouteCommand::Create(flags);
  if (!command.ok()) return Complain("route", command.status().message(), kExitUsage);
  Status run = command->Run(STDOUT_FILENO);
  return run.ok() ? kExitOk : Complain("route", run.message(), kExitFailure);
}

}  // namespace hammer::cli
