// Everything a load run is told to do; filled by `hammer load` / `hammer demo` flags.
#pragma once

#include <re2/re2.h>

#include <cstdint>
#include <memory>
#include <string>

#include "hammer/base/clock.h"
#include "hammer/http/client.h"
#include "hammer/http/request_writer.h"
#include "hammer/http/tls.h"
#include "hammer/load/key_mapper.h"
#include "hammer/load/rate_schedule.h"
#include "hammer/load/target_source.h"
#include "hammer/load/think_time.h"
#include "hammer/stats/key_table.h"

namespace hammer::load {

enum class EmitMode : uint8_t {
  kRecords,   // KEY<TAB>SECONDS per request (the seed's format)
  kPartials,  // one mergeable partial per key at the end (shrinks a Hadoop shuffle)
  kNone,      // summary only
};

struct LoadOptions {
  // Closed loop: requests in flight; open loop: the in-flight cap. With HTTP/2 it counts
  // connections, each carrying http2.max_streams requests (h2load's -c and -m).
  int concurrency = 100;
  int threads = 1;            // event-loop threads
  double rate = 0;            // requests per second in total; 0 = closed loop
  Nanos duration = 0;         // 0 = until the input ends
  uint64_t max_requests = 0;  // 0 = no limit
  Nanos timeout = 30 * kSecond;
  Nanos connect_timeout = 5 * kSecond;
  Nanos dns_ttl = 60 * kSecond;                   // a resolved name is looked up again after this
  std::shared_ptr<const re2::RE2> error_pattern;  // null: no body check
  bool empty_body_is_error = false;               // the seed treated an empty body as an error
  EmitMode emit = EmitMode::kRecords;
  // kPartials: the task and the attempt of it this run is (WorkerIdentity), written with each
  // partial (#ha1, stats/record.h) so that a reader keeps one attempt of a retried task. An
  // empty task: plain #hp1 partials.
  std::string partial_task;
  std::string partial_attempt;
  int max_redirects = 10;  // 0: do not follow redirects
  bool cookies = false;    // a cookie jar per in-flight slot (simulated user)
  SourceOptions source;
  http::HeaderList headers;  // added to every request
  std::string body;          // sent with every request that has no body of its own
  std::string method;        // overrides the method of every line when set
  // Per thread; distinct lines beyond this are re-parsed. Above the default --max-keys (10,000):
  // each worker sees every line of a list replayed in a loop, so a list that fits in the key
  // rows fits here too.
  size_t max_prepared_targets = 16384;
  // Key rows of the summary, reports and partials (stats/key_table.h): past it keys are grouped
  // by path template, then into "(other)". 0: every key exact. Records always keep the key.
  size_t max_keys = 10000;
  // Bytes the key rows may take in all (KeyTable's max_bytes): each worker's table gets its
  // share, the merged table the whole; past it, rows fold as past max_keys, then the quietest
  // go to "(other)". 0 (or max_keys 0): no bound.
  uint64_t max_key_bytes = stats::kDefaultMaxKeyBytes;
  http::TlsOptions tls;
  http::Http2Options http2{.enabled = false, .fallback = false, .max_streams = 1};
  KeyMapper keys;                // what records and statistics group by (--key, --key-pattern)
  bool recorded_timing = false;  // send request-file entries at their recorded offsets
  double speed = 1.0;            // with recorded_timing: --speed (for the report)
  int verbose = 0;               // print this many request/response pairs (secrets redacted)
  bool timestamps = false;       // records get a third field: when the request ended (Unix ms)
  bool failure_types = false;    // failure records carry their type (stats::AppendFailureRecord)
  Nanos schedule_offset = 0;     // open loop: this worker's schedule starts this much later
  MonoNanos start_at = 0;        // 0: now; else wait until then (synchronised start, --start-at)
  // --stages: the open-loop rate follows this schedule (`rate` is then its peak, which makes
  // the run open loop); null: the constant `rate`.
  std::shared_ptr<const RateSchedule> stages;
  // --warmup: requests due (open loop) or sent (closed loop) in this first part of the run are
  // sent but left out of every statistic, record and counter; `duration` includes it.
  Nanos warmup = 0;
  ThinkTime think_time;  // closed loop: each slot's pause between two requests
  // --metrics-listen: workers also report their figures per key every interval (RunMonitor),
  // which LoadMetrics serves to Prometheus. Off: no per-request cost.
  bool live_key_metrics = false;

  // Requests in flight at most: concurrency, times the streams per connection with HTTP/2.
  uint64_t in_flight_cap() const {
    return static_cast<uint64_t>(concurrency) * (http2.enabled ? http2.max_streams : 1);
  }
};

}  // namespace hammer::load
