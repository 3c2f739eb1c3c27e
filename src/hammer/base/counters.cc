#include "hammer/base/counters.h"

#include <string>

namespace hammer {
namespace {

bool IsMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

Status Broken(const CounterSpec& spec, std::string_view why) {
  return Status::Error("counter '" + std::string(spec.field) + "' (" + std::string(spec.metric) +
                       "): " + std::string(why));
}

}  // namespace

Status CheckCounterSpecs(std::span<const CounterSpec> specs) {
  for (size_t i = 0; i < specs.size(); ++i) {
    const CounterSpec& spec = specs[i];
    if (!IsMetricName(spec.field)) return Broken(spec, "the field is no valid name");
    if (!IsMetricName(spec.metric)) return Broken(spec, "the metric is no valid name");
    const bool total = spec.metric.ends_with("_total");
    if (spec.kind == CounterKind::kGauge && total) return Broken(spec, "a gauge named _total");
    if (spec.kind != CounterKind::kGauge && !total) return Broken(spec, "a counter without _total");
    if (!spec.label.empty()) {
      if (!IsMetricName(spec.label_name()) || spec.label.find('=') == std::string_view::npos ||
          spec.label_value().empty()) {
        return Broken(spec, "the label is not name=value");
      }
      if (spec.kind == CounterKind::kByFailure) {
        return Broken(spec, "a counter by failure type has its own label");
      }
    }
    const bool opens_family = i == 0 || specs[i - 1].metric != spec.metric;
    if (opens_family) {
      if (spec.help.empty()) return Broken(spec, "the family's first entry has no help");
      for (size_t j = 0; j + 1 < i; ++j) {
        if (specs[j].metric == spec.metric) return Broken(spec, "the family's entries are apart");
      }
    } else {
      if (!spec.help.empty()) return Broken(spec, "help on an entry after the family's first");
      if (specs[i - 1].kind != spec.kind) return Broken(spec, "one family, two kinds");
      if (spec.label.empty() || specs[i - 1].label.empty()) {
        return Broken(spec, "entries of one family must each have a label");
      }
      for (size_t j = 0; j < i; ++j) {
        if (specs[j].metric == spec.metric && specs[j].label == spec.label) {
          return Broken(spec, "two entries with one label");
        }
      }
    }
  }
  return Status::Ok();
}

void AddCounterValues(std::vector<uint64_t>& into, std::span<const uint64_t> from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i)
    into[i] += from[i];
}

}  // namespace hammer
