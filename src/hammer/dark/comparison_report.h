// ComparisonReport: what `hammer dark --compare` has learned about the dark cluster, per
// endpoint and per field, in the Diffy manner (github.com/twitter-archive/diffy: its per-endpoint
// and per-field difference counters and reports):
//
//  * per endpoint: forked requests answered on both sides (pairs) and how many of those failed
//    on each side (a transport failure or a status of 500 or more), latency histograms of the
//    successful answers of primary and dark side by side (microseconds), the same pairs' latencies
//    summed per interval of latency_interval (stats/paired_intervals.h), requests compared
//    (total: both sides succeeded, and the secondary too when there is one), compared requests
//    with at least one raw difference (dark vs primary), with at least one noise difference
//    (secondary vs primary), the sets of fields that differed together (difference_sets: which
//    requests differ once noisy fields are discounted), forked requests that could not be
//    compared for want of an answer (incomplete: the copy was not sent or abandoned, the
//    secondary failed), comparisons cut short by JsonDiff's caps (truncated);
//  * per field path: raw and noise counts (requests, not occurrences), the noise verdict of
//    noise_filter.h, and up to max_samples_per_field sample differences with truncated bodies.
// A failed answer is judged by the failure counts, never diffed: a 500 from the dark side is a
// failure, not a "status" difference.
//
// Memory is bounded: at most max_endpoints endpoints (requests for others are counted in
// endpoint_overflow()), max_fields_per_endpoint fields per endpoint (differences at other
// paths are counted in the endpoint's field_overflow), max_difference_sets_per_endpoint sets of
// at most max_difference_set_bytes each (other requests with differences are counted in
// difference_set_overflow), max_samples samples in all, each body cut to
// max_sample_body_bytes. Worst case with the defaults: about 1000 endpoints × (1000 fields ×
// ~100 B + 32 sets × 1 KiB + two histograms of a few 8 KiB pages) + 1000 samples × ~3.5 KiB,
// i.e. on the order of 150 MB; typical runs use a few hundred KB.
//
// A value type: keep one per dark cluster and event loop (not thread-safe), Merge() them when
// the report is read; Merge respects the caps. ToJson() is what `GET /hammer/dark/report`
// returns for one dark cluster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/dark/json_diff.h"
#include "hammer/dark/noise_filter.h"
#include "hammer/stats/histogram.h"
#include "hammer/stats/paired_intervals.h"

namespace hammer::dark {

struct ComparisonReportOptions {
  NoiseThresholds thresholds;
  size_t max_endpoints = 1000;
  size_t max_fields_per_endpoint = 1000;
  size_t max_samples_per_field = 5;
  size_t max_samples = 1000;  // across the whole report
  size_t max_sample_body_bytes = 1024;
  size_t max_difference_sets_per_endpoint = 32;
  size_t max_difference_set_bytes = 1024;
  Nanos latency_interval = kSecond;  // of EndpointComparison::latency_intervals
};

// One forked request whose responses were compared. Views are copied (truncated) only into
// samples, and only while there is room for samples.
struct ComparedExchange {
  std::string_view endpoint;  // grouping key, e.g. stats::EndpointKey(method, target)
  std::string_view request;   // shown in samples, e.g. "GET /items/7?verbose=1"
  std::string_view primary_body;
  std::string_view dark_body;
  std::string_view secondary_body;  // empty without a secondary
};

// How one forked request went on both sides, whether or not its bodies could be compared.
struct PairOutcome {
  bool primary_failed = false;  // a transport failure or a status of 500 or more
  bool dark_failed = false;
  int64_t primary_micros = -1;  // latency of a successful answer; negative: not recorded
  int64_t dark_micros = -1;
  // Both succeeded, but the bodies cannot be compared (the secondary's answer is missing):
  // counted as incomplete.
  bool uncompared = false;
  MonoNanos settled_at = 0;  // when both answers were in; 0: not recorded per interval
};

struct DiffSample {
  std::string request;
  DifferenceKind kind = DifferenceKind::kValue;
  std::string primary_value;  // FieldDifference::left / right
  std::string dark_value;
  std::string primary_body;  // each cut to max_sample_body_bytes
  std::string dark_body;
  std::string secondary_body;
};

struct FieldComparison {
  uint64_t raw = 0;    // requests whose dark response differed from the primary's here
  uint64_t noise = 0;  // requests whose secondary response differed from the primary's here
  std::vector<DiffSample> samples;  // raw differences
};

struct EndpointComparison {
  uint64_t pairs = 0;             // forked requests answered (or failed) on both sides
  uint64_t primary_failures = 0;  // ... whose primary failed
  uint64_t dark_failures = 0;     // ... whose dark copy failed
  uint64_t total = 0;             // requests compared
  uint64_t differences = 0;       // ... with at least one raw difference
  uint64_t noisy = 0;             // ... with at least one noise difference
  uint64_t with_secondary = 0;    // ... also compared with a secondary (noise was measured)
  uint64_t incomplete = 0;        // forked requests that could not be compared
  uint64_t unsent = 0;            // ... because their copy was never sent (not in pairs)
  uint64_t truncated = 0;         // comparisons stopped by a JsonDiff cap
  uint64_t field_overflow = 0;    // field differences dropped: the field cap was reached
  std::map<std::string, FieldComparison, std::less<>> fields;
  // Compared requests with raw differences, counted by the set of paths that differed: the
  // sorted paths joined by '\n'.
  std::map<std::string, uint64_t, std::less<>> difference_sets;
  uint64_t difference_set_overflow = 0;  // ... whose set was not kept (a cap was reached)
  stats::Histogram primary_latency_us;   // successful answers of the pairs
  stats::Histogram dark_latency_us;
  stats::PairedIntervals latency_intervals;  // pairs where both succeeded: a primary, b dark
};

class ComparisonReport {
 public:
  explicit ComparisonReport(ComparisonReportOptions options = {});

  // A forked request answered (or failed) on both sides: counts and successful latencies.
  // Every request is recorded once by RecordPair or RecordIncomplete (endpoint_overflow counts
  // requests, so these two count it there when the endpoint cap is reached; Record does not).
  void RecordPair(std::string_view endpoint, const PairOutcome& outcome);
  // A request whose primary and dark responses both succeeded (RecordPair it too). `raw`
  // compares primary (left) with dark (right); `noise` compares primary with secondary, or is
  // null without a secondary. With a secondary configured, record only requests for which all
  // three responses arrived (and RecordIncomplete the others), or the noise is under-counted.
  void Record(const ComparedExchange& exchange, const DiffResult& raw, const DiffResult* noise);
  // A forked request whose copy was never sent (a full budget, the proxy stopping): it could
  // not be compared and says nothing about the dark side.
  void RecordIncomplete(std::string_view endpoint);

  void Merge(const ComparisonReport& other);

  // The report as JSON: thresholds, endpoint_overflow, then endpoints sorted by key, each with
  // its counters, "reported_fields", latency side by side, the difference sets and its fields
  // (reported ones first, then by raw count, then by path). ToJsonValue() is the same object,
  // for a caller that adds members (the cluster's name, its verdict).
  std::string ToJson() const;
  nlohmann::ordered_json ToJsonValue() const;

  // Fields of `endpoint` that pass the noise rule, sorted by path (empty for an unknown one).
  std::vector<std::string> ReportedFields(std::string_view endpoint) const;
  NoiseVerdict Judge(const EndpointComparison& endpoint, const FieldComparison& field) const;

  const EndpointComparison* Find(std::string_view endpoint) const;
  const std::map<std::string, EndpointComparison, std::less<>>& endpoints() const {
    return endpoints_;
  }
  uint64_t endpoint_overflow() const { return endpoint_overflow_; }
  size_t sample_count() const { return samples_; }
  const ComparisonReportOptions& options() const { return options_; }

 private:
  EndpointComparison* EndpointFor(std::string_view key);
  FieldComparison* FieldFor(EndpointComparison& endpoint, std::string_view path);
  void AddSample(FieldComparison& field, const DiffSample& sample);
  void AddDifferenceSet(EndpointComparison& endpoint, std::string_view set, uint64_t requests);

  ComparisonReportOptions options_;
  std::map<std::string, EndpointComparison, std::less<>> endpoints_;
  uint64_t endpoint_overflow_ = 0;  // requests of endpoints beyond max_endpoints
  size_t samples_ = 0;
};

// `text` with the values of credentials removed: JSON members and header lines named
// Authorization, Proxy-Authorization, Cookie or Set-Cookie (any case) keep their name and get
// "[redacted]" as value. Samples in the report are redacted so (the admin listener serves
// production bodies); so are the values of differences at such a field path.
std::string RedactSecrets(std::string_view text);

}  // namespace hammer::dark
