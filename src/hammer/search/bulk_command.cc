#include "hammer/search/bulk_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <utility>

#include "hammer/base/duration.h"
#include "hammer/base/output_file.h"
#include "hammer/base/signals.h"
#include "hammer/base/worker_identity.h"
#include "hammer/search/bulk_run.h"
#include "hammer/search/cluster_flags.h"

namespace hammer::search {

Result<BulkCommand> BulkCommand::Create(const BulkFlags& flags) {
  BulkCommand command;
  BulkOptions& options = command.options_;
  options = flags.bulk;
  if (Status ok = ApplyDocumentFlags(flags.op, &options.feeder.input); !ok.ok()) return ok;
  if (Status ok = ApplyIdFromPosition(flags.id_from_position, flags.input, &options.feeder.input);
      !ok.ok()) {
    return ok;
  }
  if (flags.routing == "shard-aware") {
    options.routing = BulkRouting::kShardAware;
  } else if (flags.routing == "round-robin") {
    options.routing = BulkRouting::kRoundRobin;
  } else {
    return Status::Error("--routing: expected shard-aware or round-robin, got '" + flags.routing +
                         "'");
  }
  Result<std::vector<http::Url>> urls = ParseClusterUrls(flags.cluster);
  if (!urls.ok()) return Status::Error("--cluster: " + urls.status().message());
  options.discovery.seeds = std::move(*urls);
  if (Status ok = CheckTargetName(flags.index); !ok.ok()) {
    return Status::Error("--index: " + ok.message());
  }
  options.discovery.target = flags.index;
  Result<http::HeaderList> headers = http::ParseHeaderFlags(flags.headers);
  if (!headers.ok()) return Status::Error("--header: " + headers.status().message());
  options.discovery.headers = std::move(*headers);
  Result<uint64_t> batch_bytes = ParseByteSize(flags.batch_bytes);
  if (!batch_bytes.ok() || *batch_bytes < 1 || *batch_bytes > (uint64_t{1} << 30)) {
    return Status::Error("--batch-bytes: expected 1 byte to 1g, got '" + flags.batch_bytes + "'");
  }
  options.feeder.limits = {flags.batch_docs, *batch_bytes};
  Result<uint64_t> max_line = ParseByteSize(flags.max_line_bytes);
  if (!max_line.ok() || *max_line < 1024 || *max_line > (uint64_t{1} << 30)) {
    return Status::Error("--max-line-bytes: expected 1k to 1g, got '" + flags.max_line_bytes + "'");
  }
  options.feeder.max_line_bytes = *max_line;
  options.feeder.input_path = flags.input;
  struct {
    const std::string& text;
    const char* flag;
    Nanos* out;
  } durations[] = {
      {flags.timeout, "--timeout", &options.writer.timeout},
      {flags.connect_timeout, "--connect-timeout", &options.client.connect_timeout},
      {flags.retry_initial, "--retry-initial", &options.writer.backoff.initial_delay},
      {flags.retry_max, "--retry-max", &options.writer.backoff.max_delay},
      {flags.refresh_interval, "--refresh-interval", &options.refresh_interval},
  };
  for (const auto& d : durations) {
    Result<Nanos> value = ParseDuration(d.text);
    if (!value.ok() || *value == 0) {
      return Status::Error(std::string(d.flag) + ": invalid '" + d.text + "'");
    }
    *d.out = *value;
  }
  options.discovery.timeout = std::min<Nanos>(options.writer.timeout, 30 * kSecond);
  if (flags.insecure) options.client.tls.verify = false;

  command.progress_.live_line = !flags.quiet && isatty(STDERR_FILENO) != 0;
  command.progress_.hadoop_reporter = flags.hadoop || DetectWorkerIdentity().in_hadoop();
  command.summary_json_ = flags.summary_json;
  command.quiet_ = flags.quiet;
  return command;
}

Result<BulkVerdict> BulkCommand::Run() {
  BlockShutdownSignals();
  Result<BulkResult> result = RunBulk(options_, progress_);
  if (!result.ok()) return result.status();
  const BulkStats& stats = result->stats;
  if (!quiet_) std::fputs(FormatBulkSummary(stats).c_str(), stderr);
  Status summary_written;
  if (!summary_json_.empty()) {
    summary_written = WriteOutputFile("--summary-json", summary_json_, BulkSummaryJson(stats));
  }
  // Both outputs fail together on a full disk: each is said, the dead letters' first.
  if (!result->dead_letter_error.ok()) {
    if (summary_written.ok()) return result->dead_letter_error;
    std::fprintf(stderr, "hammer bulk: %s\n", result->dead_letter_error.message().c_str());
  }
  if (!summary_written.ok()) return summary_written;
  if (!result->input_error.ok()) return Status::Error("input: " + result->input_error.message());
  // After a signal, what was not written is dead-lettered: the run is complete but cut short.
  if (stats.stopped_by_signal || !stats.balanced()) return BulkVerdict::kIncomplete;
  return BulkVerdict::kComplete;
}

}  // namespace hammer::search
