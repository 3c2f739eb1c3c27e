#include "hammer/stats/partial.h"

#include <algorithm>
#include <charconv>

#include "hammer/stats/record.h"

namespace hammer::stats {
namespace {

// Splits off the next space-separated field; false when none is left.
bool NextField(std::string_view& rest, std::string_view* field) {
  if (rest.empty()) return false;
  size_t space = rest.find(' ');
  *field = rest.substr(0, space);
  rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  return !field->empty();
}

template <typename T>
bool ParseDecimal(std::string_view text, T* out) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

Status ParseFailureCounts(std::string_view text, FailureCounts* out) {
  if (text == "-") return Status::Ok();
  uint64_t total = 0;  // FailureCounts::Total() would wrap around on hostile counts
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view pair = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) {
      return Status::Error("partial: trailing ',' in failures");
    }
    size_t colon = pair.find(':');
    uint64_t n = 0;
    if (colon == std::string_view::npos || !ParseDecimal(pair.substr(colon + 1), &n) || n == 0) {
      return Status::Error("partial: failures must be type:n pairs with n > 0");
    }
    std::optional<Failure> type = FailureFromName(pair.substr(0, colon));
    if (!type) return Status::Error("partial: unknown failure type");
    if (out->Get(*type) != 0) return Status::Error("partial: failure type listed twice");
    if (__builtin_add_overflow(total, n, &total)) {
      return Status::Error("partial: more typed failures than errors");
    }
    out->Add(*type, n);
  }
  return Status::Ok();
}

}  // namespace

void AppendFailureCounts(std::string& out, const FailureCounts& failures) {
  bool any = false;
  for (size_t i = 0; i < kFailureCount; ++i) {
    if (failures.by_type[i] == 0) continue;
    if (any) out.push_back(',');
    any = true;
    out.append(kFailureNames[i]);
    out.push_back(':');
    out.append(std::to_string(failures.by_type[i]));
  }
  if (!any) out.push_back('-');
}

namespace {

// A #ha1 task or attempt name: at most kMaxOriginFieldBytes, spaces and line breaks as '_'.
void AppendOriginName(std::string& out, std::string_view name) {
  if (name.empty()) name = "-";
  for (char c : name.substr(0, kMaxOriginFieldBytes))
    out.push_back(c == ' ' || static_cast<unsigned char>(c) <= '\r' ? '_' : c);
}

// " <count> <errors> <sum> <min> <max> <failures> <histogram>\n": what follows either tag.
void AppendPartialFields(std::string& out, const KeyStats& stats) {
  for (uint64_t n : {stats.count, stats.errors}) {
    out.push_back(' ');
    out.append(std::to_string(n));
  }
  out.push_back(' ');
  out.append(std::to_string(stats.sum_micros));
  if (stats.count == 0) {
    out.append(" - -");
  } else {
    for (int64_t n : {stats.min_micros, stats.max_micros}) {
      out.push_back(' ');
      out.append(std::to_string(n));
    }
  }
  out.push_back(' ');
  AppendFailureCounts(out, stats.failures.counts());
  out.push_back(' ');
  out.append(stats.histogram.EncodeBase64());
  out.push_back('\n');
}

}  // namespace

void AppendPartialRecord(std::string& out, std::string_view key, const KeyStats& stats) {
  AppendSanitizedKey(out, key);
  out.push_back('\t');
  out.append(kPartialTag);
  AppendPartialFields(out, stats);
}

void AppendPartialRecord(std::string& out, std::string_view key, const KeyStats& stats,
                         const PartialOrigin& origin) {
  AppendSanitizedKey(out, key);
  out.push_back('\t');
  out.append(kAttemptPartialTag);
  out.push_back(' ');
  AppendOriginName(out, origin.task);
  out.push_back(' ');
  AppendOriginName(out, origin.attempt);
  out.push_back(' ');
  out.append(std::to_string(std::clamp<int64_t>(origin.started_ms, 0, kMaxEpochMs)));
  out.push_back(' ');
  out.append(std::to_string(std::max<uint64_t>(origin.lines, 1)));
  AppendPartialFields(out, stats);
}

Status ParsePartialFields(std::string_view fields, KeyStats* out) {
  std::string_view count, errors, sum, min, max, failures, histogram;
  std::string_view rest = fields;
  if (fields.ends_with(' ') || !NextField(rest, &count) || !NextField(rest, &errors) ||
      !NextField(rest, &sum) || !NextField(rest, &min) || !NextField(rest, &max) ||
      !NextField(rest, &failures) || !NextField(rest, &histogram) || !rest.empty()) {
    return Status::Error("partial: expected 7 fields separated by single spaces");
  }
  KeyStats stats;
  if (!ParseDecimal(count, &stats.count) || !ParseDecimal(errors, &stats.errors) ||
      !ParseDecimal(sum, &stats.sum_micros)) {
    return Status::Error("partial: count, errors and sum must be unsigned integers");
  }
  if (stats.count == 0) {
    if (min != "-" || max != "-" || stats.sum_micros != 0) {
      return Status::Error("partial: min, max must be '-' and sum 0 when count is 0");
    }
  } else if (!ParseDecimal(min, &stats.min_micros) || !ParseDecimal(max, &stats.max_micros)) {
    return Status::Error("partial: min and max must be unsigned integers");
  }
  FailureCounts typed;
  if (Status s = ParseFailureCounts(failures, &typed); !s.ok()) return s;
  stats.failures.Merge(typed);
  if (stats.failures.Total() > stats.errors) {
    return Status::Error("partial: more typed failures than errors");
  }
  Result<Histogram> decoded = Histogram::DecodeBase64(histogram);
  if (!decoded.ok()) return Status::Error("partial: " + decoded.status().message());
  stats.histogram = std::move(decoded).value();

  const Histogram& h = stats.histogram;
  if (h.total_count() != stats.count) {
    return Status::Error("partial: histogram total differs from count");
  }
  if (stats.count > 0) {
    auto clamp = [](int64_t v) { return v > Histogram::kHighest ? Histogram::kHighest : v; };
    __int128 n = stats.count;
    if (stats.min_micros > stats.max_micros || stats.sum_micros < n * stats.min_micros ||
        stats.sum_micros > n * stats.max_micros) {
      return Status::Error("partial: sum, min and max disagree");
    }
    if (Histogram::LowestEquivalent(clamp(stats.min_micros)) != h.min() ||
        Histogram::HighestEquivalent(clamp(stats.max_micros)) != h.max()) {
      return Status::Error("partial: min or max outside the histogram's extreme buckets");
    }
  }
  *out = std::move(stats);
  return Status::Ok();
}

}  // namespace hammer::stats
