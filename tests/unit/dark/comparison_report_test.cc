// ComparisonReport: the acceptance case of the issue (a dark instance that changes one field on
// 10 % of responses is reported for that field only, while a timestamp that differs between the
// two regular instances is cancelled as noise), the caps, Merge and the JSON.
#include "hammer/dark/comparison_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hammer/dark/json_diff.h"

namespace hammer::dark {
namespace {

using Strings = std::vector<std::string>;

ResponseView Json200(std::string_view body) {
  ResponseView view;
  view.status = 200;
  view.body = body;
  return view;
}

std::string Item(int id, int price, long timestamp) {
  return "{\"id\":" + std::to_string(id) + ",\"name\":\"item " + std::to_string(id) +
         "\",\"price\":" + std::to_string(price) + ",\"timestamp\":" + std::to_string(timestamp) +
         "}";
}

// One forked request through the comparison, as the proxy does it: primary vs dark is the raw
// diff, primary vs secondary the noise.
void Compare(JsonDiff& diff, ComparisonReport& report, std::string_view endpoint,
             const std::string& primary, const std::string& dark, const std::string& secondary,
             int64_t primary_micros = -1, int64_t dark_micros = -1) {
  DiffResult raw = diff.Compare(Json200(primary), Json200(dark));
  DiffResult noise = diff.Compare(Json200(primary), Json200(secondary));
  report.RecordPair(endpoint, PairOutcome{false, false, primary_micros, dark_micros});
  ComparedExchange exchange{endpoint, "GET /items/7", primary, dark, secondary};
  report.Record(exchange, raw, &noise);
}

TEST(ComparisonReportTest, AcceptanceChangedFieldReportedTimestampCancelled) {
  // Two event loops, each with its own differ and report, merged on read.
  JsonDiff diffs[2];
  ComparisonReport loops[2];
  long clock = 1'700'000'000'000;
  for (int i = 0; i < 1000; ++i) {
    int price = 100 + i % 37;
    // The regular instances disagree on the timestamp every time; the dark one too.
    std::string primary = Item(i, price, clock++);
    std::string secondary = Item(i, price, clock++);
    std::string dark = Item(i, i % 10 == 3 ? price + 1 : price, clock++);
    Compare(diffs[i % 2], loops[i % 2], "GET /items/{id}", primary, dark, secondary, 1000 + i,
            1500 + i);
  }
  ComparisonReport report;
  report.Merge(loops[0]);
  report.Merge(loops[1]);

  EXPECT_EQ(report.ReportedFields("GET /items/{id}"), Strings{"body.price"});
  const EndpointComparison* endpoint = report.Find("GET /items/{id}");
  ASSERT_NE(endpoint, nullptr);
  EXPECT_EQ(endpoint->total, 1000u);
  EXPECT_EQ(endpoint->differences, 1000u);  // the timestamp always differs
  EXPECT_EQ(endpoint->noisy, 1000u);
  ASSERT_EQ(endpoint->fields.size(), 2u);
  const FieldComparison& price = endpoint->fields.at("body.price");
  const FieldComparison& timestamp = endpoint->fields.at("body.timestamp");
  EXPECT_EQ(price.raw, 100u);
  EXPECT_EQ(price.noise, 0u);
  EXPECT_EQ(timestamp.raw, 1000u);
  EXPECT_EQ(timestamp.noise, 1000u);
  EXPECT_FALSE(report.Judge(*endpoint, timestamp).reported);
  EXPECT_EQ(price.samples.size(), 5u);
  EXPECT_EQ(endpoint->primary_latency_us.total_count(), 1000u);
  EXPECT_EQ(endpoint->dark_latency_us.total_count(), 1000u);

  auto json = nlohmann::json::parse(report.ToJson());
  const auto& e = json["endpoints"][0];
  EXPECT_EQ(e["endpoint"], "GET /items/{id}");
  EXPECT_EQ(e["reported_fields"], nlohmann::json::array({"body.price"}));
  EXPECT_EQ(e["fields"][0]["path"], "body.price");  // reported fields first
  EXPECT_EQ(e["fields"][0]["reported"], true);
  EXPECT_EQ(e["fields"][0]["raw_percent"], 10.0);
  EXPECT_EQ(e["fields"][1]["path"], "body.timestamp");
  EXPECT_EQ(e["fields"][1]["reported"], false);
  EXPECT_EQ(e["fields"][0]["samples"][0]["kind"], "value");
  EXPECT_EQ(e["latency_us"]["primary"]["count"], 1000);
  EXPECT_EQ(e["latency_us"]["dark"]["count"], 1000);
  EXPECT_LT(e["latency_us"]["primary"]["p50"].get<int64_t>(),
            e["latency_us"]["dark"]["p50"].get<int64_t>());
}

TEST(ComparisonReportTest, WithoutSecondaryEveryRecurringDifferenceIsReported) {
  JsonDiff diff;
  ComparisonReport report;
  for (int i = 0; i < 100; ++i) {
    std::string primary = Item(i, 5, i);
    std::string dark = Item(i, 5, i + 1);
    DiffResult raw = diff.Compare(Json200(primary), Json200(dark));
    report.Record(ComparedExchange{"e", "GET /", primary, dark, {}}, raw, nullptr);
  }
  EXPECT_EQ(report.ReportedFields("e"), Strings{"body.timestamp"});
  EXPECT_EQ(report.Find("e")->primary_latency_us.total_count(), 0u);
}

TEST(ComparisonReportTest, IgnoredPathsNeverReachTheReport) {
  JsonDiff diff(JsonDiffOptions{{}, {"body.timestamp"}});
  ComparisonReport report;
  Compare(diff, report, "e", Item(1, 5, 1), Item(1, 6, 2), Item(1, 5, 3));
  const EndpointComparison* endpoint = report.Find("e");
  ASSERT_NE(endpoint, nullptr);
  EXPECT_EQ(endpoint->fields.count("body.timestamp"), 0u);
  EXPECT_EQ(endpoint->fields.at("body.price").raw, 1u);
}

TEST(ComparisonReportTest, EndpointAndFieldCaps) {
  ComparisonReportOptions options;
  options.max_endpoints = 2;
  options.max_fields_per_endpoint = 3;
  ComparisonReport report(options);
  JsonDiff diff;
  const std::string left = R"({"a":1,"b":1,"c":1,"d":1,"e":1})";
  const std::string right = R"({"a":2,"b":2,"c":2,"d":2,"e":2})";
  for (const char* endpoint : {"one", "two", "three", "four"}) {
    Compare(diff, report, endpoint, left, right, left);
  }
  report.RecordIncomplete("five");
  EXPECT_EQ(report.endpoints().size(), 2u);
  EXPECT_EQ(report.endpoint_overflow(), 3u);
  const EndpointComparison* one = report.Find("one");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->fields.size(), 3u);
  EXPECT_EQ(one->field_overflow, 2u);
  EXPECT_EQ(report.Find("three"), nullptr);
}

TEST(ComparisonReportTest, SampleCapsAndTruncatedBodies) {
  ComparisonReportOptions options;
  options.max_samples_per_field = 2;
  options.max_samples = 3;
  options.max_sample_body_bytes = 10;
  ComparisonReport report(options);
  JsonDiff diff;
  for (int i = 0; i < 10; ++i) {
    Compare(diff, report, "e", R"({"a":1,"b":1})", R"({"a":2,"b":2})", R"({"a":1,"b":1})");
  }
  const EndpointComparison* endpoint = report.Find("e");
  ASSERT_NE(endpoint, nullptr);
  EXPECT_EQ(endpoint->fields.at("body.a").samples.size(), 2u);
  EXPECT_EQ(endpoint->fields.at("body.b").samples.size(), 1u);  // the report-wide cap
  EXPECT_EQ(report.sample_count(), 3u);
  const DiffSample& sample = endpoint->fields.at("body.a").samples[0];
  EXPECT_EQ(sample.primary_body, R"({"a":1,"b")");
  EXPECT_EQ(sample.primary_value, "1");
  EXPECT_EQ(sample.dark_value, "2");
  EXPECT_EQ(sample.request, "GET /items/7");
  // Merging respects the same caps.
  ComparisonReport merged(options);
  merged.Merge(report);
  merged.Merge(report);
  EXPECT_EQ(merged.sample_count(), 3u);
  EXPECT_EQ(merged.Find("e")->fields.at("body.a").raw, 20u);
}

TEST(ComparisonReportTest, MergeAddsEverything) {
  JsonDiff diff;
  ComparisonReport a;
  ComparisonReport b;
  Compare(diff, a, "x", Item(1, 1, 1), Item(1, 2, 1), Item(1, 1, 1), 10, 20);
  Compare(diff, b, "x", Item(1, 1, 1), Item(1, 1, 1), Item(1, 1, 2), 30, 40);
  Compare(diff, b, "y", Item(1, 1, 1), Item(1, 1, 1), Item(1, 1, 1), 50, 60);
  b.RecordIncomplete("x");
  a.Merge(b);
  const EndpointComparison* x = a.Find("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->total, 2u);
  EXPECT_EQ(x->differences, 1u);
  EXPECT_EQ(x->noisy, 1u);
  EXPECT_EQ(x->incomplete, 1u);
  EXPECT_EQ(x->fields.at("body.price").raw, 1u);
  EXPECT_EQ(x->fields.at("body.timestamp").noise, 1u);
  EXPECT_EQ(x->primary_latency_us.total_count(), 2u);
  EXPECT_EQ(x->dark_latency_us.max(), 40);
  EXPECT_EQ(a.Find("y")->total, 1u);
  // Merging a report into itself doubles it.
  a.Merge(a);
  EXPECT_EQ(a.Find("x")->total, 4u);
}

TEST(ComparisonReportTest, JsonIsValidEvenWithBinaryBodies) {
  JsonDiff diff;
  ComparisonReport report;
  std::string primary("\xff\xfe{", 3);
  std::string dark("\xc3(", 2);
  Compare(diff, report, "bin\xff", primary, dark, primary);
  std::string text = report.ToJson();
  nlohmann::json json = nlohmann::json::parse(text);
  EXPECT_EQ(json["endpoints"].size(), 1u);
  EXPECT_EQ(json["thresholds"]["relative_percent"], 20.0);
  EXPECT_EQ(json["endpoint_overflow"], 0);
  // An empty report.
  EXPECT_EQ(nlohmann::json::parse(ComparisonReport().ToJson())["endpoints"].size(), 0u);
}

}  // namespace
}  // namespace hammer::dark
