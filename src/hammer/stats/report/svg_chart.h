// SvgChart: the HTML report's charts as inline SVG, generated here so that the report needs no
// plotting library, no network and no build-time npm: line charts (linear or log-scale y, any
// x ticks) and horizontal stacked bar charts.
//
// Each Render* returns one <figure>: the <svg> (scales with the page width through its viewBox),
// an HTML legend, and the data the report's script (src/assets/report.js) reads for hover
// values, in a data-hover attribute. Every name and label is HTML-escaped here; callers pass
// plain text. Values that are NaN are "no value": a line breaks there. Pure functions;
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hammer::stats {

struct ChartTick {
  double value = 0;
  std::string label;
};

struct LineSeries {
  std::string name;
  std::string color;           // CSS colour, e.g. ChartColor(i)
  std::vector<double> values;  // one per x of the chart; NaN: none
  bool dashed = false;
};

struct LineChart {
  std::string id;                    // element id of the <figure>
  std::string label;                 // accessible name of the chart
  std::vector<double> x;             // increasing, in axis units
  std::vector<std::string> x_hover;  // per x: how the hover box names the position
  std::vector<ChartTick> x_ticks;    // the x range also covers every tick
  std::string x_title;
  std::string y_title;
  std::string y_unit;  // after each value in the hover box ("ms", "/s")
  bool log_y = false;  // log10 scale: values <= 0 are drawn at the bottom of the axis
  std::vector<LineSeries> series;
};

struct StackedBarChart {
  std::string id;
  std::string label;
  std::vector<std::string> bars;              // one label per bar (top to bottom)
  std::vector<std::string> stacks;            // one name per segment kind (legend)
  std::vector<std::string> colors;            // one per stack
  std::vector<std::vector<uint64_t>> values;  // [bar][stack]
  std::string x_title;
};

std::string RenderLineChart(const LineChart& chart);
std::string RenderStackedBarChart(const StackedBarChart& chart);

// The report's palette (colour-blind-safe first): series i's colour, cycling after 12.
std::string_view ChartColor(size_t i);

// "12", "0.25", "1.5k", "12M": at most 3 significant digits, for axis labels.
std::string FormatCompact(double value);

// `text` shortened to at most max_chars code points, "…" in the middle.
std::string ShortenMiddle(std::string_view text, size_t max_chars);

// ShortenMiddle of each of `texts` (distinct), kept distinct: texts whose shortened forms
// collide (hundreds of URLs that differ only in the middle) are shown from a little before
// the point where they start to differ ("…/item/4711/reviews?page=2"), and any that still
// collide get " #2", " #3", ... in input order. Same size and order as `texts`.
std::vector<std::string> DistinctShortLabels(const std::vector<std::string>& texts,
                                             size_t max_chars);

}  // namespace hammer::stats
