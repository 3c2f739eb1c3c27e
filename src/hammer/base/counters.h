// Counters declared once: a command lists its counters in one X-macro table, one line each, and
// the struct fields, the merge across workers, the JSON summary fields, the Hadoop counters and
// the Prometheus exposition all follow from that line (the pattern of Envoy's stats macros,
// `ALL_..._STATS(COUNTER, GAUGE, ...)` expanded by `GENERATE_COUNTER_STRUCT` and friends).
//
// A table is a macro taking one macro X, with one entry per counter:
//
//   #define HAMMER_EXAMPLE_COUNTERS(X)
//     X(requests, kCounter, "hammer_x_requests_total", "", "Requests received.")
//     X(in_flight, kGauge, "hammer_x_in_flight", "", "Requests in flight now.")
//     X(to_client, kCounter, "hammer_x_bytes_total", "direction=to_client", "Bytes moved.")
//     X(to_server, kCounter, "hammer_x_bytes_total", "direction=to_server", "")
//     X(failed, kByFailure, "hammer_x_failures_total", "", "Failures, by type.")
//
// (each line ending in a backslash), and a struct holds it with HAMMER_ATOMIC_COUNTERS(TABLE)
// (one writer thread, any number of readers: relaxed atomics) or HAMMER_PLAIN_COUNTERS(TABLE)
// (a value merged after the run).
// Each entry is X(field, kind, metric, label, help):
//   field   the member, and the counter's key in JSON summaries and its Hadoop counter name;
//   kind    kCounter (only grows), kGauge (up and down; the shares of several workers add up),
//           or kByFailure (one counter per failure type of base/failure.h, labelled type=NAME);
//   metric  the Prometheus family the counter is a sample of (a counter's name ends in _total);
//   label   the sample's own label within its family, "name=value", or "" for none;
//   help    the family's help text, on its first entry; later entries of the family leave it
//           "". The entries of one family are adjacent.
// CheckCounterSpecs tells whether a table keeps these rules (every table has a unit test).
//
// CounterValues(), which both kinds of struct have, lays the values out in table order, one per
// entry (kFailureCount for a kByFailure entry): the form every consumer reads
// (stats/counter_exposition.h for Prometheus text and JSON, ReportCounters for Hadoop).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "hammer/base/failure.h"
#include "hammer/base/status.h"

namespace hammer {

enum class CounterKind : uint8_t { kCounter, kGauge, kByFailure };

struct CounterSpec {
  std::string_view field;
  CounterKind kind;
  std::string_view metric;
  std::string_view label;  // "name=value" or empty
  std::string_view help;   // on a family's first entry only

  // How many values the entry has in CounterValues().
  constexpr size_t width() const { return kind == CounterKind::kByFailure ? kFailureCount : 1; }
  std::string_view label_name() const { return label.substr(0, label.find('=')); }
  std::string_view label_value() const {
    size_t eq = label.find('=');
    return eq == std::string_view::npos ? std::string_view() : label.substr(eq + 1);
  }
};

// OK, or what breaks the rules above (the first broken one, naming the entry).
Status CheckCounterSpecs(std::span<const CounterSpec> specs);

// How many values a table lays out (the sum of its entries' widths).
constexpr size_t CounterValueCount(std::span<const CounterSpec> specs) {
  size_t n = 0;
  for (const CounterSpec& spec : specs)
    n += spec.width();
  return n;
}

// Adds `from` into `into`, value by value (both laid out by one table).
void AddCounterValues(std::vector<uint64_t>& into, std::span<const uint64_t> from);

namespace counters_internal {

template <CounterKind kind>
struct Atomic {
  using type = std::atomic<uint64_t>;
};
template <>
struct Atomic<CounterKind::kByFailure> {
  using type = std::array<std::atomic<uint64_t>, kFailureCount>;
};
template <CounterKind kind>
struct Plain {
  using type = uint64_t;
};
template <>
struct Plain<CounterKind::kByFailure> {
  using type = FailureCounts;
};

inline void Collect(std::vector<uint64_t>& out, const std::atomic<uint64_t>& value) {
  out.push_back(value.load(std::memory_order_relaxed));
}
inline void Collect(std::vector<uint64_t>& out, uint64_t value) {
  out.push_back(value);
}
inline void Collect(std::vector<uint64_t>& out,
                    const std::array<std::atomic<uint64_t>, kFailureCount>& values) {
  for (const std::atomic<uint64_t>& value : values)
    out.push_back(value.load(std::memory_order_relaxed));
}
inline void Collect(std::vector<uint64_t>& out, const FailureCounts& values) {
  out.insert(out.end(), values.by_type.begin(), values.by_type.end());
}

inline void Add(uint64_t& into, uint64_t from) {
  into += from;
}
inline void Add(FailureCounts& into, const FailureCounts& from) {
  into.Merge(from);
}

}  // namespace counters_internal

// Raises a counter (or a gauge) of an atomic table; its one writer thread only.
inline void Bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}
// Lowers a gauge of an atomic table; its one writer thread only.
inline void Drop(std::atomic<uint64_t>& gauge, uint64_t n = 1) {
  gauge.store(gauge.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
}

}  // namespace hammer

#define HAMMER_COUNTER_SPEC(field, kind, metric, label, help) \
  ::hammer::CounterSpec{#field, ::hammer::CounterKind::kind, metric, label, help},
#define HAMMER_COUNTER_ATOMIC_FIELD(field, kind, metric, label, help) \
  ::hammer::counters_internal::Atomic<::hammer::CounterKind::kind>::type field{};
#define HAMMER_COUNTER_PLAIN_FIELD(field, kind, metric, label, help) \
  ::hammer::counters_internal::Plain<::hammer::CounterKind::kind>::type field{};
#define HAMMER_COUNTER_COLLECT(field, kind, metric, label, help) \
  ::hammer::counters_internal::Collect(values, field);
#define HAMMER_COUNTER_ADD(field, kind, metric, label, help) \
  ::hammer::counters_internal::Add(field, other.field);

// The members of a struct holding TABLE as relaxed atomics (one writer thread, readers on any):
// a field per entry, kCounterSpecs, and CounterValues().
#define HAMMER_ATOMIC_COUNTERS(TABLE)                                                    \
  TABLE(HAMMER_COUNTER_ATOMIC_FIELD)                                                     \
  static constexpr ::hammer::CounterSpec kCounterSpecs[] = {TABLE(HAMMER_COUNTER_SPEC)}; \
  std::vector<uint64_t> CounterValues() const {                                          \
    std::vector<uint64_t> values;                                                        \
    values.reserve(::hammer::CounterValueCount(kCounterSpecs));                          \
    TABLE(HAMMER_COUNTER_COLLECT)                                                        \
    return values;                                                                       \
  }

// The members of a value struct holding TABLE as plain integers: a field per entry,
// kCounterSpecs, CounterValues(), and MergeCounters(other), which adds other's counters in.
#define HAMMER_PLAIN_COUNTERS(TABLE)                                                     \
  TABLE(HAMMER_COUNTER_PLAIN_FIELD)                                                      \
  static constexpr ::hammer::CounterSpec kCounterSpecs[] = {TABLE(HAMMER_COUNTER_SPEC)}; \
  std::vector<uint64_t> CounterValues() const {                                          \
    std::vector<uint64_t> values;                                                        \
    values.reserve(::hammer::CounterValueCount(kCounterSpecs));                          \
    TABLE(HAMMER_COUNTER_COLLECT)                                                        \
    return values;                                                                       \
  }                                                                                      \
  template <typename Other>                                                              \
  void MergeCounters(const Other& other) {                                               \
    TABLE(HAMMER_COUNTER_ADD)                                                            \
  }
