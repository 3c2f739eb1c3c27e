// The live dashboard's pure parts: the Server-Sent Events it sends, the address it binds, the
// page around a report's <main>, and the RunMonitor queues it reads (two live readers).
#include "hammer/load/load_dashboard.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "hammer/base/assets.h"
#include "hammer/load/run_monitor.h"
#include "hammer/stats/report/html.h"

namespace hammer::load {
namespace {

// The event's name and its one data line; fails the test unless `event` is framed as one
// message: "event: NAME\ndata: LINE\n\n" with no other line break.
std::pair<std::string, nlohmann::json> ParseEvent(const std::string& event) {
  EXPECT_TRUE(event.starts_with("event: ")) << event.substr(0, 40);
  EXPECT_TRUE(event.ends_with("\n\n"));
  const size_t name_end = event.find('\n');
  const std::string name = event.substr(7, name_end - 7);
  const std::string rest = event.substr(name_end + 1);
  EXPECT_TRUE(rest.starts_with("data: "));
  const std::string data = rest.substr(6, rest.size() - 6 - 2);
  EXPECT_EQ(data.find('\n'), std::string::npos);
  EXPECT_EQ(data.find('\r'), std::string::npos);
  return {name, nlohmann::json::parse(data)};
}

TEST(DashboardEventTest, UpdateCarriesTheFiguresAndTheHtmlOnOneDataLine) {
  DashboardFigures figures;
  figures.seq = 7;
  figures.running = true;
  figures.elapsed_seconds = 6.5;
  figures.succeeded = 1200;
  figures.failed = 34;
  figures.rps = 189.8;
  figures.p50_ms = 1.234;
  figures.p99_ms = 45.6;
  figures.in_flight = 9;
  const std::string main = "<main>\n<h1>a \"title\"</h1>\r\n<script>x</script>\n\n</main>\n";
  auto [name, data] = ParseEvent(DashboardUpdateEvent(figures, main));
  EXPECT_EQ(name, "update");
  EXPECT_EQ(data["seq"], 7);
  EXPECT_EQ(data["running"], true);
  EXPECT_EQ(data["elapsed_seconds"], 6.5);
  EXPECT_EQ(data["requests"], 1234);
  EXPECT_EQ(data["succeeded"], 1200);
  EXPECT_EQ(data["failed"], 34);
  EXPECT_EQ(data["rps"], 189.8);
  EXPECT_EQ(data["p50_ms"], 1.234);
  EXPECT_EQ(data["p99_ms"], 45.6);
  EXPECT_EQ(data["in_flight"], 9);
  EXPECT_EQ(data["main"], main);
}

TEST(DashboardEventTest, DoneCarriesTheWholeReport) {
  const std::string report = "<!DOCTYPE html>\n<html>\n\n\ndata: not an event\n</html>\n";
  auto [name, data] = ParseEvent(DashboardDoneEvent(report));
  EXPECT_EQ(name, "done");
  EXPECT_EQ(data["html"], report);
  EXPECT_EQ(data.size(), 1u);
}

TEST(DashboardAddressTest, APortAloneIsLoopback) {
  for (const char* text :
       {":0", "0", ":8089", "8089", "localhost:8089", "127.0.0.1:0", "[::1]:0"}) {
    Result<net::SocketAddress> address = ParseDashboardAddress(text);
    ASSERT_TRUE(address.ok()) << text;
    EXPECT_TRUE(address->IsLoopback()) << text;
  }
  EXPECT_EQ(ParseDashboardAddress(":8089")->ToString(), "127.0.0.1:8089");
}

TEST(DashboardAddressTest, OtherInterfacesOnlyWhenWrittenOut) {
  Result<net::SocketAddress> any = ParseDashboardAddress("0.0.0.0:8089");
  ASSERT_TRUE(any.ok());
  EXPECT_FALSE(any->IsLoopback());
  for (const char* text : {"", "example.com:80", "127.0.0.1", ":http", "1.2.3.4:99999"}) {
    Result<net::SocketAddress> bad = ParseDashboardAddress(text);
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_TRUE(bad.status().message().starts_with("--dashboard: ")) << bad.status().message();
  }
}

TEST(DashboardPageTest, TheReportIsItsMainInsideThePage) {
  stats::HtmlReportInput input;
  input.title = "t <1>";
  input.total.RecordSuccess(1500);
  input.keys.emplace_back("http://127.0.0.1/a", input.total);
  const std::string main = stats::RenderHtmlReportMain(input);
  EXPECT_TRUE(main.starts_with("<main>\n"));
  EXPECT_TRUE(main.ends_with("</main>\n"));
  EXPECT_EQ(stats::RenderHtmlReport(input), stats::RenderHtmlReportPage(input.title, main));
  EXPECT_EQ(stats::RenderHtmlReport(input).find("data-events"), std::string::npos);
}

TEST(DashboardPageTest, TheLivePageFollowsTheEvents) {
  const std::string page = stats::RenderHtmlReportPage("t", "<main>\n</main>\n", "/events");
  EXPECT_NE(page.find("<body data-events=\"/events\">"), std::string::npos);
  const std::string_view script = assets::Asset("dashboard.js");
  ASSERT_FALSE(script.empty());
  EXPECT_NE(page.find(script), std::string::npos);
  EXPECT_EQ(script.find("</script"), std::string::npos);
  EXPECT_NE(page.find(assets::Asset("report.js")), std::string::npos);
}

IntervalSnapshot Interval(int64_t wall_ms, std::string_view key, int successes) {
  IntervalSnapshot interval;
  interval.wall_start_ms = wall_ms;
  interval.wall_end_ms = wall_ms + 1000;
  for (int i = 0; i < successes; ++i) {
    interval.latency.Record(1000 + i);
    interval.keys.StatsFor(key)->RecordSuccess(1000 + i);
  }
  interval.succeeded = static_cast<uint64_t>(successes);
  return interval;
}

TEST(RunMonitorLiveTest, TwoReadersEachGetEveryKeyInterval) {
  RunMonitor monitor(/*workers=*/2, /*key_readers=*/2);
  IntervalSnapshot a = Interval(1'000'000, "/a", 3);
  IntervalSnapshot b = Interval(1'000'000, "/b", 2);
  monitor.Report(0, a);
  monitor.Report(1, b);
  for (size_t reader : {0u, 1u}) {
    std::vector<stats::KeyTable> intervals = monitor.TakeKeyIntervals(reader);
    ASSERT_EQ(intervals.size(), 2u) << reader;
    EXPECT_EQ(intervals[0].StatsFor("/a")->count, 3u);
    EXPECT_EQ(intervals[1].StatsFor("/b")->count, 2u);
    EXPECT_TRUE(monitor.TakeKeyIntervals(reader).empty());
  }
}

TEST(RunMonitorLiveTest, TheRecentTimelineHoldsWhatCameSinceTheLastTake) {
  RunMonitor monitor(1);
  IntervalSnapshot before = Interval(1'000'000, "/a", 4);
  monitor.Report(0, before);  // not kept: nobody asked yet
  EXPECT_TRUE(monitor.TakeRecentTimeline().empty());
  IntervalSnapshot first = Interval(1'001'000, "/a", 5);
  monitor.Report(0, first);
  stats::Timeline recent = monitor.TakeRecentTimeline();
  EXPECT_EQ(recent.requests(), 5u);
  EXPECT_TRUE(monitor.TakeRecentTimeline().empty());
  IntervalSnapshot second = Interval(1'002'000, "/a", 6);
  monitor.Report(0, second);
  recent.Merge(monitor.TakeRecentTimeline());
  EXPECT_EQ(recent.requests(), 11u);
  // The run's own timeline has every interval.
  EXPECT_EQ(monitor.TakeTimeline().requests(), 15u);
}

}  // namespace
}  // namespace hammer::load
