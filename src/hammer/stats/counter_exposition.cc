#include "hammer/stats/counter_exposition.h"

#include <string_view>

namespace hammer::stats {
namespace {

std::string_view TypeName(CounterKind kind) {
  return kind == CounterKind::kGauge ? "gauge" : "counter";
}

}  // namespace

void AppendCounterFamilies(PrometheusText& out, std::span<const CounterSpec> specs,
                           std::span<const CounterRow> rows) {
  size_t first_value = 0;  // of the current entry, in each row's values
  for (size_t i = 0; i < specs.size(); ++i) {
    const CounterSpec& spec = specs[i];
    if (i == 0 || specs[i - 1].metric != spec.metric) {
      out.Family(spec.metric, TypeName(spec.kind), spec.help);
    }
    for (const CounterRow& row : rows) {
      std::vector<PrometheusLabelPair> labels = row.labels;
      if (spec.kind == CounterKind::kByFailure) {
        labels.emplace_back("type", "");
        for (size_t type = 0; type < kFailureCount; ++type) {
          const uint64_t value = row.values[first_value + type];
          if (value == 0) continue;
          labels.back().second = kFailureNames[type];
          out.Sample(spec.metric, labels, value);
        }
        continue;
      }
      if (!spec.label.empty()) labels.emplace_back(spec.label_name(), spec.label_value());
      out.Sample(spec.metric, labels, row.values[first_value]);
    }
    first_value += spec.width();
  }
}

void AppendCounterFamilies(PrometheusText& out, std::span<const CounterSpec> specs,
                           std::span<const uint64_t> values) {
  const CounterRow row{{}, values};
  AppendCounterFamilies(out, specs, std::span<const CounterRow>(&row, 1));
}

void AddCounterJson(nlohmann::ordered_json& object, std::span<const CounterSpec> specs,
                    std::span<const uint64_t> values) {
  size_t first_value = 0;
  for (const CounterSpec& spec : specs) {
    const std::string field(spec.field);
    if (spec.kind == CounterKind::kByFailure) {
      nlohmann::ordered_json by_type = nlohmann::ordered_json::object();
      for (size_t type = 0; type < kFailureCount; ++type) {
        if (uint64_t n = values[first_value + type]; n > 0) by_type[kFailureNames[type]] = n;
      }
      object[field] = std::move(by_type);
    } else {
      object[field] = values[first_value];
    }
    first_value += spec.width();
  }
}

}  // namespace hammer::stats
