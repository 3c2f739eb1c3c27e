// BulkCommand: everything `hammer bulk` does besides reading its command line, so that the CLI
// (src/cli/cmd_bulk.cc) only fills BulkFlags and maps the outcome to an exit status.
//
// Create() checks the flags (usage errors: one line naming the flag). Run() blocks the shutdown
// signals (the first SIGINT/SIGTERM stops the run gracefully), runs (RunBulk), prints the summary
// on stderr unless quiet and writes --summary-json ('-': stdout). Run's errors: the run could not
// start (cluster unreachable, index not found, dead-letter file not writable), the dead letters
// or the summary file could not be written ("--dead-letter: cannot write 'PATH': ...", both
// said when both failed), or the input could not be read to its end ("input: ..."). Threads:
// the caller's, plus RunBulk's.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hammer/base/progress.h"
#include "hammer/base/status.h"
#include "hammer/search/bulk_options.h"

namespace hammer::search {

// `hammer bulk`'s flags as given (numbers as CLI11 read them, the rest as typed).
struct BulkFlags {
  std::string input = "-";
  std::string cluster;  // URL[,URL...]
  std::string index;
  BulkOptions bulk;  // --id-field, --routing-field, --from-route, -w, --gzip, --max-retries,
                     // --dead-letter, --cacert
  std::string op = "index";
  std::string routing = "shard-aware";
  std::vector<std::string> headers;  // "Name: value"
  size_t batch_docs = 1000;
  std::string batch_bytes = "5m";
  std::string max_line_bytes = "64m";
  std::string timeout = "60s";
  std::string connect_timeout = "5s";
  std::string retry_initial = "100ms";
  std::string retry_max = "10s";
  std::string refresh_interval = "30s";
  std::string summary_json;
  bool insecure = false;
  bool quiet = false;
  bool hadoop = false;
  bool id_from_position = false;
};

enum class BulkVerdict : uint8_t {
  kComplete,    // every document read was indexed or dead-lettered
  kIncomplete,  // stopped by a signal, or the balance does not hold
};

class BulkCommand {
 public:
  static Result<BulkCommand> Create(const BulkFlags& flags);

  Result<BulkVerdict> Run();

 private:
  BulkCommand() = default;

  BulkOptions options_;
  ProgressOptions progress_;
  std::string summary_json_;
  bool quiet_ = false;
};

}  // namespace hammer::search
