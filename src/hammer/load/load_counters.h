// LoadCounters: every counter of a `hammer load` run besides the per-key statistics (requests,
// outcomes and latency per key: stats/key_table.h), declared once in HAMMER_LOAD_COUNTERS
// (base/counters.h: field, kind, Prometheus family, label, help). The fields, the merge across
// workers, the --summary-json members, the Hadoop counters (group hammer_load) and the
// --metrics-listen families all follow from this table.
//
// A mergeable value: each worker counts its own (its loop thread only), the run adds them up.
#pragma once

#include "hammer/base/counters.h"

namespace hammer::load {

#define HAMMER_LOAD_COUNTERS(X)                                                                  \
  X(late_no_slot, kCounter, "hammer_load_late_total", "reason=no_slot",                          \
    "Open loop: requests sent more than 1 ms after their due time, because every slot was busy " \
    "(no_slot) or the loop was behind (behind: CPU).")                                           \
  X(late_behind, kCounter, "hammer_load_late_total", "reason=behind", "")                        \
  X(dropped, kCounter, "hammer_load_dropped_total", "",                                          \
    "Open loop: requests due before the end of the run and never sent (it was stopped first).")  \
  X(aborted, kCounter, "hammer_load_aborted_total", "",                                          \
    "Requests in flight when a second signal abandoned them (in no other figure).")              \
  X(warmup, kCounter, "hammer_load_warmup_total", "",                                            \
    "Requests ended during --warmup (in no other figure).")                                      \
  X(redirects, kCounter, "hammer_load_redirects_total", "", "Redirect hops followed.")           \
  X(connections_opened, kCounter, "hammer_load_connections_opened_total", "",                    \
    "Connections opened to the targets.")                                                        \
  X(connections_reused, kCounter, "hammer_load_connections_reused_total", "",                    \
    "Requests sent on a kept-alive connection.")                                                 \
  X(stale_retries, kCounter, "hammer_load_stale_retries_total", "",                              \
    "Requests sent again because the kept-alive connection they went out on had closed.")        \
  X(tls_handshakes, kCounter, "hammer_load_tls_handshakes_total", "",                            \
    "TLS handshakes of new connections.")                                                        \
  X(tls_resumed, kCounter, "hammer_load_tls_resumed_total", "",                                  \
    "TLS handshakes that resumed an earlier session.")

struct LoadCounters {
  HAMMER_PLAIN_COUNTERS(HAMMER_LOAD_COUNTERS)

  uint64_t late() const { return late_no_slot + late_behind; }
};

}  // namespace hammer::load
