#include "hammer/stats/report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <limits>
#include <string_view>

#include "hammer/base/assets.h"
#include "hammer/stats/report/html_escape.h"
#include "hammer/stats/report/svg_chart.h"

namespace hammer::stats {
namespace {

using Row = std::pair<std::string, KeyStats>;

constexpr double kSpectrumStep = 0.05;  // x grid of the spectrum, in decades of 1/(1-p)
constexpr std::string_view kErrorColor = "#e15759";
constexpr std::string_view kRequestColor = "#4e79a7";
// A partial first or last time bucket whose covered part is shorter than this share of its
// width gets no rate (a few requests over a few milliseconds would draw a spike).
constexpr double kMinCoveredFraction = 0.25;
constexpr std::string_view kTotalColor = "#6b6b6b";  // the spectrum's TOTAL line (dashed)
// One colour per failure type, in failure.h's order, and for failures of unknown type.
constexpr std::array<std::string_view, kFailureCount> kFailureColors = {
    "#9c755f", "#b07aa1", "#e15759", "#ff9da7", "#f28e2b", "#edc948", "#76b7b2", "#4e79a7",
    "#a62a2a", "#59a14f", "#1f9e89", "#d37295", "#8cd17d", "#b6992d", "#bab0ac",
};
constexpr std::string_view kUntypedColor = "#8b95a5";

// Recorded before any other script runs, so that a test can read script errors from the DOM.
constexpr std::string_view kErrorCapture =
    "<script>window.onerror=function(m,s,l,c){var b=document.body;"
    "var t=String(m)+' ('+(s||'page')+':'+(l||0)+':'+(c||0)+')';"
    "b.dataset.errors=b.dataset.errors?b.dataset.errors+'\\n'+t:t;};</script>\n";

std::string Escape(std::string_view text) {
  return HtmlEscape(text);
}

std::string Thousands(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// µs as milliseconds with three decimals, exact ("12.345").
std::string Millis(int64_t micros) {
  return fmt::format("{}.{:03d}", micros / 1000, micros % 1000);
}

// µs for a summary tile: three significant digits and a unit.
std::string ShortDuration(double micros) {
  double ms = micros / 1000;
  if (ms >= 1000) return fmt::format("{:.3g} s", ms / 1000);
  if (ms >= 100) return fmt::format("{:.0f} ms", ms);
  if (ms >= 10) return fmt::format("{:.1f} ms", ms);
  if (ms >= 1) return fmt::format("{:.2f} ms", ms);
  return fmt::format("{:.3f} ms", ms);
}

std::string Percent(uint64_t part, uint64_t whole) {
  if (whole == 0 || part == 0) return "0%";
  double p = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  return p < 0.01 ? "<0.01%" : fmt::format("{:.2f}%", p);
}

std::string UtcTime(int64_t epoch_ms, const char* format) {
  std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), format, &tm);
  return std::string(buf, n);
}

// "45 s", "2:30", "1:02:03".
std::string ClockDuration(int64_t seconds) {
  if (seconds < 60) return fmt::format("{} s", seconds);
  if (seconds < 3600) return fmt::format("{}:{:02d}", seconds / 60, seconds % 60);
  return fmt::format("{}:{:02d}:{:02d}", seconds / 3600, seconds / 60 % 60, seconds % 60);
}

std::string Tile(std::string_view label, std::string_view value, std::string_view detail = "",
                 std::string_view title = "", bool bad = false) {
  std::string out = bad ? "<div class=\"tile bad\"" : "<div class=\"tile\"";
  if (!title.empty()) out += " title=\"" + Escape(title) + "\"";
  out += "><div class=\"label\">" + Escape(label) + "</div><div class=\"value\">" + Escape(value);
  if (!detail.empty()) out += "<span class=\"detail\">" + Escape(detail) + "</span>";
  return out + "</div></div>";
}

double RunSeconds(const HtmlReportInput& input) {
  if (input.duration_seconds > 0) return input.duration_seconds;
  if (input.timeline != nullptr && !input.timeline->empty())
    return static_cast<double>(input.timeline->last_ms() - input.timeline->first_ms()) / 1000;
  return 0;
}

std::string Header(const HtmlReportInput& input) {
  std::string out = "<header><h1>" + Escape(input.title) + "</h1>";
  if (!input.metadata.empty()) {
    out += "<dl class=\"meta\">";
    for (const auto& [label, value] : input.metadata)
      out += "<dt>" + Escape(label) + "</dt><dd>" + Escape(value) + "</dd>";
    out += "</dl>";
  }
  if (!input.notes.empty()) {
    out += "<ul class=\"notes\">";
    for (const std::string& note : input.notes)
      out += "<li>" + Escape(note) + "</li>";
    out += "</ul>";
  }
  return out + "</header>\n";
}

// The thresholds at the top of the page: a reader learns first whether the run passed.
std::string Thresholds(const std::vector<ThresholdResult>& results) {
  const size_t failed = FailedCount(results);
  std::string out = "<section id=\"thresholds\"><h2>Thresholds</h2><p class=\"sub\">";
  out += failed == 0 ? fmt::format("All {} passed.", results.size())
                     : fmt::format("{} of {} failed.", failed, results.size());
  out +=
      "</p><div class=\"table-wrap\"><table id=\"threshold-table\"><thead><tr>"
      "<th>threshold</th><th>value</th><th>result</th><th>detail</th></tr></thead><tbody>\n";
  for (const ThresholdResult& r : results) {
    out += "<tr class=\"" + std::string(r.passed ? "passed" : "failed") + "\"><td class=\"key\">" +
           Escape(r.text) + "</td><td>" + (r.actual.empty() ? "&ndash;" : Escape(r.actual)) +
           "</td><td class=\"" + (r.passed ? "ok\">passed" : "err\">FAILED") +
           "</td><td class=\"detail\">" + Escape(r.message) + "</td></tr>\n";
  }
  return out + "</tbody></table></div></section>\n";
}

std::string Summary(const HtmlReportInput& input) {
  const KeyStats& total = input.total;
  std::string out = "<div class=\"summary\">";
  out += Tile("requests", Thousands(total.total()));
  out += Tile("succeeded", Thousands(total.count));
  out += Tile("failed", Thousands(total.errors), Percent(total.errors, total.total()), "",
              total.errors > 0);
  double seconds = RunSeconds(input);
  if (seconds > 0) {
    double rps = static_cast<double>(total.total()) / seconds;
    out += Tile("throughput", FormatCompact(rps), "req/s",
                fmt::format("{} requests in {:.3f} s", total.total(), seconds));
  }
  if (total.count > 0) {
    out += Tile("p50", ShortDuration(static_cast<double>(total.Percentile(50))));
    out += Tile("p99", ShortDuration(static_cast<double>(total.Percentile(99))));
    out += Tile("p99.9", ShortDuration(static_cast<double>(total.Percentile(99.9))));
    out += Tile("max", ShortDuration(static_cast<double>(total.max_micros)));
  }
  return out + "</div>\n";
}

// One <tr> of the key table: a numeric data-v per cell for sorting ("" when there is none).
std::string KeyRow(std::string_view key, const KeyStats& stats, bool is_total) {
  std::string out = "<tr>";
  out += is_total ? "<td class=\"key\">" : "<td class=\"key\" data-v=\"" + Escape(key) + "\">";
  out += Escape(key) + "</td>";
  auto cell = [&out](std::string_view v, std::string_view text, std::string_view cls = "") {
    out += "<td";
    if (!cls.empty()) out += " class=\"" + std::string(cls) + "\"";
    out += " data-v=\"" + std::string(v) + "\">" + std::string(text) + "</td>";
  };
  cell(std::to_string(stats.total()), Thousands(stats.total()));
  cell(std::to_string(stats.count), Thousands(stats.count));
  cell(std::to_string(stats.errors), Thousands(stats.errors), stats.errors > 0 ? "err" : "");
  double error_ratio =
      stats.total() ? static_cast<double>(stats.errors) / static_cast<double>(stats.total()) : 0;
  cell(fmt::format("{}", error_ratio), Percent(stats.errors, stats.total()),
       stats.errors > 0 ? "err" : "");
  if (stats.count == 0) {
    for (int i = 0; i < 7; ++i)
      cell("", "&ndash;", "none");
    return out + "</tr>\n";
  }
  auto time = [&cell](int64_t micros) { cell(std::to_string(micros), Millis(micros)); };
  time(stats.min_micros);
  for (double p : {50.0, 90.0, 99.0, 99.9})
    time(stats.Percentile(p));
  time(stats.max_micros);
  double mean = stats.MeanMicros();
  cell(fmt::format("{:.1f}", mean), Millis(std::llround(mean)));
  return out + "</tr>\n";
}

std::string KeyTable(const HtmlReportInput& input, const std::vector<const Row*>& rows) {
  size_t shown =
      input.max_table_rows == 0 ? rows.size() : std::min(rows.size(), input.max_table_rows);
  std::string out =
      "<section id=\"keys\"><h2>Requests per key</h2><p class=\"sub\">" +
      Thousands(rows.size() + input.unlisted_keys) +
      (rows.size() + input.unlisted_keys == 1 ? " key" : " keys") +
      ". Times in milliseconds. "
      "requests = ok (successful) + errors (failed); percentiles of the successful ones, from "
      "HdrHistogram-compatible histograms "
      "(3 significant digits). Click a column to sort.</p>";
  out += "<div class=\"table-wrap\"><table class=\"sortable\" id=\"key-table\"><thead><tr>";
  static constexpr std::array<std::string_view, 12> kColumns = {
      "key", "requests", "ok",  "errors", "error %", "min",
      "p50", "p90",      "p99", "p99.9",  "max",     "mean"};
  for (std::string_view column : kColumns) {
    if (column == "key") {
      out += "<th data-type=\"text\">key</th>";
    } else if (column == "ok") {
      out += "<th data-type=\"num\" title=\"successful requests\">ok</th>";
    } else if (column == "errors") {
      out += "<th data-type=\"num\" title=\"failed requests\">errors</th>";
    } else {
      out += "<th data-type=\"num\">" + std::string(column) + "</th>";
    }
  }
  out += "</tr></thead><tbody>\n";
  for (size_t i = 0; i < shown; ++i)
    out += KeyRow(rows[i]->first, rows[i]->second, false);
  out += "</tbody><tfoot>" + KeyRow("TOTAL", input.total, true) + "</tfoot></table></div>";
  uint64_t hidden = rows.size() - shown + input.unlisted_keys;
  if (hidden > 0)
    out += "<p class=\"sub\">" + Thousands(hidden) + " more keys with fewer requests are not " +
           "listed; TOTAL includes them.</p>";
  return out + "</section>\n";
}

std::string StatusCodes(const std::vector<std::pair<int, uint64_t>>& codes) {
  uint64_t responses = 0;
  for (const auto& [code, n] : codes)
    responses += n;
  std::string out =
      "<section id=\"status-codes\"><h2>Status codes</h2><p class=\"sub\">" + Thousands(responses) +
      " responses by HTTP status (requests that got no response are under Errors).</p>"
      "<div class=\"table-wrap\"><table id=\"status-table\"><thead><tr><th>status</th>"
      "<th>responses</th><th>share</th></tr></thead><tbody>\n";
  for (const auto& [code, n] : codes) {
    out +=
        fmt::format("<tr><td{}>{}</td><td>{}</td><td>{}</td></tr>\n",
                    code >= 400 ? " class=\"err\"" : "", code, Thousands(n), Percent(n, responses));
  }
  return out + "</tbody></table></div></section>\n";
}

std::string PercentLabel(double x) {
  double p = 100.0 * (1.0 - std::pow(10.0, -x));
  int decimals = std::max(1, static_cast<int>(std::floor(x + 1e-9)));
  return fmt::format("{:.{}f}%", p, decimals);
}

std::string Spectrum(const KeyStats& total, const std::vector<const Row*>& rows) {
  std::vector<const Row*> keys;
  for (const Row* row : rows) {
    if (row->second.count > 0) keys.push_back(row);
  }
  std::string out =
      "<section id=\"spectrum\"><h2>Latency percentile spectrum</h2><p class=\"sub\">"
      "Latency at each percentile, HdrHistogram style: the x axis stretches the tail "
      "(log scale of 1/(1&minus;percentile)), the y axis is logarithmic; the dashed line is "
      "TOTAL, every request of every key.";
  if (keys.empty()) return out + " No successful requests.</p></section>\n";
  std::stable_sort(keys.begin(), keys.end(),
                   [](const Row* a, const Row* b) { return a->second.count > b->second.count; });
  size_t more = keys.size() > kMaxSpectrumKeys ? keys.size() - kMaxSpectrumKeys : 0;
  keys.resize(keys.size() - more);
  if (more > 0)
    out += fmt::format(" The {} keys with the most successful requests; {} others not drawn.",
                       keys.size(), Thousands(more));
  out += "</p>";

  uint64_t largest = std::max(total.count, keys.front()->second.count);
  int decades =
      std::clamp(static_cast<int>(std::ceil(std::log10(static_cast<double>(largest)))), 4, 6);
  LineChart chart;
  chart.id = "chart-spectrum";
  chart.label = "Latency by percentile, per key";
  chart.x_title = "percentile";
  chart.y_title = "latency (ms)";
  chart.y_unit = "ms";
  chart.log_y = true;
  int steps = static_cast<int>(std::lround(decades / kSpectrumStep));
  for (int i = 0; i <= steps; ++i) {
    double x = i * kSpectrumStep;
    chart.x.push_back(x);
    chart.x_hover.push_back(PercentLabel(x));
  }
  for (int d = 0; d <= decades; ++d) {
    std::string tick =
        d == 0 ? "0%" : fmt::format("{:.{}f}%", 100.0 - std::pow(10.0, 2 - d), std::max(0, d - 2));
    chart.x_ticks.push_back({static_cast<double>(d), tick});
  }
  auto spectrum = [&chart](std::string name, std::string color, const KeyStats& stats) {
    LineSeries series;
    series.name = std::move(name);
    series.color = std::move(color);
    double reach = std::log10(static_cast<double>(stats.count)) + 1e-9;
    for (double x : chart.x) {
      series.values.push_back(
          x <= reach
              ? static_cast<double>(stats.Percentile(100.0 * (1.0 - std::pow(10.0, -x)))) / 1000
              : std::numeric_limits<double>::quiet_NaN());
    }
    return series;
  };
  // Every key merged first (dashed), then the keys.
  chart.series.push_back(spectrum("TOTAL", std::string(kTotalColor), total));
  chart.series.back().dashed = true;
  for (size_t k = 0; k < keys.size(); ++k)
    chart.series.push_back(spectrum(keys[k]->first, std::string(ChartColor(k)), keys[k]->second));
  return out + RenderLineChart(chart) + "</section>\n";
}

std::string Errors(const HtmlReportInput& input, const std::vector<const Row*>& rows) {
  std::string out = "<section id=\"errors\"><h2>Errors</h2>";
  if (input.total.errors == 0) return out + "<p class=\"sub\">No failed requests.</p></section>\n";
  std::vector<const Row*> failing;
  for (const Row* row : rows) {
    if (row->second.errors > 0) failing.push_back(row);
  }
  std::stable_sort(failing.begin(), failing.end(),
                   [](const Row* a, const Row* b) { return a->second.errors > b->second.errors; });
  // Columns: the failure types that occur, then "untyped" when some failures have no type.
  std::vector<size_t> types;
  for (size_t t = 0; t < kFailureCount; ++t) {
    if (input.total.failures.Get(static_cast<Failure>(t)) > 0) types.push_back(t);
  }
  bool untyped = input.total.failures.Total() < input.total.errors;
  auto counts = [&](const KeyStats& stats) {
    std::vector<uint64_t> row;
    for (size_t t : types)
      row.push_back(stats.failures.Get(static_cast<Failure>(t)));
    if (untyped) row.push_back(stats.errors - std::min(stats.errors, stats.failures.Total()));
    return row;
  };
  std::vector<std::string> names;
  for (size_t t : types)
    names.emplace_back(kFailureNames[t]);
  if (untyped) names.emplace_back("untyped");

  out += "<p class=\"sub\">Failed requests by type";
  if (untyped) out += " (&ldquo;untyped&rdquo;: records carry no failure type)";
  out += fmt::format(". {} of {} keys had failures.</p>", Thousands(failing.size()),
                     Thousands(rows.size()));
  StackedBarChart bars;
  bars.id = "chart-errors";
  bars.label = "Failed requests by key and type";
  bars.stacks = names;
  bars.x_title = "failed requests";
  for (size_t t : types)
    bars.colors.emplace_back(kFailureColors[t]);
  if (untyped) bars.colors.emplace_back(kUntypedColor);
  for (size_t i = 0; i < failing.size() && i < kMaxErrorBarKeys; ++i) {
    bars.bars.push_back(failing[i]->first);
    bars.values.push_back(counts(failing[i]->second));
  }
  out += RenderStackedBarChart(bars);

  out +=
      "<div class=\"table-wrap\"><table class=\"sortable\" id=\"error-table\"><thead><tr>"
      "<th data-type=\"text\">key</th><th data-type=\"num\">errors</th>";
  for (const std::string& name : names)
    out += "<th data-type=\"num\">" + Escape(name) + "</th>";
  out += "</tr></thead><tbody>\n";
  auto row_html = [&](std::string_view key, const KeyStats& stats, bool is_total) {
    std::string tr = "<tr><td class=\"key\"";
    if (!is_total) tr += " data-v=\"" + Escape(key) + "\"";
    tr += ">" + Escape(key) + "</td>";
    tr += fmt::format("<td data-v=\"{}\">{}</td>", stats.errors, Thousands(stats.errors));
    for (uint64_t n : counts(stats))
      tr += fmt::format("<td data-v=\"{}\">{}</td>", n, n ? Thousands(n) : "&middot;");
    return tr + "</tr>\n";
  };
  size_t shown = std::min(failing.size(), kMaxErrorTableKeys);
  for (size_t i = 0; i < shown; ++i)
    out += row_html(failing[i]->first, failing[i]->second, false);
  out += "</tbody><tfoot>" + row_html("TOTAL", input.total, true) + "</tfoot></table></div>";
  if (failing.size() > shown)
    out += "<p class=\"sub\">" + Thousands(failing.size() - shown) +
           " more keys with fewer failures are not listed.</p>";
  if (!input.failure_examples.empty()) {
    out += "<h3>Examples</h3><ul class=\"examples\">";
    for (const auto& [type, example] : input.failure_examples) {
      out += "<li><span class=\"type\" style=\"--c:" +
             std::string(kFailureColors[static_cast<size_t>(type)]) + "\">" +
             std::string(FailureName(type)) + "</span><code>" + Escape(example) + "</code></li>";
    }
    out += "</ul>";
  }
  return out + "</section>\n";
}

// Tick step in seconds for a time axis of `span` seconds: at most about 8 ticks.
int64_t TimeStep(double span) {
  static constexpr std::array<int64_t, 16> kSteps = {1,   2,   5,   10,   15,   30,   60,    120,
                                                     300, 600, 900, 1800, 3600, 7200, 21600, 86400};
  for (int64_t step : kSteps) {
    if (span / static_cast<double>(step) <= 8) return step;
  }
  return static_cast<int64_t>(std::ceil(span / 8 / 86400)) * 86400;
}

std::string TimeCharts(const HtmlReportInput& input) {
  const Timeline& timeline = *input.timeline;
  const double width_s = static_cast<double>(timeline.bucket_ms()) / 1000;
  const int64_t origin_ms = timeline.bucket_start_ms(0);
  const double span = width_s * static_cast<double>(timeline.size());
  // What the run covered, [from, to) in epoch ms: given, or from the first to the last record.
  const int64_t covered_from =
      input.covered_from_ms > 0 ? input.covered_from_ms : timeline.first_ms();
  const int64_t covered_to = input.covered_to_ms > 0 ? input.covered_to_ms : timeline.last_ms() + 1;

  LineChart throughput;
  throughput.id = "chart-throughput";
  throughput.label = "Requests and errors per second over time";
  throughput.y_title = "per second";
  throughput.y_unit = "/s";
  LineChart latency;
  latency.id = "chart-latency";
  latency.label = "Latency percentiles over time";
  latency.y_title = "latency (ms)";
  latency.y_unit = "ms";
  for (LineChart* chart : {&throughput, &latency}) {
    chart->x_title = "time since " + UtcTime(origin_ms, "%H:%M:%S UTC");
    int64_t step = TimeStep(span);
    for (int64_t t = 0; static_cast<double>(t) <= span + 1e-9; t += step)
      chart->x_ticks.push_back({static_cast<double>(t), ClockDuration(t)});
  }
  LineSeries requests{"requests/s", std::string(kRequestColor), {}, false};
  LineSeries errors{"errors/s", std::string(kErrorColor), {}, false};
  std::array<LineSeries, 3> percentiles = {LineSeries{"p50", "#59a14f", {}, false},
                                           LineSeries{"p90", "#f28e2b", {}, false},
                                           LineSeries{"p99", "#b07aa1", {}, false}};
  constexpr std::array<double, 3> kLevels = {50, 90, 99};
  for (size_t i = 0; i < timeline.size(); ++i) {
    const Timeline::Bucket& bucket = timeline.bucket(i);
    int64_t start_ms = timeline.bucket_start_ms(i);
    double x = static_cast<double>(start_ms - origin_ms) / 1000 + width_s / 2;
    // The first and last buckets hold only the part of their width that the run covered:
    // their rates are per covered second, not a ramp and a cliff; one covered too little for a
    // rate is not drawn.
    const int64_t covered_ms =
        std::max<int64_t>(0, std::min(start_ms + timeline.bucket_ms(), covered_to) -
                                 std::max(start_ms, covered_from));
    const double covered = static_cast<double>(covered_ms) / 1000;
    const bool rated = covered >= kMinCoveredFraction * width_s;
    std::string hover = UtcTime(start_ms, "%H:%M:%S");
    if (width_s > 1) hover += "\u2013" + UtcTime(start_ms + timeline.bucket_ms(), "%H:%M:%S");
    hover += " UTC";
    if (covered < width_s) hover += fmt::format(" (run covered {:.2f} s)", covered);
    for (LineChart* chart : {&throughput, &latency}) {
      chart->x.push_back(x);
      chart->x_hover.push_back(hover);
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    requests.values.push_back(rated ? static_cast<double>(bucket.requests) / covered : nan);
    errors.values.push_back(rated ? static_cast<double>(bucket.errors) / covered : nan);
    for (size_t p = 0; p < kLevels.size(); ++p) {
      percentiles[p].values.push_back(
          bucket.latency.empty()
              ? std::numeric_limits<double>::quiet_NaN()
              : static_cast<double>(bucket.latency.ValueAtPercentile(kLevels[p])) / 1000);
    }
  }
  throughput.series = {std::move(requests), std::move(errors)};
  latency.series.assign(percentiles.begin(), percentiles.end());

  std::string out = "<section id=\"timeline\"><h2>Over time</h2><p class=\"sub\">";
  out +=
      fmt::format("From {} for {}, in buckets of {}.", UtcTime(origin_ms, "%Y-%m-%d %H:%M:%S UTC"),
                  ClockDuration(static_cast<int64_t>(std::ceil(span))),
                  ClockDuration(timeline.bucket_ms() / 1000));
  if (timeline.requests() < input.total.total()) {
    out += fmt::format(" Covers the {} of {} requests whose records carry a time.",
                       Thousands(timeline.requests()), Thousands(input.total.total()));
  }
  out += "</p><h3>Throughput</h3>" + RenderLineChart(throughput);
  out += "<h3>Latency</h3>" + RenderLineChart(latency);
  return out + "</section>\n";
}

}  // namespace

std::string RenderHtmlReportMain(const HtmlReportInput& input) {
  std::vector<const Row*> rows;
  rows.reserve(input.keys.size());
  for (const Row& row : input.keys)
    rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(), [](const Row* a, const Row* b) {
    if (a->second.total() != b->second.total()) return a->second.total() > b->second.total();
    return a->first < b->first;
  });

  std::string out = "<main>\n";
  out += Header(input);
  if (!input.thresholds.empty()) out += Thresholds(input.thresholds);
  out += Summary(input);
  out += KeyTable(input, rows);
  if (!input.status_codes.empty()) out += StatusCodes(input.status_codes);
  out += Spectrum(input.total, rows);
  out += Errors(input, rows);
  if (input.timeline != nullptr && input.timeline->requests() > 0) out += TimeCharts(input);
  out += "<footer>Generated by hammer " HAMMER_VERSION "</footer>\n</main>\n";
  return out;
}

std::string RenderHtmlReportPage(std::string_view title, std::string_view main,
                                 std::string_view live_events) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<meta name=\"generator\" content=\"hammer " HAMMER_VERSION "\"><title>";
  AppendHtmlEscaped(out, title);
  out += "</title>\n<style>\n";
  out += assets::Asset("report.css");
  out += "</style></head>\n";
  if (live_events.empty()) {
    out += "<body>\n";
  } else {
    out += "<body data-events=\"";
    AppendHtmlEscaped(out, live_events);
    out += "\">\n";
  }
  out += kErrorCapture;
  out += main;
  out += "<script>\n";
  out += assets::Asset("report.js");
  if (!live_events.empty()) out += assets::Asset("dashboard.js");
  out += "</script>\n</body></html>\n";
  return out;
}

std::string RenderHtmlReport(const HtmlReportInput& input) {
  return RenderHtmlReportPage(input.title, RenderHtmlReportMain(input));
}

}  // namespace hammer::stats
