#include "hammer/stats/prometheus_text.h"

#include <fmt/format.h>

#include <cmath>

namespace hammer::stats {

std::string PrometheusLabel(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out.append("\\n");
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::vector<uint64_t> CumulativeCounts(const Histogram& micros, std::span<const int64_t> bounds) {
  std::vector<uint64_t> counts(bounds.size(), 0);
  // Buckets come in value order, so each bound only ever moves forward.
  size_t first_open = 0;  // bounds before it are below the current bucket
  micros.ForEachBucket([&](int64_t /*lowest*/, int64_t highest, uint64_t count) {
    while (first_open < bounds.size() && bounds[first_open] < highest)
      ++first_open;
    if (first_open < bounds.size()) counts[first_open] += count;
  });
  for (size_t i = 1; i < counts.size(); ++i)
    counts[i] += counts[i - 1];
  return counts;
}

void PrometheusText::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_.append("# HELP ").append(name).push_back(' ');
  for (char c : help) {  // the text format escapes a backslash and a line feed in help text
    if (c == '\\') {
      out_.append("\\\\");
    } else if (c == '\n') {
      out_.append("\\n");
    } else {
      out_.push_back(c);
    }
  }
  fmt::format_to(std::back_inserter(out_), "\n# TYPE {} {}\n", name, type);
}

void PrometheusText::Series(std::string_view name, std::string_view suffix,
                            std::span<const PrometheusLabelPair> labels, std::string_view le) {
  out_.append(name).append(suffix);
  if (keep_samples_) {
    PrometheusSample& kept = samples_.emplace_back();
    kept.name.append(name).append(suffix);
    for (const auto& [label, value] : labels)
      kept.labels.emplace_back(label, value);
    if (!le.empty()) kept.labels.emplace_back("le", le);
  }
  if (labels.empty() && le.empty()) {
    out_.push_back(' ');
    return;
  }
  out_.push_back('{');
  bool first = true;
  for (const auto& [label, value] : labels) {
    if (!first) out_.push_back(',');
    first = false;
    out_.append(label).append("=\"").append(PrometheusLabel(value)).append("\"");
  }
  if (!le.empty()) {
    if (!first) out_.push_back(',');
    out_.append("le=\"").append(le).append("\"");
  }
  out_.append("} ");
}

void PrometheusText::Kept(double value) {
  if (keep_samples_) samples_.back().value = value;
}

void PrometheusText::Sample(std::string_view name, std::span<const PrometheusLabelPair> labels,
                            uint64_t value) {
  Series(name, "", labels, "");
  Kept(static_cast<double>(value));
  fmt::format_to(std::back_inserter(out_), "{}\n", value);
}

void PrometheusText::Sample(std::string_view name, std::span<const PrometheusLabelPair> labels,
                            double value) {
  Series(name, "", labels, "");
  Kept(value);
  if (std::isnan(value)) {  // the text format's spellings (Go's ParseFloat), not fmt's
    out_.append("NaN\n");
  } else if (std::isinf(value)) {
    out_.append(value > 0 ? "+Inf\n" : "-Inf\n");
  } else {
    fmt::format_to(std::back_inserter(out_), "{}\n", value);
  }
}

void PrometheusText::HistogramSeconds(std::string_view name,
                                      std::span<const PrometheusLabelPair> labels,
                                      const Histogram& micros, int64_t sum_micros,
                                      std::span<const int64_t> bounds_micros) {
  const std::vector<uint64_t> cumulative = CumulativeCounts(micros, bounds_micros);
  for (size_t i = 0; i < bounds_micros.size(); ++i) {
    Series(name, "_bucket", labels, fmt::format("{}", static_cast<double>(bounds_micros[i]) / 1e6));
    fmt::format_to(std::back_inserter(out_), "{}\n", cumulative[i]);
    Kept(static_cast<double>(cumulative[i]));
  }
  const auto count = static_cast<double>(micros.total_count());
  Series(name, "_bucket", labels, "+Inf");
  fmt::format_to(std::back_inserter(out_), "{}\n", micros.total_count());
  Kept(count);
  Series(name, "_sum", labels, "");
  fmt::format_to(std::back_inserter(out_), "{}\n", static_cast<double>(sum_micros) / 1e6);
  Kept(static_cast<double>(sum_micros) / 1e6);
  Series(name, "_count", labels, "");
  fmt::format_to(std::back_inserter(out_), "{}\n", micros.total_count());
  Kept(count);
}

}  // namespace hammer::stats
