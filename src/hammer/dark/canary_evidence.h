// CanaryEvidence: what a canary verdict weighs for one scope — a dark cluster's whole traffic or
// one endpoint group — read from the cluster's ComparisonReport.
//
// Differences are counted after noise cancellation: a field's differences count only when the
// Diffy rule of noise_filter.h reports the field AND its raw differences (dark vs primary)
// exceed its noise differences (secondary vs primary) significantly by Fisher's exact test at
// `alpha`, since the Diffy rule alone reports a field noisy on a third of the requests from time
// to time on a few hundred of them. A compared request differs when one of its differing fields
// counts (ComparisonReport's difference sets say which fields differed together; requests whose
// set was not kept count when their endpoint has any counted field, an upper bound).
// Without a secondary the noise is zero, and every recurring difference counts.
//
// A value type built on demand; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hammer/dark/comparison_report.h"
#include "hammer/stats/histogram.h"
#include "hammer/stats/paired_intervals.h"

namespace hammer::dark {

// A field whose differences count, and in how many compared requests it differed.
struct CountedField {
  std::string name;  // its path; "GROUP path" in a cluster's evidence
  std::string path;  // the path alone (what --compare-ignore takes)
  uint64_t requests = 0;
};

struct CanaryEvidence {
  uint64_t pairs = 0;  // forked requests answered (or failed) on both sides
  uint64_t primary_failures = 0;
  uint64_t dark_failures = 0;
  uint64_t compared = 0;                       // requests whose bodies were compared
  uint64_t differing = 0;                      // ... that differ at a counted field
  std::vector<CountedField> differing_fields;  // the counted fields, the most frequent first
  uint64_t with_secondary = 0;  // compared requests whose noise was measured (a secondary)
  uint64_t noisy_fields = 0;    // fields that differed but were cancelled as noise
  stats::Histogram primary_latency_us;
  stats::Histogram dark_latency_us;
  stats::PairedIntervals latency_intervals;  // a: primary, b: dark

  // One endpoint group of `report`.
  static CanaryEvidence ForEndpoint(const ComparisonReport& report,
                                    const EndpointComparison& endpoint, double alpha);
  // Every endpoint group of `report` together: counts and histograms added, each group's fields
  // judged against its own noise.
  static CanaryEvidence ForCluster(const ComparisonReport& report, double alpha);
};

}  // namespace hammer::dark
