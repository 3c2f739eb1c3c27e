// RunBulk: a whole `hammer bulk` run. Threads: the caller's (signals, and progress: a live line
// on a terminal, in Hadoop mode a status every minute and the counters hammer_bulk,<name> at the
// end), one event-loop thread (BulkSession: discovery, writers, retries) and one reader thread
// (BulkFeeder), started once the cluster view is known.
//
// The caller must have called BlockShutdownSignals() before: the first SIGINT/SIGTERM stops
// the run gracefully (requests in flight finish, everything else is dead-lettered as
// interrupted, the balance still holds). A reader blocked on an input that delivers nothing
// more is only noticed at its next line or end of input.
//
// Errors: the returned Status is an error when the run could not start (cluster unreachable,
// index not found, dead-letter file not writable). Input and dead-letter write errors that
// happen mid-run are reported in BulkResult, with the statistics of what was done.
#pragma once

#include "hammer/base/progress.h"
#include "hammer/base/status.h"
#include "hammer/search/bulk_options.h"
#include "hammer/search/bulk_stats.h"

namespace hammer::search {

struct BulkResult {
  BulkStats stats;
  Status input_error;        // reading stopped early (the documents before were written)
  Status dead_letter_error;  // the dead-letter file could not be written completely
};

Result<BulkResult> RunBulk(const BulkOptions& options, const ProgressOptions& progress);

}  // namespace hammer::search
