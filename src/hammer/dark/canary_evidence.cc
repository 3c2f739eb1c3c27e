#include "hammer/dark/canary_evidence.h"

#include <algorithm>

#include "hammer/stats/significance.h"

namespace hammer::dark {
namespace {

// Whether a difference set ("a\nb\nc", sorted) names one of `fields` (sorted by path).
bool Names(std::string_view set, const std::vector<CountedField>& fields) {
  auto by_path = [](const CountedField& field, std::string_view path) { return field.path < path; };
  while (!set.empty()) {
    size_t end = set.find('\n');
    std::string_view path = set.substr(0, end);
    auto found = std::lower_bound(fields.begin(), fields.end(), path, by_path);
    if (found != fields.end() && found->path == path) return true;
    set.remove_prefix(end == std::string_view::npos ? set.size() : end + 1);
  }
  return false;
}

// The fields that differed in the most requests first; ties keep their order (by path).
void MostFrequentFirst(std::vector<CountedField>& fields) {
  std::stable_sort(fields.begin(), fields.end(), [](const CountedField& a, const CountedField& b) {
    return a.requests > b.requests;
  });
}

}  // namespace

CanaryEvidence CanaryEvidence::ForEndpoint(const ComparisonReport& report,
                                           const EndpointComparison& endpoint, double alpha) {
  CanaryEvidence evidence;
  evidence.pairs = endpoint.pairs;
  evidence.primary_failures = endpoint.primary_failures;
  evidence.dark_failures = endpoint.dark_failures;
  evidence.compared = endpoint.total;
  evidence.primary_latency_us = endpoint.primary_latency_us;
  evidence.dark_latency_us = endpoint.dark_latency_us;
  evidence.latency_intervals = endpoint.latency_intervals;
  evidence.with_secondary = endpoint.with_secondary;
  for (const auto& [path, field] : endpoint.fields) {  // sorted by path
    if (field.raw == 0) continue;
    bool real =
        report.Judge(endpoint, field).reported &&
        stats::FisherExactGreater(field.raw, endpoint.total, field.noise, endpoint.total) < alpha;
    if (real) {
      evidence.differing_fields.push_back({path, path, field.raw});
    } else {
      ++evidence.noisy_fields;
    }
  }
  if (evidence.differing_fields.empty()) return evidence;
  for (const auto& [set, requests] : endpoint.difference_sets) {  // fields still by path here
    if (Names(set, evidence.differing_fields)) evidence.differing += requests;
  }
  evidence.differing += endpoint.difference_set_overflow;
  MostFrequentFirst(evidence.differing_fields);
  return evidence;
}

CanaryEvidence CanaryEvidence::ForCluster(const ComparisonReport& report, double alpha) {
  CanaryEvidence total;
  for (const auto& [key, endpoint] : report.endpoints()) {
    CanaryEvidence one = ForEndpoint(report, endpoint, alpha);
    total.pairs += one.pairs;
    total.primary_failures += one.primary_failures;
    total.dark_failures += one.dark_failures;
    total.compared += one.compared;
    total.differing += one.differing;
    total.noisy_fields += one.noisy_fields;
    total.with_secondary += one.with_secondary;
    for (CountedField& field : one.differing_fields) {
      field.name = key + " " + field.name;
      total.differing_fields.push_back(std::move(field));
    }
    total.primary_latency_us.Merge(one.primary_latency_us);
    total.dark_latency_us.Merge(one.dark_latency_us);
    total.latency_intervals.Merge(one.latency_intervals);
  }
  MostFrequentFirst(total.differing_fields);
  return total;
}

}  // namespace hammer::dark
