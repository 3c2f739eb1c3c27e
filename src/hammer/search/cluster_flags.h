// The flag values `hammer route` and `hammer bulk` share, parsed once here so both commands
// accept exactly the same spellings.
//
// Errors: each parser returns a one-line message naming the bad value. Threads: reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/byte_size.h"
#include "hammer/base/status.h"
#include "hammer/http/request_writer.h"
#include "hammer/http/url.h"
#include "hammer/search/bulk_input.h"

namespace hammer::search {

// --cluster: one or more comma-separated http:// or https:// URLs of cluster nodes. A path
// other than "/" is rejected (hammer talks to the node's root: /_bulk, /_cat/...).
Result<std::vector<http::Url>> ParseClusterUrls(std::string_view text);

// --index: a single index or alias name usable in a URL path (no wildcard, comma, slash).
Status CheckTargetName(std::string_view name);

// --op, --id-field, --routing-field: with an id field the input is one document per line, whose
// action is `op` ("index" or "create"); a routing field needs an id field.
Status ApplyDocumentFlags(std::string_view op, InputOptions* input);

// --id-from-position: documents without an _id get "SOURCE:LINE" (position_id.h), SOURCE being
// the task's input split (WorkerIdentity::input_split) or else `input_path`. Refused with
// --from-route: a reducer's input order is the shuffle's, not stable across attempts, so the
// ids are given where the input is read (`hammer route`, the mapper).
Status ApplyIdFromPosition(bool enabled, const std::string& input_path, InputOptions* input);

// --batch-bytes, --max-line-bytes: sizes as users type them (hammer/base/byte_size.h).
using hammer::ParseByteSize;

}  // namespace hammer::search
