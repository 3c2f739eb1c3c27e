// The two znodes a fleet's abort is coordinated through (`hammer load --fleet`, fleet_abort.h),
// and their payloads. Both are text, written and read by hammer only; a person inspecting a
// run reads them with zkCli.sh's `get`.
//
// /PATH/hammer/runs/RUN_ID/workers/WORKER   one worker's figures so far (FleetPartial):
//   hammer-fleet 1 <worker> <elapsed_ms>\n     worker index; measured time so far, ms
//   *<TAB>#hp1 ...\n                           the worker's total (every key merged)
//   KEY<TAB>#hp1 ...\n                         one line per key a threshold names (@KEY) that
//                                              the worker has seen
// The partial lines are stats/record.h's #hp1 partials, exact histograms included, so the
// fleet's merge is the one `hammer stats` would make of the same requests. Only the total and
// the keys thresholds name are carried, which keeps a node far below ZooKeeper's 1 MB limit
// (a histogram's worst case is ~290 KB; a loopback run's a few hundred bytes).
//
// /PATH/hammer/runs/RUN_ID/abort   why the run was aborted (AbortReason), one field a line:
//   threshold<TAB>errors<5%\n  actual<TAB>7.3%\n  worker<TAB>2\n  message<TAB>errors = 7.3%, ...\n
// Field values are one line each (TAB, CR and LF become spaces); unknown fields are ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/stats/key_stats.h"

namespace hammer::load {

struct FleetPartial {
  int worker = 0;
  int64_t elapsed_ms = 0;  // measured run time so far (after --warmup)
  stats::KeyStats total;
  std::vector<std::pair<std::string, stats::KeyStats>> keys;
};

std::string EncodeFleetPartial(const FleetPartial& partial);
// Errors say which line is wrong; `out` is then unspecified.
Status ParseFleetPartial(std::string_view payload, FleetPartial* out);

// Why a run was aborted: the first threshold that failed on the figures a worker judged.
struct AbortReason {
  std::string threshold;  // as given: "errors<5%"
  std::string actual;     // the measured value: "7.3%"
  std::string message;    // EvaluateThreshold's: "errors = 7.3%, limit < 5% (over by ...)"
  int worker = -1;        // the worker that saw it; -1 when unknown
  bool fleet = false;     // judged on the fleet's merged figures (else this worker's own)

  // "threshold errors<5% failed on the fleet's figures (seen by worker 2): errors = 7.3%, ..."
  std::string Describe() const;
};

std::string EncodeAbortReason(const AbortReason& reason);
// Never fails: missing fields stay empty (worker -1); `fleet` is set, the node being the fleet's.
AbortReason ParseAbortReason(std::string_view payload);

}  // namespace hammer::load
