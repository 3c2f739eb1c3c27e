// libFuzzer target for JsonDiff (and the ComparisonReport it feeds). Input: one flag byte, then
// two response bodies separated by the first NUL byte (no NUL: split in the middle). Flag bits:
// 0 = ignore "body.a" and "body[]"; 1 = tight caps (8 levels, 50 values, 5 differences);
// 2 = different status codes; 3 = different values of the compared header; 4 = record
// latencies (histograms, and their encoding in the report); 5 = skip the report (its JSON
// writing and checking dominate the run time otherwise). Seeds:
// tests/fuzz/corpus/json_diff/.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when:
//   - a document compared with its own minified form (simdjson::minify) shows a difference;
//   - a path is reported twice, is under an ignore prefix, does not start with "status",
//   "grpc-status",
//     "header." or "body", or comes with an occurrence count of 0 or an over-long rendering;
//   - more differences come back than max_differences allows;
//   - an untruncated comparison of (b, a) does not report the same paths as (a, b), with
//     missing and extra swapped;
//   - the report built from the comparisons is not valid JSON.
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "hammer/dark/comparison_report.h"
#include "hammer/dark/json_diff.h"

namespace {

using hammer::dark::ComparedExchange;
using hammer::dark::ComparisonReport;
using hammer::dark::ComparisonReportOptions;
using hammer::dark::DifferenceKind;
using hammer::dark::DiffResult;
using hammer::dark::FieldDifference;
using hammer::dark::JsonDiff;
using hammer::dark::JsonDiffOptions;
using hammer::dark::PairOutcome;
using hammer::dark::ResponseView;

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

JsonDiffOptions Options(bool ignore, bool tight) {
  JsonDiffOptions options;
  options.headers = {"X-A"};
  if (ignore) options.ignore = {"body.a", "body[]"};
  if (tight) {
    options.max_depth = 8;
    options.max_nodes = 50;
    options.max_differences = 5;
  }
  return options;
}

JsonDiff& Differ(int flags) {
  static JsonDiff differs[4] = {JsonDiff(Options(false, false)), JsonDiff(Options(true, false)),
                                JsonDiff(Options(false, true)), JsonDiff(Options(true, true))};
  return differs[flags & 3];
}

void CheckResult(const JsonDiff& diff, const DiffResult& result) {
  Require(result.differences.size() <= diff.options().max_differences);
  std::map<std::string_view, int> seen;
  for (const FieldDifference& d : result.differences) {
    Require(++seen[d.path] == 1);
    Require(!diff.IsIgnored(d.path));
    std::string_view path = d.path;
    Require(path == "status" || path.starts_with("header.") || path.starts_with("body"));
    Require(d.occurrences >= 1);
    Require(d.left.size() <= hammer::dark::kMaxRenderedBytes || d.path.starts_with("header."));
    Require(d.right.size() <= hammer::dark::kMaxRenderedBytes || d.path.starts_with("header."));
  }
}

DifferenceKind Mirror(DifferenceKind kind) {
  if (kind == DifferenceKind::kMissing) return DifferenceKind::kExtra;
  if (kind == DifferenceKind::kExtra) return DifferenceKind::kMissing;
  return kind;
}

// `body` against its minified form must show nothing, when it is JSON the differ accepts.
void CheckMinifiedIsEqual(JsonDiff& diff, std::string_view body) {
  // One validating parser per depth limit in use, allocated once (parse() keeps the depth).
  static std::map<size_t, simdjson::dom::parser> parsers;
  size_t depth = diff.options().max_depth;
  auto [entry, created] = parsers.try_emplace(depth);
  simdjson::dom::parser& parser = entry->second;
  if (created &&
      parser.allocate(simdjson::dom::MINIMAL_DOCUMENT_CAPACITY, depth) != simdjson::SUCCESS)
    __builtin_trap();
  simdjson::dom::element root;
  if (body.size() > diff.options().max_body_bytes ||
      parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS)
    return;
  std::unique_ptr<char[]> out(new char[body.size() + 1]);
  size_t length = 0;
  if (simdjson::minify(body.data(), body.size(), out.get(), length) != simdjson::SUCCESS) return;
  ResponseView a{200, {}, body};
  ResponseView b{200, {}, std::string_view(out.get(), length)};
  Require(diff.Compare(a, b).empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  int flags = data[0];
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t split = input.find('\0');
  std::string_view left_body =
      split == std::string_view::npos ? input.substr(0, input.size() / 2) : input.substr(0, split);
  std::string_view right_body =
      split == std::string_view::npos ? input.substr(input.size() / 2) : input.substr(split + 1);
  const hammer::http::Header left_headers[] = {{"x-a", "1"}};
  const hammer::http::Header right_headers[] = {{"X-A", (flags & 8) ? "2" : "1"}};
  ResponseView left{200, left_headers, left_body};
  ResponseView right{(flags & 4) ? 503 : 200, right_headers, right_body};

  JsonDiff& diff = Differ(flags);
  DiffResult forward = diff.Compare(left, right);
  DiffResult backward = diff.Compare(right, left);
  CheckResult(diff, forward);
  CheckResult(diff, backward);
  if (!forward.truncated && !backward.truncated) {
    Require(forward.differences.size() == backward.differences.size());
    for (const FieldDifference& d : forward.differences) {
      const FieldDifference* mirror = backward.Find(d.path);
      Require(mirror != nullptr && mirror->kind == Mirror(d.kind));
    }
  }
  CheckMinifiedIsEqual(diff, left_body);

  if (flags & 32) return 0;
  ComparisonReportOptions report_options;
  report_options.max_endpoints = 2;
  report_options.max_fields_per_endpoint = 4;
  report_options.max_samples = 3;
  report_options.max_sample_body_bytes = 16;
  ComparisonReport report(report_options);
  std::string endpoint(left_body.substr(0, 8));
  int64_t latency = (flags & 16) ? static_cast<int64_t>(size) : -1;
  PairOutcome outcome;
  outcome.primary_micros = latency;
  outcome.dark_micros = latency;
  report.RecordPair(endpoint, outcome);
  report.Record(
      ComparedExchange{endpoint, right_body.substr(0, 8), left_body, right_body, left_body},
      forward, &backward);
  report.RecordIncomplete(right_body.substr(0, 3));
  ComparisonReport merged;
  merged.Merge(report);
  merged.Merge(report);
  Require(nlohmann::json::accept(merged.ToJson()));
  return 0;
}
