// RunRoute: the body of `hammer route`. Reads NDJSON documents, computes each one's route key
// (route_line.h) with a DocumentRouter, and writes "KEY<TAB>PAYLOAD" lines to a file
// descriptor in input order. Unroutable documents get key -1 and are counted by reason;
// rejected input (invalid JSON, missing id field, ...) is counted and dead-lettered, never
// written to the output.
//
// Errors: input errors (open/read, a line over max_line_bytes) and output write errors
// (EPIPE) end the run with an error. Threads: runs on the caller's thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/search/bulk_input.h"
#include "hammer/search/document_router.h"

namespace hammer::search {

struct RouteOptions {
  std::string input_path = "-";
  size_t max_line_bytes = 64 * 1024 * 1024;
  InputOptions input;
  int32_t partitions_per_shard = 1;
  std::string dead_letter_path;  // "" → only counted (first few on stderr)
};

struct RouteStats {
  uint64_t documents_read = 0;
  uint64_t routed = 0;
  uint64_t unroutable = 0;
  uint64_t invalid_input = 0;         // dead-lettered
  uint64_t route_key_mismatches = 0;  // --from-route input whose key differs from ours
  std::map<std::string, uint64_t> unroutable_reasons;
  std::vector<uint64_t> per_shard;  // documents per shard
};

Result<RouteStats> RunRoute(const RouteOptions& options, const DocumentRouter& router,
                            int output_fd);

// "hammer route: N documents: R routed, U unroutable (reasons), D dead-lettered" and the
// per-shard counts, ending with '\n'.
std::string FormatRouteSummary(const RouteStats& stats);

}  // namespace hammer::search
