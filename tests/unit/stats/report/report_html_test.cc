#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>

#include "hammer/base/assets.h"
#include "hammer/stats/report/html.h"
#include "hammer/stats/report/html_escape.h"
#include "hammer/stats/report/svg_chart.h"

namespace hammer::stats {
namespace {

constexpr int64_t kT0 = 1764428700000;

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

// The text between the first `open` and the next `close`.
std::string Between(const std::string& text, const std::string& open, const std::string& close) {
  size_t begin = text.find(open);
  if (begin == std::string::npos) return "";
  begin += open.size();
  return text.substr(begin, text.find(close, begin) - begin);
}

KeyStats Stats(std::initializer_list<int64_t> micros, int failures = 0) {
  KeyStats stats;
  for (int64_t m : micros)
    stats.RecordSuccess(m);
  for (int i = 0; i < failures; ++i)
    stats.RecordFailure(std::nullopt);
  return stats;
}

HtmlReportInput Input() {
  HtmlReportInput input;
  input.title = "run <1>";
  input.metadata = {{"command", "hammer load --rate 100 urls.txt"}};
  input.notes = {"a note & more"};
  input.keys.emplace_back("http://a/", Stats({1000, 2000, 3000, 40000}));
  input.keys.emplace_back("http://b/?q=<script>alert('x')</script>", Stats({500, 700}, 2));
  KeyStats timeouts = Stats({}, 0);
  timeouts.RecordFailure(Failure::kTimeout);
  timeouts.RecordFailure(Failure::kTimeout);
  timeouts.RecordFailure(Failure::kHttp5xx);
  input.keys.emplace_back("http://c/", timeouts);
  for (const auto& [key, stats] : input.keys)
    input.total.Merge(stats);
  return input;
}

TEST(HtmlEscapeTest, EscapesMarkupAndRepairsUtf8) {
  EXPECT_EQ(HtmlEscape("<script>&\"'</script>"), "&lt;script&gt;&amp;&quot;&#39;&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x94\xA8"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x94\xA8");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(HtmlEscape("a\xFF"
                       "b"),
            "a" + fffd + "b");
  EXPECT_EQ(HtmlEscape("\xC3"), fffd);                        // truncated
  EXPECT_EQ(HtmlEscape("\xC0\xAF"), fffd + fffd);             // overlong '/'
  EXPECT_EQ(HtmlEscape("\xED\xA0\x80"), fffd + fffd + fffd);  // surrogate
  EXPECT_EQ(HtmlEscape(std::string_view("a\0b\x01\x7f\tc", 7)),
            "a" + fffd + "b" + fffd + fffd + "\tc");
}

TEST(HtmlSvgChartTest, Helpers) {
  EXPECT_EQ(FormatCompact(0), "0");
  EXPECT_EQ(FormatCompact(0.25), "0.25");
  EXPECT_EQ(FormatCompact(0.001), "0.001");
  EXPECT_EQ(FormatCompact(12), "12");
  EXPECT_EQ(FormatCompact(1500), "1,500");
  EXPECT_EQ(FormatCompact(25000), "25k");
  EXPECT_EQ(FormatCompact(1.5e6), "1.5M");
  EXPECT_EQ(ShortenMiddle("abcdefghij", 20), "abcdefghij");
  EXPECT_EQ(ShortenMiddle("abcdefghij", 5), "ab\xE2\x80\xA6ij");
  EXPECT_EQ(ShortenMiddle("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 3),
            "\xC3\xA9\xE2\x80\xA6\xC3\xA9");  // cuts between code points
}

TEST(SvgChartTest, DistinctShortLabelsKeepLabelsThatCollideApart) {
  // Shortened in the middle alone, all three read "http://h/a/…/reviews/all".
  const std::vector<std::string> texts = {"http://h/a/1111/reviews/all",
                                          "http://h/a/2222/reviews/all",
                                          "http://h/a/3333/reviews/all", "short"};
  EXPECT_EQ(ShortenMiddle(texts[0], 20), ShortenMiddle(texts[1], 20));
  std::vector<std::string> labels = DistinctShortLabels(texts, 20);
  ASSERT_EQ(labels.size(), 4u);
  // Shown from 6 bytes before the first difference.
  EXPECT_EQ(labels[0], "\xE2\x80\xA6//h/a/111\xE2\x80\xA6views/all");
  EXPECT_EQ(labels[1], "\xE2\x80\xA6//h/a/222\xE2\x80\xA6views/all");
  EXPECT_EQ(labels[3], "short");
  // Texts whose only difference is beyond what fits are told apart by a number.
  const std::vector<std::string> far = {"x" + std::string(60, 'a') + "1" + std::string(60, 'b'),
                                        "x" + std::string(60, 'a') + "2" + std::string(60, 'b'),
                                        "y"};
  labels = DistinctShortLabels(far, 10);
  EXPECT_NE(labels[0], labels[1]);
  EXPECT_EQ(labels[2], "y");
}

TEST(HtmlAssetsTest, ReportAssetsAreEmbedded) {
  std::string_view js = assets::Asset("report.js");
  std::string_view css = assets::Asset("report.css");
  EXPECT_NE(js.find("dataset.ready"), std::string_view::npos);
  EXPECT_EQ(js.find("</script"), std::string_view::npos);
  EXPECT_EQ(css.find("</style"), std::string_view::npos);
  EXPECT_FALSE(css.empty());
  EXPECT_TRUE(assets::Asset("no-such-asset").empty());
  auto names = assets::AssetNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), "report.js"), names.end());
}

TEST(HtmlReportTest, DocumentStructure) {
  std::string html = RenderHtmlReport(Input());
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  EXPECT_TRUE(html.ends_with("</html>\n"));
  EXPECT_NE(html.find("<title>run &lt;1&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("hammer load --rate 100 urls.txt"), std::string::npos);
  EXPECT_NE(html.find("a note &amp; more"), std::string::npos);
  // The error hook comes before any other script; the report script sets data-ready.
  EXPECT_LT(html.find("window.onerror"), html.find("dataset.ready"));
  EXPECT_EQ(Count(html, "<script>"), 2u);
  EXPECT_EQ(Count(html, "</script>"), 2u);  // no key can close a script

  std::string key_table = Between(html, "id=\"key-table\"", "</table>");
  EXPECT_EQ(Count(Between(key_table, "<tbody>", "</tbody>"), "<tr>"), 3u);
  EXPECT_NE(Between(key_table, "<tfoot>", "</tfoot>").find("TOTAL"), std::string::npos);
  EXPECT_EQ(Count(key_table, "<th "), 12u);  // key, requests, ok, errors, error %, ...
  // Busiest key first: b has 4 requests, a 4 (then by key), c 3.
  std::string body = Between(key_table, "<tbody>", "</tbody>");
  EXPECT_LT(body.find("http://a/"), body.find("http://b/"));
  EXPECT_LT(body.find("http://b/"), body.find("http://c/"));
  EXPECT_NE(body.find("data-v=\"40000\">40.000</td>"), std::string::npos);  // a's max

  // Spectrum: TOTAL, then one line per key with successes.
  std::string spectrum = Between(html, "id=\"chart-spectrum\"", "</figure>");
  EXPECT_EQ(Count(spectrum, "<path d=\"M"), 3u);
  EXPECT_NE(spectrum.find("&quot;n&quot;:&quot;TOTAL&quot;"), std::string::npos);
  for (const char* tick : {">0%<", ">90%<", ">99%<", ">99.9%<", ">99.99%<"})
    EXPECT_NE(spectrum.find(tick), std::string::npos) << tick;

  // Errors: bars and table by type; untyped failures are b's.
  std::string errors = Between(html, "id=\"errors\"", "</section>");
  EXPECT_NE(errors.find("id=\"chart-errors\""), std::string::npos);
  EXPECT_EQ(Count(Between(errors, "<thead>", "</thead>"), "<th "), 5u);  // key errors timeout
                                                                         // http_5xx untyped
  EXPECT_NE(errors.find(">timeout<"), std::string::npos);
  EXPECT_NE(errors.find(">untyped<"), std::string::npos);
  EXPECT_EQ(Count(Between(errors, "<tbody>", "</tbody>"), "<tr>"), 2u);

  EXPECT_EQ(html.find("id=\"timeline\""), std::string::npos);  // no timeline given
  EXPECT_EQ(html.find("class=\"examples\""), std::string::npos);

  HtmlReportInput with_examples = Input();
  with_examples.failure_examples = {{Failure::kTimeout, "http://c/: no response <in> 5 s"}};
  std::string examples = Between(RenderHtmlReport(with_examples), "class=\"examples\"", "</ul>");
  EXPECT_NE(examples.find(">timeout</span><code>http://c/: no response &lt;in&gt; 5 s</code>"),
            std::string::npos)
      << examples;
}

// Thresholds come first, above the figures; status codes after the key table; no section for
// either when there is none.
TEST(HtmlReportTest, ThresholdsAndStatusCodes) {
  HtmlReportInput input = Input();
  std::string plain = RenderHtmlReport(input);
  EXPECT_EQ(plain.find("id=\"thresholds\""), std::string::npos);
  EXPECT_EQ(plain.find("id=\"status-codes\""), std::string::npos);

  input.thresholds = {{"p99<1ms", false, "41.9ms", "p99 = 41.9ms, limit < 1ms (over by 40.9ms)"},
                      {"errors<5%&", true, "", "no requests"}};
  input.status_codes = {{200, 3}, {503, 1}};
  std::string html = RenderHtmlReport(input);
  const size_t thresholds = html.find("id=\"thresholds\"");
  ASSERT_NE(thresholds, std::string::npos);
  EXPECT_LT(thresholds, html.find("class=\"summary\""));
  std::string table = Between(html, "id=\"threshold-table\"", "</table>");
  EXPECT_NE(table.find("<td class=\"key\">p99&lt;1ms</td><td>41.9ms</td><td class=\"err\">FAILED"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("over by 40.9ms"), std::string::npos);
  EXPECT_NE(table.find("errors&lt;5%&amp;</td><td>&ndash;</td><td class=\"ok\">passed"),
            std::string::npos)
      << table;
  EXPECT_NE(html.find("1 of 2 failed."), std::string::npos);
  std::string codes = Between(html, "id=\"status-table\"", "</table>");
  EXPECT_NE(codes.find("<td>200</td><td>3</td><td>75.00%</td>"), std::string::npos) << codes;
  EXPECT_NE(codes.find("<td class=\"err\">503</td><td>1</td><td>25.00%</td>"), std::string::npos)
      << codes;
  EXPECT_LT(html.find("id=\"key-table\""), html.find("id=\"status-table\""));
}

TEST(HtmlReportTest, KeysAreEscapedEverywhere) {
  HtmlReportInput input = Input();
  input.keys.emplace_back("bad\xFF\"key", Stats({5}));
  std::string html = RenderHtmlReport(input);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("'x'"), std::string::npos);
  EXPECT_NE(html.find("http://b/?q=&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"),
            std::string::npos);
  EXPECT_EQ(html.find("\xFF"), std::string::npos);
  EXPECT_NE(html.find("bad\xEF\xBF\xBD&quot;key"), std::string::npos);
  // Inside attributes too: the key's quote cannot close data-v.
  EXPECT_NE(html.find("data-v=\"bad\xEF\xBF\xBD&quot;key\">"), std::string::npos);
}

TEST(HtmlReportTest, SummaryAndThroughput) {
  HtmlReportInput input = Input();
  input.duration_seconds = 2;
  std::string html = RenderHtmlReport(input);
  std::string summary = Between(html, "class=\"summary\"", "</div>\n");
  EXPECT_NE(summary.find(">11<"), std::string::npos);  // requests
  EXPECT_NE(summary.find(">6<"), std::string::npos);   // succeeded
  EXPECT_NE(summary.find(">5<"), std::string::npos);   // failed
  EXPECT_NE(summary.find("5.5"), std::string::npos);   // req/s
  input.duration_seconds = 0;
  EXPECT_EQ(RenderHtmlReport(input).find("throughput"), std::string::npos);
}

TEST(HtmlReportTest, ManyKeysAreCapped) {
  HtmlReportInput input;
  for (int i = 0; i < 30; ++i) {
    KeyStats stats = Stats({1000 + i}, i % 2);
    input.total.Merge(stats);
    input.keys.emplace_back("http://k/" + std::to_string(i), stats);
  }
  input.max_table_rows = 20;
  input.unlisted_keys = 5;
  std::string html = RenderHtmlReport(input);
  EXPECT_EQ(Count(Between(html, "<tbody>", "</tbody>"), "<tr>"), 20u);
  EXPECT_NE(html.find("15 more keys"), std::string::npos);
  std::string spectrum = Between(html, "id=\"chart-spectrum\"", "</figure>");
  EXPECT_EQ(Count(spectrum, "<path d=\"M"), kMaxSpectrumKeys + 1);  // and TOTAL
  EXPECT_NE(html.find("18 others not drawn"), std::string::npos);
  std::string bars = Between(html, "id=\"chart-errors\"", "</figure>");
  EXPECT_EQ(Count(bars, "<g class=\"bar\">"), kMaxErrorBarKeys);
}

TEST(HtmlReportTest, NoRequestsAtAll) {
  std::string html = RenderHtmlReport(HtmlReportInput());
  EXPECT_NE(html.find("No successful requests"), std::string::npos);
  EXPECT_NE(html.find("No failed requests"), std::string::npos);
  EXPECT_TRUE(html.ends_with("</html>\n"));
}

TEST(HtmlReportTest, TimelineCharts) {
  HtmlReportInput input = Input();
  Timeline timeline;
  for (int s = 0; s < 10; ++s) {
    for (int i = 0; i < 10; ++i)
      timeline.AddSuccess(kT0 + s * 1000 + i, 1000 * (s + 1));
    if (s % 3 == 0) timeline.AddFailure(kT0 + s * 1000 + 500);
  }
  input.timeline = &timeline;
  std::string html = RenderHtmlReport(input);
  std::string section = Between(html, "id=\"timeline\"", "</section>");
  ASSERT_FALSE(section.empty());
  EXPECT_NE(section.find("2025-11-29 15:05:00 UTC"), std::string::npos);
  std::string throughput = Between(section, "id=\"chart-throughput\"", "</figure>");
  std::string latency = Between(section, "id=\"chart-latency\"", "</figure>");
  EXPECT_EQ(Count(throughput, "<path d=\"M"), 2u);  // requests/s, errors/s
  EXPECT_EQ(Count(latency, "<path d=\"M"), 3u);     // p50, p90, p99
  EXPECT_EQ(Count(latency, "<circle"), 30u);        // few points: markers
  // The hover data carries the values: 11 requests/s in the first second.
  std::string hover = Between(throughput, "data-hover=\"", "\"");
  EXPECT_NE(hover.find("[11.0,10.0,10.0,11.0"), std::string::npos) << hover.substr(0, 300);
  // Throughput from the timeline's span when no duration is given.
  EXPECT_NE(html.find("req/s"), std::string::npos);
}

}  // namespace
}  // namespace hammer::stats
