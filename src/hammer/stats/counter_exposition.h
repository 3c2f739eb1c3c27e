// What a counter table (base/counters.h) becomes for its readers: Prometheus text families and
// JSON summary members, both read from CounterValues() and the table's kCounterSpecs.
//
// Threads: reentrant; the values are copies the caller took.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "hammer/base/counters.h"
#include "hammer/stats/prometheus_text.h"

namespace hammer::stats {

// One set of labels with its values, laid out by the table (e.g. one dark cluster's counters,
// labelled cluster="name"). The labels are views that must outlive the call.
struct CounterRow {
  std::vector<PrometheusLabelPair> labels;
  std::span<const uint64_t> values;
};

// Every family of `specs`, each announced once (# HELP, # TYPE) and followed by its samples for
// every row: a row's labels, then the entry's own label, or type="NAME" for each failure type of
// a kByFailure entry (types never counted are left out).
void AppendCounterFamilies(PrometheusText& out, std::span<const CounterSpec> specs,
                           std::span<const CounterRow> rows);
// The same for a table without labels.
void AppendCounterFamilies(PrometheusText& out, std::span<const CounterSpec> specs,
                           std::span<const uint64_t> values);

// "field": value for each entry; a kByFailure entry as {"type": n, ...} of the types counted.
void AddCounterJson(nlohmann::ordered_json& object, std::span<const CounterSpec> specs,
                    std::span<const uint64_t> values);

}  // namespace hammer::stats
