#include "hammer/stats/report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "hammer/stats/report/html_escape.h"

namespace hammer::stats {
namespace {

// viewBox geometry shared by the charts (the SVG scales to the page width).
constexpr double kWidth = 960;
constexpr double kLineHeight = 320;
constexpr double kLeft = 64;
constexpr double kRight = 36;
constexpr double kTop = 14;
constexpr double kBottom = 46;
constexpr size_t kMarkersUpTo = 40;  // draw point markers when a chart has this few x values

constexpr std::array<std::string_view, 12> kPalette = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
    "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f9e89", "#d37295",
};

std::string Num(double v) {
  return fmt::format("{:.1f}", v);
}

struct Axis {
  double low = 0;
  double high = 1;
  bool log = false;
  std::vector<ChartTick> ticks;
  std::vector<double> minor;  // unlabelled grid lines
};

// 1, 2, 5 × 10^k step giving about `target` intervals over [0, high].
double NiceStep(double high, int target) {
  double rough = high / target;
  double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= rough) return m * magnitude;
  }
  return 10 * magnitude;
}

// [0, a round number above `high` with a little headroom].
Axis LinearAxis(double high) {
  Axis axis;
  if (!(high > 0) || !std::isfinite(high)) high = 1;
  high *= 1.04;
  double step = NiceStep(high, 5);
  axis.high = std::ceil(high / step - 1e-9) * step;
  for (double v = 0; v <= axis.high + step / 2; v += step)
    axis.ticks.push_back({v, FormatCompact(v)});
  return axis;
}

Axis LogAxis(double low, double high) {
  Axis axis;
  axis.log = true;
  if (!(low > 0) || !std::isfinite(low)) low = 1e-3;
  if (!(high > low) || !std::isfinite(high)) high = low * 10;
  int first = static_cast<int>(std::floor(std::log10(low) + 1e-9));
  int last = static_cast<int>(std::ceil(std::log10(high) - 1e-9));
  if (last <= first) last = first + 1;
  axis.low = std::pow(10.0, first);
  axis.high = std::pow(10.0, last);
  bool label_minor = last - first <= 2;
  for (int e = first; e <= last; ++e) {
    double decade = std::pow(10.0, e);
    axis.ticks.push_back({decade, FormatCompact(decade)});
    if (e == last) break;
    for (double m : {2.0, 5.0}) {
      if (label_minor) {
        axis.ticks.push_back({m * decade, FormatCompact(m * decade)});
      } else {
        axis.minor.push_back(m * decade);
      }
    }
  }
  return axis;
}

// Position of `v` on `axis` as a fraction of its length (0 = low end).
double Fraction(const Axis& axis, double v) {
  if (axis.log) {
    v = std::max(v, axis.low);
    return (std::log10(v) - std::log10(axis.low)) / (std::log10(axis.high) - std::log10(axis.low));
  }
  return (v - axis.low) / (axis.high - axis.low);
}

std::string Legend(const std::vector<std::string>& names, const std::vector<std::string>& colors,
                   const std::vector<bool>& dashed) {
  std::string out = "<ul class=\"legend\">";
  for (size_t i = 0; i < names.size(); ++i) {
    out += "<li><span class=\"swatch";
    if (i < dashed.size() && dashed[i]) out += " dashed";
    out += "\" style=\"--c:";
    AppendHtmlEscaped(out, colors[i]);
    out += "\"></span>";
    AppendHtmlEscaped(out, names[i]);
    out += "</li>";
  }
  out += "</ul>";
  return out;
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string_view ChartColor(size_t i) {
  return kPalette[i % kPalette.size()];
}

std::string FormatCompact(double value) {
  double magnitude = std::fabs(value);
  if (magnitude >= 1e9) return FormatCompact(value / 1e9) + "G";
  if (magnitude >= 1e6) return FormatCompact(value / 1e6) + "M";
  if (magnitude >= 1e4) return FormatCompact(value / 1e3) + "k";
  if (magnitude >= 1000) {
    int64_t rounded = std::llround(value);
    return fmt::format("{},{:03d}", rounded / 1000, std::abs(rounded % 1000));
  }
  std::string text = fmt::format("{:.3g}", value);
  if (text.find('e') != std::string::npos) text = fmt::format("{:.6f}", value);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0')
      text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

std::string ShortenMiddle(std::string_view text, size_t max_chars) {
  std::vector<size_t> starts;  // byte offset of each code point
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  if (starts.size() <= max_chars || max_chars < 3) return std::string(text);
  size_t head = (max_chars - 1) / 2;
  size_t tail = max_chars - 1 - head;
  return std::string(text.substr(0, starts[head])) + "\xE2\x80\xA6" +
         std::string(text.substr(starts[starts.size() - tail]));
}

namespace {

// Byte offset of the code point that starts at or before `offset` in `text`.
size_t CodePointStart(std::string_view text, size_t offset) {
  while (offset > 0 && offset < text.size() &&
         (static_cast<unsigned char>(text[offset]) & 0xC0) == 0x80)
    --offset;
  return offset;
}

// Indices of `labels` grouped by equal value, groups of one left out.
std::vector<std::vector<size_t>> Collisions(const std::vector<std::string>& labels) {
  std::map<std::string_view, std::vector<size_t>> by_label;
  for (size_t i = 0; i < labels.size(); ++i)
    by_label[labels[i]].push_back(i);
  std::vector<std::vector<size_t>> groups;
  for (auto& [label, indices] : by_label) {
    if (indices.size() > 1) groups.push_back(std::move(indices));
  }
  return groups;
}

}  // namespace

std::vector<std::string> DistinctShortLabels(const std::vector<std::string>& texts,
                                             size_t max_chars) {
  constexpr size_t kContextBytes = 6;  // shown before the first difference
  std::vector<std::string> labels;
  labels.reserve(texts.size());
  for (const std::string& text : texts)
    labels.push_back(ShortenMiddle(text, max_chars));
  for (const std::vector<size_t>& group : Collisions(labels)) {
    // The group's texts start alike up to `common`: show each from just before it.
    size_t common = texts[group[0]].size();
    for (size_t i : group) {
      const std::string& a = texts[group[0]];
      const std::string& b = texts[i];
      size_t n = 0;
      while (n < common && n < b.size() && a[n] == b[n])
        ++n;
      common = n;
    }
    for (size_t i : group) {
      std::string_view text = texts[i];
      size_t from = CodePointStart(text, common > kContextBytes ? common - kContextBytes : 0);
      if (from == 0) continue;
      labels[i] = "\xE2\x80\xA6" + ShortenMiddle(text.substr(from), max_chars - 1);
    }
  }
  for (const std::vector<size_t>& group : Collisions(labels)) {
    for (size_t n = 1; n < group.size(); ++n)
      labels[group[n]] += " #" + std::to_string(n + 1);
  }
  return labels;
}

std::string RenderLineChart(const LineChart& chart) {
  const double plot_left = kLeft;
  const double plot_right = kWidth - kRight;
  const double plot_top = kTop;
  const double plot_bottom = kLineHeight - kBottom;

  double x_low = std::numeric_limits<double>::infinity();
  double x_high = -x_low;
  for (double x : chart.x) {
    x_low = std::min(x_low, x);
    x_high = std::max(x_high, x);
  }
  for (const ChartTick& tick : chart.x_ticks) {
    x_low = std::min(x_low, tick.value);
    x_high = std::max(x_high, tick.value);
  }
  if (!std::isfinite(x_low)) {
    x_low = 0;
    x_high = 1;
  }
  if (x_high <= x_low) x_high = x_low + 1;
  auto px = [&](double x) {
    return plot_left + (x - x_low) / (x_high - x_low) * (plot_right - plot_left);
  };

  double y_min = std::numeric_limits<double>::infinity();
  double y_max = 0;
  for (const LineSeries& s : chart.series) {
    for (double v : s.values) {
      if (std::isnan(v)) continue;
      y_max = std::max(y_max, v);
      if (v > 0) y_min = std::min(y_min, v);
    }
  }
  Axis y_axis = chart.log_y ? LogAxis(y_min, y_max) : LinearAxis(y_max);
  auto py = [&](double v) { return plot_bottom - Fraction(y_axis, v) * (plot_bottom - plot_top); };

  std::string out = "<figure class=\"chart\" id=\"";
  AppendHtmlEscaped(out, chart.id);
  out += "\">";
  out += fmt::format(
      "<svg viewBox=\"0 0 {} {}\" role=\"img\" preserveAspectRatio=\"xMidYMid meet\" "
      "aria-label=\"",
      kWidth, kLineHeight);
  AppendHtmlEscaped(out, chart.label);
  out += "\" data-hover=\"";
  {
    nlohmann::json hover;
    nlohmann::json xs = nlohmann::json::array();
    for (double x : chart.x)
      xs.push_back(std::round(px(x) * 10) / 10);
    hover["px"] = std::move(xs);
    hover["x"] = chart.x_hover;
    hover["u"] = chart.y_unit;
    nlohmann::json series = nlohmann::json::array();
    for (const LineSeries& s : chart.series) {
      nlohmann::json values = nlohmann::json::array();
      for (double v : s.values)
        values.push_back(std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v));
      series.push_back({{"n", s.name}, {"c", s.color}, {"v", std::move(values)}});
    }
    hover["s"] = std::move(series);
    AppendHtmlEscaped(out, Dump(hover));
  }
  out += "\">";

  // Grid, axes and labels.
  out += "<g class=\"grid\">";
  for (double v : y_axis.minor)
    out += fmt::format("<line class=\"minor\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>",
                       Num(plot_left), Num(plot_right), Num(py(v)), Num(py(v)));
  for (const ChartTick& tick : y_axis.ticks)
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>", Num(plot_left),
                       Num(plot_right), Num(py(tick.value)), Num(py(tick.value)));
  for (const ChartTick& tick : chart.x_ticks)
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>", Num(px(tick.value)),
                       Num(px(tick.value)), Num(plot_top), Num(plot_bottom));
  out += "</g><g class=\"axis\">";
  out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>", Num(plot_left),
                     Num(plot_right), Num(plot_bottom), Num(plot_bottom));
  for (const ChartTick& tick : y_axis.ticks) {
    out += fmt::format("<text class=\"y\" x=\"{}\" y=\"{}\">", Num(plot_left - 8),
                       Num(py(tick.value) + 4));
    AppendHtmlEscaped(out, tick.label);
    out += "</text>";
  }
  for (const ChartTick& tick : chart.x_ticks) {
    out += fmt::format("<text class=\"x\" x=\"{}\" y=\"{}\">", Num(px(tick.value)),
                       Num(plot_bottom + 18));
    AppendHtmlEscaped(out, tick.label);
    out += "</text>";
  }
  out += fmt::format("<text class=\"title x\" x=\"{}\" y=\"{}\">",
                     Num((plot_left + plot_right) / 2), Num(kLineHeight - 6));
  AppendHtmlEscaped(out, chart.x_title);
  out += fmt::format("</text><text class=\"title y\" transform=\"translate(14 {}) rotate(-90)\">",
                     Num((plot_top + plot_bottom) / 2));
  AppendHtmlEscaped(out, chart.y_title);
  out += "</text></g>";

  // Series: one path each, broken at missing values; markers when the points are few or alone.
  out += "<g class=\"series\">";
  for (const LineSeries& s : chart.series) {
    std::string path;
    std::string markers;
    size_t n = std::min(s.values.size(), chart.x.size());
    for (size_t i = 0; i < n; ++i) {
      double v = s.values[i];
      if (std::isnan(v)) continue;
      bool starts = i == 0 || std::isnan(s.values[i - 1]);
      bool alone = starts && (i + 1 >= n || std::isnan(s.values[i + 1]));
      path += fmt::format("{}{} {}", starts ? "M" : "L", Num(px(chart.x[i])), Num(py(v)));
      if (alone || chart.x.size() <= kMarkersUpTo)
        markers +=
            fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2.5\"/>", Num(px(chart.x[i])), Num(py(v)));
    }
    out += "<g style=\"--c:";
    AppendHtmlEscaped(out, s.color);
    out += "\"";
    if (s.dashed) out += " class=\"dashed\"";
    out += ">";
    if (!path.empty()) out += "<path d=\"" + path + "\"/>";
    out += markers;
    out += "</g>";
  }
  out += "</g>";
  out += fmt::format(
      "<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"{}\" y2=\"{}\" visibility=\"hidden\"/>",
      Num(plot_top), Num(plot_bottom));
  out += "</svg>";

  std::vector<std::string> names, colors;
  std::vector<bool> dashed;
  for (const LineSeries& s : chart.series) {
    names.push_back(s.name);
    colors.push_back(s.color);
    dashed.push_back(s.dashed);
  }
  out += Legend(names, colors, dashed);
  out += "<div class=\"hover\" hidden></div></figure>\n";
  return out;
}

std::string RenderStackedBarChart(const StackedBarChart& chart) {
  constexpr double kLabelWidth = 300;
  constexpr double kRow = 26;
  constexpr double kBar = 16;
  constexpr size_t kLabelChars = 40;
  const double plot_left = kLabelWidth;
  const double plot_right = kWidth - 56;  // room for the total after the longest bar
  const double plot_top = 8;
  const double plot_bottom = plot_top + kRow * static_cast<double>(chart.bars.size());
  const double height = plot_bottom + 40;

  uint64_t largest = 0;
  for (const auto& row : chart.values) {
    uint64_t sum = 0;
    for (uint64_t v : row)
      sum += v;
    largest = std::max(largest, sum);
  }
  Axis axis = LinearAxis(static_cast<double>(largest));
  auto px = [&](double v) { return plot_left + Fraction(axis, v) * (plot_right - plot_left); };

  std::string out = "<figure class=\"chart bars\" id=\"";
  AppendHtmlEscaped(out, chart.id);
  out +=
      fmt::format("\"><svg viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"", kWidth, Num(height));
  AppendHtmlEscaped(out, chart.label);
  out += "\"><g class=\"grid\">";
  for (const ChartTick& tick : axis.ticks)
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>", Num(px(tick.value)),
                       Num(px(tick.value)), Num(plot_top), Num(plot_bottom));
  out += "</g><g class=\"axis\">";
  for (const ChartTick& tick : axis.ticks) {
    out += fmt::format("<text class=\"x\" x=\"{}\" y=\"{}\">", Num(px(tick.value)),
                       Num(plot_bottom + 16));
    AppendHtmlEscaped(out, tick.label);
    out += "</text>";
  }
  out += fmt::format("<text class=\"title x\" x=\"{}\" y=\"{}\">",
                     Num((plot_left + plot_right) / 2), Num(height - 6));
  AppendHtmlEscaped(out, chart.x_title);
  out += "</text></g>";

  const std::vector<std::string> labels = DistinctShortLabels(chart.bars, kLabelChars);
  for (size_t bar = 0; bar < chart.bars.size(); ++bar) {
    double y = plot_top + kRow * static_cast<double>(bar);
    out += fmt::format("<g class=\"bar\"><text class=\"label\" x=\"{}\" y=\"{}\"><title>",
                       Num(plot_left - 8), Num(y + kRow / 2 + 4));
    AppendHtmlEscaped(out, chart.bars[bar]);
    out += "</title>";
    AppendHtmlEscaped(out, labels[bar]);
    out += "</text>";
    uint64_t cumulative = 0;
    const std::vector<uint64_t>& row = chart.values[bar];
    for (size_t stack = 0; stack < row.size() && stack < chart.stacks.size(); ++stack) {
      if (row[stack] == 0) continue;
      double x0 = px(static_cast<double>(cumulative));
      cumulative += row[stack];
      double x1 = px(static_cast<double>(cumulative));
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"", Num(x0),
                         Num(y + (kRow - kBar) / 2), Num(std::max(x1 - x0, 0.5)), Num(kBar));
      AppendHtmlEscaped(out, chart.colors[stack]);
      out += "\"><title>";
      AppendHtmlEscaped(out, chart.stacks[stack] + ": " + std::to_string(row[stack]));
      out += "</title></rect>";
    }
    out += fmt::format("<text class=\"total\" x=\"{}\" y=\"{}\">{}</text></g>",
                       Num(px(static_cast<double>(cumulative)) + 6), Num(y + kRow / 2 + 4),
                       cumulative);
  }
  out += "</svg>";
  out += Legend(chart.stacks, chart.colors, {});
  out += "</figure>\n";
  return out;
}

}  // namespace hammer::stats
