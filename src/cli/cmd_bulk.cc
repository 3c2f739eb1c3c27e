// hammer bulk: shard-aware bulk writer for Elasticsearch and OpenSearch.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "hammer/search/bulk_command.h"

namespace hammer::cli {

namespace {

constexpr const char* kDescription =
    "Index documents into Elasticsearch/OpenSearch, each shard's batches sent to the node\n"
    "holding that shard's primary, so the cluster does not forward them.\n\n"
    "Input (FILE or - for stdin): a _bulk body (action + source lines), one JSON document per\n"
    "line with --id-field, or 'hammer route' output with --from-route. Documents that are\n"
    "rejected (invalid JSON, mapping conflicts, retries exhausted) go to --dead-letter.\n"
    "At the end: documents read = indexed + dead-lettered, docs/s, per-node share, and how\n"
    "many requests reached a node that did not hold the shard's primary.\n\n"
    "Re-run tasks: a document without an _id is indexed again, as a copy, each time its task\n"
    "runs. With --id-from-position it gets the _id SOURCE:LINE (the input file, or in a Hadoop\n"
    "map task the split FILE:START, or $HAMMER_INPUT_NAME; and the line number), the same in\n"
    "every attempt, so a retried or re-run task overwrites instead of duplicating.\n\n"
    "Examples:\n"
    "  hammer bulk --cluster http://127.0.0.1:9200 --index logs bulk.ndjson\n"
    "  hammer bulk --cluster http://a:9200,http://b:9200 --index logs --id-field id docs.jsonl\n"
    "  hammer bulk --cluster http://127.0.0.1:9200 --index logs --id-from-position bulk.ndjson\n"
    "  hammer route ... | sort | hammer bulk --cluster ... --index logs --from-route";

void AddBulkFlags(CLI::App& app, search::BulkFlags& f) {
  app.add_option("file", f.input, "input (default: standard input)");
  app.add_option("--cluster", f.cluster, "node URL(s), comma-separated")->required();
  app.add_option("--index", f.index, "index or alias to write to")->required();
  app.add_option("--id-field", f.bulk.feeder.input.id_field,
                 "one document per line; its _id is this field (dotted path); documents "
                 "without it are dead-lettered");
  app.add_option("--routing-field", f.bulk.feeder.input.routing_field,
                 "with --id-field: the routing value is this field");
  app.add_option("--op", f.op, "with --id-field: index or create")->capture_default_str();
  app.add_flag("--from-route", f.bulk.feeder.input.from_route,
               "input is 'hammer route' output (KEY<TAB>PAYLOAD)");
  app.add_flag("--id-from-position", f.id_from_position,
               "a document without _id gets SOURCE:LINE as its _id, the same in every run over "
               "the same input: re-run tasks overwrite instead of duplicating (not with "
               "--from-route: give it to 'hammer route')");
  app.add_option("--batch-docs", f.batch_docs, "documents per bulk request at most")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_option("--batch-bytes", f.batch_bytes, "body bytes per bulk request at most")
      ->capture_default_str();
  app.add_option("-w,--writers-per-shard", f.bulk.writers_per_shard,
                 "concurrent requests per shard")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--routing", f.routing,
                 "shard-aware | round-robin (batches in input order to nodes in turn, as a "
                 "client that does not route; for comparison)")
      ->capture_default_str();
  app.add_flag("--gzip", f.bulk.writer.gzip, "compress request bodies (Content-Encoding: gzip)");
  app.add_option("--max-retries", f.bulk.writer.backoff.max_retries,
                 "retries of a rejected document (429, 503, unavailable shards, node loss)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  app.add_option("--retry-initial", f.retry_initial, "first backoff (doubles each retry)")
      ->capture_default_str();
  app.add_option("--retry-max", f.retry_max, "longest backoff")->capture_default_str();
  app.add_option("--dead-letter", f.bulk.dead_letter_path,
                 "write documents given up on here, one JSON object per line ({pid} in the "
                 "name: this process id, for one file per Spark/Hadoop task)")
      ->type_name("FILE");
  app.add_option("--refresh-interval", f.refresh_interval,
                 "re-read shard placement this often (also after failures)")
      ->capture_default_str();
  app.add_option("--timeout", f.timeout, "per bulk request")->capture_default_str();
  app.add_option("--connect-timeout", f.connect_timeout, "TCP connect timeout")
      ->capture_default_str();
  app.add_option("--max-line-bytes", f.max_line_bytes, "longest input line")->capture_default_str();
  app.add_option("-H,--header", f.headers, "header for every request ('Name: value')");
  app.add_flag("--insecure", f.insecure, "https: do not verify certificates");
  app.add_option("--cacert", f.bulk.client.tls.ca_file, "https: trust these CA certificates")
      ->type_name("FILE");
  app.add_option("--summary-json", f.summary_json, "also write the summary as JSON ('-': stdout)")
      ->type_name("FILE");
  app.add_flag("--hadoop", f.hadoop, "write Hadoop Streaming status and counter lines");
  app.add_flag("-q,--quiet", f.quiet, "no summary and no progress line");
}

}  // namespace

int BulkMain(int argc, char** argv) {
  CLI::App app{kDescription, "hammer bulk"};
  search::BulkFlags flags;
  AddBulkFlags(app, flags);
  if (std::optional<int> exit = ParseCommandLine(app, argc, argv, "bulk")) return *exit;
  Result<search::BulkCommand> command = search::BulkCommand::Create(flags);
  if (!command.ok()) return Complain("bulk", command.status().message(), kExitUsage);
  Result<search::BulkVerdict> verdict = command->Run();
  if (!verdict.ok()) return Complain("bulk", verdict.status().message(), kExitFailure);
  // Interrupted or unbalanced: what was not written is dead-lettered, and the status says so.
  return *verdict == search::BulkVerdict::kComplete ? kExitOk : kExitFailure;
}

}  // namespace hammer::cli
