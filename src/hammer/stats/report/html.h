// The HTML report (`hammer stats --html`, and the end-of-run report of `hammer load` and
// `hammer demo`): one self-contained page that works offline, with no external resource.
//
// Sections, in order:
//   title, metadata lines and notes;
//   when thresholds were judged: one row per threshold (the rule as given, the measured value,
//     passed or FAILED, and the judgement's message), with how many failed;
//   summary strip: requests, succeeded, failed, throughput (when a duration is known), p50, p99,
//     p99.9, max;
//   per-key table, sortable by any column (key, requests, ok, errors, error %, min, p50, p90,
//     p99, p99.9, max, mean; times in ms; requests = ok + errors), busiest keys first, a TOTAL
//     row at the bottom;
//   when status codes are given: responses by HTTP status (code, responses, share);
//   latency percentile spectrum (HdrHistogram style: x = percentile on a log scale of
//     1/(1-p) with ticks 0%, 90%, 99%, 99.9%, ...; y = latency, log scale), a dashed TOTAL line
//     (every key merged) and one line per key for the kMaxSpectrumKeys keys with the most
//     successes;
//   errors: a stacked bar chart of failures by type for the keys with the most failures (labels
//     shortened in the middle and kept distinct, svg_chart.h DistinctShortLabels), a
//     failure type × key table ("untyped" counts failures whose type is unknown, e.g. those of
//     records read back by `hammer stats`: records carry no type), and examples when given;
//   when a timeline with requests is given: throughput (requests/s and errors/s) and latency
//     (p50, p90, p99) over time. Rates are per second of the run inside each bucket: the first
//     and last buckets, which the run covers only in part, are divided by their covered part
//     (HtmlReportInput::covered_from_ms/covered_to_ms), so a run that starts or ends mid-bucket
//     draws no ramp and no cliff; a bucket covered less than a quarter of its width draws no
//     rate (its hover names the covered seconds).
// Charts are inline SVG (svg_chart.h); the stylesheet and the small script (table sorting, hover
// values) are src/assets/report.css and report.js, embedded into the binary and inlined into the
// page (the live dashboard's page adds src/assets/dashboard.js). Everything taken from the input is
// HTML-escaped. The script sets document.body.dataset.ready = "1" once it has run, and any script
// error is appended to document.body.dataset.errors, so that a headless browser can check the page.
//
// Percentiles are held within each key's exact [min, max], as in the text table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/stats/key_stats.h"
#include "hammer/stats/threshold.h"
#include "hammer/stats/timeline.h"

namespace hammer::stats {

struct HtmlReportInput {
  std::string title = "hammer report";
  // Shown under the title as "label: value" lines, in order (command, target, start time, ...).
  std::vector<std::pair<std::string, std::string>> metadata;
  // Free-text remarks shown after the metadata (warnings, caveats).
  std::vector<std::string> notes;
  // The run's --threshold judgements, in the order given; none: no thresholds section.
  std::vector<ThresholdResult> thresholds;

  // Per-key figures, in any order (the page sorts them).
  std::vector<std::pair<std::string, KeyStats>> keys;
  // Every key merged, including keys not in `keys` (see unlisted_keys).
  KeyStats total;
  // Keys merged into `total` that `keys` leaves out (a bounded report of a huge input).
  uint64_t unlisted_keys = 0;
  // Responses by HTTP status, (code, responses) in code order; empty: no such section (records
  // read back by `hammer stats` carry no status).
  std::vector<std::pair<int, uint64_t>> status_codes;
  // A few failed requests worth showing, e.g. {kTimeout, "http://host/a: no response in 5 s"};
  // listed under the errors, in the given order.
  std::vector<std::pair<Failure, std::string>> failure_examples;

  // Optional; must outlive the call. Requests over time; its first to last bucket are charted.
  const Timeline* timeline = nullptr;
  // What the run covered in epoch ms, [from, to), for the partial first and last buckets.
  // 0: from the timeline's first record to its last (the times records carry: their ends).
  int64_t covered_from_ms = 0;
  int64_t covered_to_ms = 0;
  // Run length for the throughput figure. 0: the timeline's span when there is a timeline,
  // else no throughput figure.
  double duration_seconds = 0;
  // Table rows at most (the busiest keys; the rest are counted in a note). 0: all.
  size_t max_table_rows = 1000;
};

inline constexpr size_t kMaxSpectrumKeys = 12;
inline constexpr size_t kMaxErrorBarKeys = 12;
inline constexpr size_t kMaxErrorTableKeys = 50;

// The complete document, "<!DOCTYPE html>" to "</html>\n":
// RenderHtmlReportPage(input.title, RenderHtmlReportMain(input)).
std::string RenderHtmlReport(const HtmlReportInput& input);

// The page's figures and charts, "<main>\n" to "</main>\n": what the live dashboard
// (load/load_dashboard.h) sends every second for an open page to put in place of its own.
std::string RenderHtmlReportMain(const HtmlReportInput& input);

// The document around `main` (one of RenderHtmlReportMain): the title, the stylesheet, the
// error capture and the script. With `live_events` (a path, e.g. "/events") the page also
// follows the Server-Sent Events stream there (src/assets/dashboard.js): each "update" event
// replaces <main> and runs the report script over it again; the "done" event replaces the
// whole document with the final report it carries. The body then carries data-events.
std::string RenderHtmlReportPage(std::string_view title, std::string_view main,
                                 std::string_view live_events = "");

}  // namespace hammer::stats
