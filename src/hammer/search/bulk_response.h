// BulkResponseParser: reads the answer of POST _bulk (Elasticsearch 7+/OpenSearch) into one
// result per item, and says which failures are worth retrying.
//
// The response is {"took":…,"errors":bool,"items":[{"<op>":{"status":N,"error":{…}}},…]} with
// one item per action, in request order (hammer asks for filter_path=took,errors,items.*.status,
// items.*.error, which keeps only those fields). For an item with an error object, error_type is
// error.type and reason is "type: reason", followed by " (caused by type: reason)" for the first
// caused_by. An error given as a plain string (very old servers) becomes the reason.
//
// Errors: Parse() fails, without filling any result, on invalid JSON, a missing items array, an
// item that is not {"<op>":{"status":int,...}}, or a number of items other than the number of
// actions sent (the caller then treats the whole request as failed with an unknown outcome).
// Ownership: the parser owns its simdjson state and a copy of the body; results own their text.
// Threads: one parser per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/status.h"

namespace hammer::search {

struct BulkItemResult {
  int status = 0;
  std::string error_type;  // "" when the item succeeded
  std::string reason;      // "" when the item succeeded

  bool ok() const { return status >= 200 && status < 300; }
};

struct BulkResponse {
  int64_t took_ms = 0;
  bool errors = false;
  std::vector<BulkItemResult> items;
};

class BulkResponseParser {
 public:
  BulkResponseParser();
  ~BulkResponseParser();
  BulkResponseParser(const BulkResponseParser&) = delete;
  BulkResponseParser& operator=(const BulkResponseParser&) = delete;

  Status Parse(std::string_view body, size_t expected_items, BulkResponse* out);

 private:
  struct Json;
  std::unique_ptr<Json> json_;
};

// Whether an item that failed with `status` / `error_type` may succeed when sent again: 429
// (es_rejected_execution_exception / opensearch_rejected_execution_exception: a full write
// queue), 502/503/504, and the errors of a shard or node in transition (unavailable_shards,
// no_shard_available, primary_missing, node_closed, node_not_connected, connect/receive
// transport errors). A cluster block is retried only when its status is 503 (a 403 block, such
// as a read-only index, stays).
bool IsRetryableItemFailure(int status, std::string_view error_type);

// Whether a whole _bulk request answered with `http_status` should be sent again: 429, 502, 503,
// 504 (and any other 5xx, which on these servers means a node-side failure before indexing).
bool IsRetryableHttpStatus(int http_status);

// A version conflict, which for a create that was already sent once (with an unknown outcome)
// means the earlier attempt succeeded.
bool IsVersionConflict(int status, std::string_view error_type);

}  // namespace hammer::search
