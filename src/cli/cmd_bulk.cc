// hammer bulk: shard-aware bulk writer for Elasticsearch and OpenSearch.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "cli/commands.h"
#include "hammer/base/duration.h"
#include "hammer/base/progress.h"
#include "hammer/base/signals.h"
#include "hammer/base/worker_identity.h"
#include "hammer/search/bulk_run.h"
#include "hammer/search/cluster_flags.h"

namespace hammer::cli {

namespace {

int Usage(const std::string& message) {
  return Complain("bulk", message, kExitUsage);
}

int Failure(const std::string& message) {
  return Complain("bulk", message, kExitFailure);
}

}  // namespace

int RunBulk(int argc, char** argv) {
  CLI::App app{
      "Index documents into Elasticsearch/OpenSearch, each shard's batches sent to the node\n"
      "holding that shard's primary, so the cluster does not forward them.\n\n"
      "Input (FILE or - for stdin): a _bulk body (action + source lines), one JSON document per\n"
      "line with --id-field, or 'hammer route' output with --from-route. Documents that are\n"
      "rejected (invalid JSON, mapping conflicts, retries exhausted) go to --dead-letter.\n"
      "At the end: documents read = indexed + dead-lettered, docs/s, per-node share, and how\n"
      "many requests reached a node that did not hold the shard's primary.\n\n"
      "Examples:\n"
      "  hammer bulk --cluster http://127.0.0.1:9200 --index logs bulk.ndjson\n"
      "  hammer bulk --cluster http://a:9200,http://b:9200 --index logs --id-field id docs.jsonl\n"
      "  hammer route ... | sort | hammer bulk --cluster ... --index logs --from-route",
      "hammer bulk"};
  std::string input = "-";
  std::string cluster_text, index;
  search::BulkOptions options;
  std::string op_text = "index";
  std::string routing_text = "shard-aware";
  std::vector<std::string> header_flags;
  std::string batch_bytes_text = "5m", max_line_text = "64m";
  std::string timeout_text = "60s", connect_timeout_text = "5s";
  std::string retry_initial_text = "100ms", retry_max_text = "10s", refresh_text = "30s";
  std::string summary_json;
  bool insecure = false, quiet = false, hadoop = false;
  size_t batch_docs = 1000;

  app.add_option("file", input, "input (default: standard input)");
  app.add_option("--cluster", cluster_text, "node URL(s), comma-separated")->required();
  app.add_option("--index", index, "index or alias to write to")->required();
  app.add_option("--id-field", options.feeder.input.id_field,
                 "one document per line; its _id is this field (dotted path); documents "
                 "without it are dead-lettered");
  app.add_option("--routing-field", options.feeder.input.routing_field,
                 "with --id-field: the routing value is this field");
  app.add_option("--op", op_text, "with --id-field: index or create")->capture_default_str();
  app.add_flag("--from-route", options.feeder.input.from_route,
               "input is 'hammer route' output (KEY<TAB>PAYLOAD)");
  app.add_option("--batch-docs", batch_docs, "documents per bulk request at most")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_option("--batch-bytes", batch_bytes_text, "body bytes per bulk request at most")
      ->capture_default_str();
  app.add_option("-w,--writers-per-shard", options.writers_per_shard,
                 "concurrent requests per shard")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--routing", routing_text,
                 "shard-aware | round-robin (batches in input order to nodes in turn, as a "
                 "client that does not route; for comparison)")
      ->capture_default_str();
  app.add_flag("--gzip", options.writer.gzip, "compress request bodies (Content-Encoding: gzip)");
  app.add_option("--max-retries", options.writer.backoff.max_retries,
                 "retries of a rejected document (429, 503, unavailable shards, node loss)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  app.add_option("--retry-initial", retry_initial_text, "first backoff (doubles each retry)")
      ->capture_default_str();
  app.add_option("--retry-max", retry_max_text, "longest backoff")->capture_default_str();
  app.add_option("--dead-letter", options.dead_letter_path,
                 "write documents given up on here, one JSON object per line ({pid} in the "
                 "name: this process id, for one file per Spark/Hadoop task)");
  app.add_option("--refresh-interval", refresh_text,
                 "re-read shard placement this often (also after failures)")
      ->capture_default_str();
  app.add_option("--timeout", timeout_text, "per bulk request")->capture_default_str();
  app.add_option("--connect-timeout", connect_timeout_text, "TCP connect timeout")
      ->capture_default_str();
  app.add_option("--max-line-bytes", max_line_text, "longest input line")->capture_default_str();
  app.add_option("-H,--header", header_flags, "header for every request ('Name: value')");
  app.add_flag("--insecure", insecure, "https: do not verify certificates");
  app.add_option("--cacert", options.client.tls.ca_file, "https: trust these CA certificates");
  app.add_option("--summary-json", summary_json, "also write the summary as JSON ('-': stdout)");
  app.add_flag("--hadoop", hadoop, "write Hadoop Streaming status and counter lines");
  app.add_flag("-q,--quiet", quiet, "no summary and no progress line");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  if (Status ok = search::ApplyDocumentFlags(op_text, &options.feeder.input); !ok.ok())
    return Usage(ok.message());
  if (routing_text == "shard-aware") {
    options.routing = search::BulkRouting::kShardAware;
  } else if (routing_text == "round-robin") {
    options.routing = search::BulkRouting::kRoundRobin;
  } else {
    return Usage("--routing: expected shard-aware or round-robin, got '" + routing_text + "'");
  }
  Result<std::vector<http::Url>> urls = search::ParseClusterUrls(cluster_text);
  if (!urls.ok()) return Usage("--cluster: " + urls.status().message());
  options.discovery.seeds = std::move(*urls);
  if (Status ok = search::CheckTargetName(index); !ok.ok())
    return Usage("--index: " + ok.message());
  options.discovery.target = index;
  Result<http::HeaderList> headers = search::ParseHeaderFlags(header_flags);
  if (!headers.ok()) return Usage("--header: " + headers.status().message());
  options.discovery.headers = std::move(*headers);
  Result<uint64_t> batch_bytes = search::ParseByteSize(batch_bytes_text);
  if (!batch_bytes.ok() || *batch_bytes < 1 || *batch_bytes > (uint64_t{1} << 30)) {
    return Usage("--batch-bytes: expected 1 byte to 1g, got '" + batch_bytes_text + "'");
  }
  options.feeder.limits = {batch_docs, *batch_bytes};
  Result<uint64_t> max_line = search::ParseByteSize(max_line_text);
  if (!max_line.ok() || *max_line < 1024 || *max_line > (uint64_t{1} << 30)) {
    return Usage("--max-line-bytes: expected 1k to 1g, got '" + max_line_text + "'");
  }
  options.feeder.max_line_bytes = *max_line;
  options.feeder.input_path = input;
  struct {
    const std::string& text;
    const char* flag;
    Nanos* out;
  } durations[] = {
      {timeout_text, "--timeout", &options.writer.timeout},
      {connect_timeout_text, "--connect-timeout", &options.client.connect_timeout},
      {retry_initial_text, "--retry-initial", &options.writer.backoff.initial_delay},
      {retry_max_text, "--retry-max", &options.writer.backoff.max_delay},
      {refresh_text, "--refresh-interval", &options.refresh_interval},
  };
  for (const auto& d : durations) {
    Result<Nanos> value = ParseDuration(d.text);
    if (!value.ok() || *value == 0)
      return Usage(std::string(d.flag) + ": invalid '" + d.text + "'");
    *d.out = *value;
  }
  options.discovery.timeout = std::min<Nanos>(options.writer.timeout, 30 * kSecond);
  if (insecure) options.client.tls.verify = false;

  ProgressOptions progress;
  progress.live_line = !quiet && isatty(STDERR_FILENO) != 0;
  progress.hadoop_reporter = hadoop || DetectWorkerIdentity().in_hadoop();

  BlockShutdownSignals();
  Result<search::BulkResult> result = search::RunBulk(options, progress);
  if (!result.ok()) return Failure(result.status().message());
  const search::BulkStats& stats = result->stats;
  if (!quiet) std::fputs(search::FormatBulkSummary(stats).c_str(), stderr);
  if (!summary_json.empty()) {
    const std::string json = search::BulkSummaryJson(stats);
    if (summary_json == "-") {
      std::fputs(json.c_str(), stdout);
    } else {
      std::ofstream out(summary_json);
      out << json;
      if (!out) return Failure("--summary-json: cannot write '" + summary_json + "'");
    }
  }
  if (!result->input_error.ok()) return Failure("input: " + result->input_error.message());
  if (!result->dead_letter_error.ok()) {
    return Failure("dead letters: " + result->dead_letter_error.message());
  }
  if (stats.stopped_by_signal) return kExitFailure;  // what was not written is dead-lettered
  return stats.balanced() ? kExitOk : kExitFailure;
}

}  // namespace hammer::cli
