#include "hammer/dark/comparison_report.h"

#include <re2/re2.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "hammer/http/message.h"

namespace hammer::dark {
namespace {

using Json = nlohmann::ordered_json;

std::string Cut(std::string_view text, size_t limit) {
  return std::string(text.substr(0, std::min(text.size(), limit)));
}

constexpr std::string_view kRedacted = "[redacted]";

bool IsSecretName(std::string_view name) {
  for (std::string_view secret : {"authorization", "proxy-authorization", "cookie", "set-cookie"}) {
    if (http::EqualsIgnoreCase(name, secret)) return true;
  }
  return false;
}

// A difference at "headers.set-cookie" or "body.request.headers.Authorization".
bool IsSecretPath(std::string_view path) {
  size_t dot = path.rfind('.');
  return IsSecretName(dot == std::string_view::npos ? path : path.substr(dot + 1));
}

std::string RedactedValue(std::string_view path, std::string value) {
  return IsSecretPath(path) ? std::string(kRedacted) : value;
}

Json LatencyJson(const stats::Histogram& h) {
  Json j;
  j["count"] = h.total_count();
  if (h.empty()) return j;
  j["min"] = h.min();
  j["p50"] = h.ValueAtPercentile(50);
  j["p90"] = h.ValueAtPercentile(90);
  j["p99"] = h.ValueAtPercentile(99);
  j["p99_9"] = h.ValueAtPercentile(99.9);
  j["max"] = h.max();
  j["mean"] = h.Mean();
  j["histogram"] = h.EncodeBase64();  // HdrHistogram V2, for offline analysis
  return j;
}

Json SampleJson(const DiffSample& s) {
  Json j;
  j["request"] = s.request;
  j["kind"] = DifferenceKindName(s.kind);
  j["primary"] = s.primary_value;
  j["dark"] = s.dark_value;
  j["primary_body"] = s.primary_body;
  j["dark_body"] = s.dark_body;
  if (!s.secondary_body.empty()) j["secondary_body"] = s.secondary_body;
  return j;
}

Json DifferenceSetFields(std::string_view set) {
  Json fields = Json::array();
  while (!set.empty()) {
    size_t end = set.find('\n');
    fields.push_back(std::string(set.substr(0, end)));
    set.remove_prefix(end == std::string_view::npos ? set.size() : end + 1);
  }
  return fields;
}

double Percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

ComparisonReport::ComparisonReport(ComparisonReportOptions options) : options_(options) {}

EndpointComparison* ComparisonReport::EndpointFor(std::string_view key) {
  auto found = endpoints_.find(key);
  if (found != endpoints_.end()) return &found->second;
  if (endpoints_.size() >= options_.max_endpoints) return nullptr;
  EndpointComparison endpoint;
  endpoint.latency_intervals = stats::PairedIntervals(options_.latency_interval);
  return &endpoints_.emplace(std::string(key), std::move(endpoint)).first->second;
}

FieldComparison* ComparisonReport::FieldFor(EndpointComparison& endpoint, std::string_view path) {
  auto found = endpoint.fields.find(path);
  if (found != endpoint.fields.end()) return &found->second;
  if (endpoint.fields.size() >= options_.max_fields_per_endpoint) return nullptr;
  return &endpoint.fields.emplace(std::string(path), FieldComparison{}).first->second;
}

void ComparisonReport::AddSample(FieldComparison& field, const DiffSample& sample) {
  if (field.samples.size() >= options_.max_samples_per_field || samples_ >= options_.max_samples)
    return;
  field.samples.push_back(sample);
  ++samples_;
}

void ComparisonReport::AddDifferenceSet(EndpointComparison& endpoint, std::string_view set,
                                        uint64_t requests) {
  auto found = endpoint.difference_sets.find(set);
  if (found != endpoint.difference_sets.end()) {
    found->second += requests;
  } else if (endpoint.difference_sets.size() < options_.max_difference_sets_per_endpoint &&
             set.size() <= options_.max_difference_set_bytes) {
    endpoint.difference_sets.emplace(std::string(set), requests);
  } else {
    endpoint.difference_set_overflow += requests;
  }
}

void ComparisonReport::RecordPair(std::string_view endpoint_key, const PairOutcome& outcome) {
  EndpointComparison* endpoint = EndpointFor(endpoint_key);
  if (endpoint == nullptr) {
    ++endpoint_overflow_;
    return;
  }
  ++endpoint->pairs;
  if (outcome.uncompared) ++endpoint->incomplete;
  if (outcome.primary_failed) ++endpoint->primary_failures;
  if (outcome.dark_failed) ++endpoint->dark_failures;
  if (!outcome.primary_failed && outcome.primary_micros >= 0) {
    endpoint->primary_latency_us.Record(outcome.primary_micros);
  }
  if (!outcome.dark_failed && outcome.dark_micros >= 0) {
    endpoint->dark_latency_us.Record(outcome.dark_micros);
  }
  if (!outcome.primary_failed && !outcome.dark_failed && outcome.primary_micros >= 0 &&
      outcome.dark_micros >= 0 && outcome.settled_at > 0) {
    endpoint->latency_intervals.Record(outcome.settled_at, outcome.primary_micros,
                                       outcome.dark_micros);
  }
}

void ComparisonReport::Record(const ComparedExchange& exchange, const DiffResult& raw,
                              const DiffResult* noise) {
  EndpointComparison* endpoint = EndpointFor(exchange.endpoint);
  if (endpoint == nullptr) return;  // counted by RecordPair
  ++endpoint->total;
  if (!raw.empty()) ++endpoint->differences;
  if (noise != nullptr && !noise->empty()) ++endpoint->noisy;
  if (noise != nullptr) ++endpoint->with_secondary;
  if (raw.truncated || (noise != nullptr && noise->truncated)) ++endpoint->truncated;
  if (!raw.empty()) {
    std::vector<std::string_view> paths;
    paths.reserve(raw.differences.size());
    for (const FieldDifference& difference : raw.differences)
      paths.push_back(difference.path);
    std::sort(paths.begin(), paths.end());
    std::string set;
    for (std::string_view path : paths) {
      if (!set.empty()) set += '\n';
      set += path;
    }
    AddDifferenceSet(*endpoint, set, 1);
  }

  for (const FieldDifference& difference : raw.differences) {
    FieldComparison* field = FieldFor(*endpoint, difference.path);
    if (field == nullptr) {
      ++endpoint->field_overflow;
      continue;
    }
    ++field->raw;
    if (field->samples.size() < options_.max_samples_per_field && samples_ < options_.max_samples) {
      // Redacted before the cut, so a cut cannot leave half a secret unrecognised.
      size_t limit = options_.max_sample_body_bytes;
      AddSample(*field, DiffSample{std::string(exchange.request), difference.kind,
                                   RedactedValue(difference.path, difference.left),
                                   RedactedValue(difference.path, difference.right),
                                   Cut(RedactSecrets(exchange.primary_body), limit),
                                   Cut(RedactSecrets(exchange.dark_body), limit),
                                   Cut(RedactSecrets(exchange.secondary_body), limit)});
    }
  }
  if (noise == nullptr) return;
  for (const FieldDifference& difference : noise->differences) {
    FieldComparison* field = FieldFor(*endpoint, difference.path);
    if (field == nullptr) {
      ++endpoint->field_overflow;
      continue;
    }
    ++field->noise;
  }
}

void ComparisonReport::RecordIncomplete(std::string_view endpoint_key) {
  EndpointComparison* endpoint = EndpointFor(endpoint_key);
  if (endpoint == nullptr) {
    ++endpoint_overflow_;
    return;
  }
  ++endpoint->incomplete;
  ++endpoint->unsent;
}

void ComparisonReport::Merge(const ComparisonReport& other) {
  if (&other == this) {
    // Merging into itself would read the samples it appends to: merge a snapshot instead.
    ComparisonReport copy = other;  // NOLINT(performance-unnecessary-copy-initialization)
    Merge(copy);
    return;
  }
  endpoint_overflow_ += other.endpoint_overflow_;
  for (const auto& [key, theirs] : other.endpoints_) {
    EndpointComparison* ours = EndpointFor(key);
    if (ours == nullptr) {
      endpoint_overflow_ += theirs.pairs + theirs.unsent;
      continue;
    }
    ours->pairs += theirs.pairs;
    ours->primary_failures += theirs.primary_failures;
    ours->dark_failures += theirs.dark_failures;
    ours->total += theirs.total;
    ours->differences += theirs.differences;
    ours->noisy += theirs.noisy;
    ours->with_secondary += theirs.with_secondary;
    ours->incomplete += theirs.incomplete;
    ours->unsent += theirs.unsent;
    ours->truncated += theirs.truncated;
    ours->field_overflow += theirs.field_overflow;
    ours->difference_set_overflow += theirs.difference_set_overflow;
    for (const auto& [set, requests] : theirs.difference_sets)
      AddDifferenceSet(*ours, set, requests);
    ours->primary_latency_us.Merge(theirs.primary_latency_us);
    ours->dark_latency_us.Merge(theirs.dark_latency_us);
    ours->latency_intervals.Merge(theirs.latency_intervals);
    for (const auto& [path, field] : theirs.fields) {
      FieldComparison* mine = FieldFor(*ours, path);
      if (mine == nullptr) {
        ours->field_overflow += field.raw + field.noise;
        continue;
      }
      mine->raw += field.raw;
      mine->noise += field.noise;
      for (const DiffSample& sample : field.samples)
        AddSample(*mine, sample);
    }
  }
}

NoiseVerdict ComparisonReport::Judge(const EndpointComparison& endpoint,
                                     const FieldComparison& field) const {
  return JudgeField(field.raw, field.noise, endpoint.total, options_.thresholds);
}

const EndpointComparison* ComparisonReport::Find(std::string_view endpoint) const {
  auto found = endpoints_.find(endpoint);
  return found == endpoints_.end() ? nullptr : &found->second;
}

std::vector<std::string> ComparisonReport::ReportedFields(std::string_view endpoint_key) const {
  std::vector<std::string> reported;
  const EndpointComparison* endpoint = Find(endpoint_key);
  if (endpoint == nullptr) return reported;
  for (const auto& [path, field] : endpoint->fields) {
    if (Judge(*endpoint, field).reported) reported.push_back(path);
  }
  return reported;  // std::map order: sorted by path
}

std::string ComparisonReport::ToJson() const {
  // Bodies are cut at arbitrary bytes: replace invalid UTF-8 instead of throwing.
  return ToJsonValue().dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

Json ComparisonReport::ToJsonValue() const {
  Json root;
  root["thresholds"] = {{"relative_percent", options_.thresholds.relative_percent},
                        {"absolute_percent", options_.thresholds.absolute_percent}};
  root["endpoint_overflow"] = endpoint_overflow_;
  root["samples"] = samples_;
  Json endpoints = Json::array();
  for (const auto& [key, endpoint] : endpoints_) {
    struct Row {
      const std::string* path;
      const FieldComparison* field;
      NoiseVerdict verdict;
    };
    std::vector<Row> rows;
    rows.reserve(endpoint.fields.size());
    for (const auto& [path, field] : endpoint.fields)
      rows.push_back(Row{&path, &field, Judge(endpoint, field)});
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      if (a.verdict.reported != b.verdict.reported) return a.verdict.reported;
      return a.field->raw > b.field->raw;
    });

    Json e;
    e["endpoint"] = key;
    e["pairs"] = endpoint.pairs;
    e["primary_failures"] = endpoint.primary_failures;
    e["dark_failures"] = endpoint.dark_failures;
    e["total"] = endpoint.total;
    e["differences"] = endpoint.differences;
    e["noisy"] = endpoint.noisy;
    e["with_secondary"] = endpoint.with_secondary;
    e["incomplete"] = endpoint.incomplete;
    e["unsent"] = endpoint.unsent;
    e["truncated"] = endpoint.truncated;
    e["field_overflow"] = endpoint.field_overflow;
    Json reported = Json::array();
    for (const Row& row : rows) {
      if (row.verdict.reported) reported.push_back(*row.path);
    }
    e["reported_fields"] = std::move(reported);
    e["latency_us"] = {{"primary", LatencyJson(endpoint.primary_latency_us)},
                       {"dark", LatencyJson(endpoint.dark_latency_us)}};
    Json sets = Json::array();
    for (const auto& [set, requests] : endpoint.difference_sets)
      sets.push_back({{"fields", DifferenceSetFields(set)}, {"requests", requests}});
    e["difference_sets"] = std::move(sets);
    e["difference_set_overflow"] = endpoint.difference_set_overflow;
    Json fields = Json::array();
    for (const Row& row : rows) {
      Json f;
      f["path"] = *row.path;
      f["reported"] = row.verdict.reported;
      f["raw"] = row.field->raw;
      f["noise"] = row.field->noise;
      f["raw_percent"] = Percent(row.field->raw, endpoint.total);
      f["noise_percent"] = Percent(row.field->noise, endpoint.total);
      f["relative_percent"] = row.verdict.relative_percent;
      f["absolute_percent"] = row.verdict.absolute_percent;
      Json samples = Json::array();
      for (const DiffSample& sample : row.field->samples)
        samples.push_back(SampleJson(sample));
      f["samples"] = std::move(samples);
      fields.push_back(std::move(f));
    }
    e["fields"] = std::move(fields);
    endpoints.push_back(std::move(e));
  }
  root["endpoints"] = std::move(endpoints);
  return root;
}

std::string RedactSecrets(std::string_view text) {
  // A JSON member or a header line named like a credential keeps its name, loses its value.
  static const re2::RE2 kJsonMember(
      R"re((?i)("(?:authorization|proxy-authorization|cookie|set-cookie)"\s*:\s*)"(?:[^"\\]|\\.)*"?)re");
  static const re2::RE2 kHeaderLine(
      R"re((?im)^((?:authorization|proxy-authorization|cookie|set-cookie)[ \t]*:)[^\r\n]*)re");
  std::string out(text);
  re2::RE2::GlobalReplace(&out, kJsonMember, "\\1\"[redacted]\"");
  re2::RE2::GlobalReplace(&out, kHeaderLine, "\\1 [redacted]");
  return out;
}

}  // namespace hammer::dark
