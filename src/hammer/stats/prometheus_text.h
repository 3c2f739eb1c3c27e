// PrometheusText: builds the Prometheus text exposition format (version 0.0.4, served as
// "text/plain; version=0.0.4"; https://prometheus.io/docs/instrumenting/exposition_formats/),
// shared by every /metrics endpoint of hammer (`hammer dark`'s admin listener, `hammer load
// --metrics-listen`).
//
// A metric family is announced once (Family: its # HELP and # TYPE lines), then its samples
// follow. Label values are escaped here (PrometheusLabel); metric and label names are the
// caller's constants and are written as given. Histograms become Prometheus histograms:
// cumulative `_bucket{le="..."}` series for a fixed, caller-chosen set of bounds plus
// `le="+Inf"`, `_sum` and `_count`, computed from a stats::Histogram of microseconds.
//
// Built with keep_samples, it also keeps each sample as a value (samples()): the same series,
// labels unescaped, for a sender of another format (Prometheus remote write) that must carry
// exactly what a scrape sees. A value type that only appends; no I/O, not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/stats/histogram.h"

namespace hammer::stats {

// A label value escaped as the text format asks: backslash, double quote and newline.
std::string PrometheusLabel(std::string_view value);

// A label as (name, value); the value is escaped when written.
using PrometheusLabelPair = std::pair<std::string_view, std::string_view>;

// How many of `micros`'s values are at or below each bound (µs, ascending): the cumulative
// counts of a Prometheus histogram. A value is counted under a bound when the whole of its
// histogram bucket is (Histogram::ForEachBucket's highest equivalent value <= bound): below
// 2048 µs that is exact, above it a value within 0.1% of a bound may count under the next one.
std::vector<uint64_t> CumulativeCounts(const Histogram& micros, std::span<const int64_t> bounds);

// One sample as kept by PrometheusText: the series name (with its `_bucket`, `_sum` or
// `_count` suffix), its labels in the order written (`le` last), and the value.
struct PrometheusSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

class PrometheusText {
 public:
  explicit PrometheusText(bool keep_samples = false) : keep_samples_(keep_samples) {}

  // "# HELP name help" and "# TYPE name type" (type: counter, gauge, histogram).
  void Family(std::string_view name, std::string_view type, std::string_view help);
  // "name{labels} value"; integer values are written exactly.
  void Sample(std::string_view name, std::span<const PrometheusLabelPair> labels, uint64_t value);
  void Sample(std::string_view name, std::span<const PrometheusLabelPair> labels, double value);
  // The series of one histogram of `name` (announced with type "histogram"): name_bucket for
  // each of `bounds_micros` (written in seconds) and +Inf, name_sum (`sum_micros` in seconds)
  // and name_count, each with `labels` (and `le` for the buckets).
  void HistogramSeconds(std::string_view name, std::span<const PrometheusLabelPair> labels,
                        const Histogram& micros, int64_t sum_micros,
                        std::span<const int64_t> bounds_micros);

  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }
  // Empty unless built with keep_samples.
  std::vector<PrometheusSample> TakeSamples() { return std::move(samples_); }

 private:
  void Series(std::string_view name, std::string_view suffix,
              std::span<const PrometheusLabelPair> labels, std::string_view le);
  void Kept(double value);  // the value of the series Series() just wrote

  std::string out_;
  bool keep_samples_ = false;
  std::vector<PrometheusSample> samples_;
};

}  // namespace hammer::stats
