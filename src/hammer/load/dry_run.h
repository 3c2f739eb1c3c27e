// `hammer load --dry-run`: the first requests a run would send, prepared exactly as a run
// prepares them (RequestFeed: --method, -H, --body, --key, request files) and printed with
// secrets redacted (redact.h) instead of sent. Nothing is sent: the HttpClient the requests are
// prepared with only names their origins, and its event loop never runs.
//
//   # 1: GET http://127.0.0.1:8080/a  (key http://127.0.0.1:8080/a, 0 body bytes)
//   GET /a HTTP/1.1
//   Host: 127.0.0.1:8080
//   ...
//   # 2: not sent (invalid_url): <key>: <why>
//
// Prints options.max_requests requests (10 when it is 0). Errors: a malformed request file
// (the message names the file and line); what came before it is printed.
#pragma once

#include <cstdio>

#include "hammer/base/status.h"
#include "hammer/load/load_options.h"
#include "hammer/load/load_run.h"

namespace hammer::load {

Status PrintDryRun(const LoadOptions& options, LoadInput input, std::FILE* out);

}  // namespace hammer::load
