#include "hammer/load/fleet_partial.h"

#include <charconv>

#include "hammer/stats/partial.h"
#include "hammer/stats/record.h"

namespace hammer::load {
namespace {

constexpr std::string_view kHeader = "hammer-fleet 1 ";
constexpr std::string_view kTotalKey = "*";

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
}

// Splits off the text up to `separator` (all of it when there is none).
std::string_view NextPart(std::string_view& rest, char separator) {
  const size_t at = rest.find(separator);
  std::string_view part = rest.substr(0, at);
  rest = at == std::string_view::npos ? std::string_view() : rest.substr(at + 1);
  return part;
}

void AppendField(std::string& out, std::string_view name, std::string_view value) {
  out.append(name);
  out.push_back('\t');
  for (char c : value)
    out.push_back(c == '\t' || c == '\r' || c == '\n' ? ' ' : c);
  out.push_back('\n');
}

}  // namespace

std::string EncodeFleetPartial(const FleetPartial& partial) {
  std::string out(kHeader);
  out += std::to_string(partial.worker) + " " + std::to_string(partial.elapsed_ms) + "\n";
  stats::AppendPartialRecord(out, kTotalKey, partial.total);
  for (const auto& [key, stats] : partial.keys)
    stats::AppendPartialRecord(out, key, stats);
  return out;
}

Status ParseFleetPartial(std::string_view payload, FleetPartial* out) {
  *out = FleetPartial();
  std::string_view header = NextPart(payload, '\n');
  if (!header.starts_with(kHeader))
    return Status::Error("fleet partial: no 'hammer-fleet 1' header");
  header.remove_prefix(kHeader.size());
  const std::string_view worker = NextPart(header, ' ');
  if (!ParseNumber(worker, &out->worker) || out->worker < 0 ||
      !ParseNumber(header, &out->elapsed_ms) || out->elapsed_ms < 0) {
    return Status::Error("fleet partial: header needs a worker index and elapsed ms");
  }
  bool total = false;
  for (int line_number = 2; !payload.empty(); ++line_number) {
    const std::string_view line = NextPart(payload, '\n');
    const stats::ParsedRecord record = stats::ParseRecordLine(line);
    const std::string where = "fleet partial line " + std::to_string(line_number);
    if (record.kind != stats::RecordKind::kPartial || record.origin) {
      return Status::Error(where + ": not a #hp1 partial");
    }
    stats::KeyStats stats;
    if (Status ok = stats::ParsePartialFields(record.partial, &stats); !ok.ok()) {
      return Status::Error(where + ": " + ok.message());
    }
    if (!total) {
      if (record.key != kTotalKey) return Status::Error(where + ": the total ('*') comes first");
      out->total = std::move(stats);
      total = true;
    } else {
      out->keys.emplace_back(std::string(record.key), std::move(stats));
    }
  }
  if (!total) return Status::Error("fleet partial: no total");
  return Status::Ok();
}

std::string AbortReason::Describe() const {
  std::string text = "threshold " + threshold + " failed on " +
                     (fleet ? "the fleet's figures" : "this worker's figures");
  if (fleet && worker >= 0) text += " (seen by worker " + std::to_string(worker) + ")";
  if (!message.empty()) text += ": " + message;
  return text;
}

std::string EncodeAbortReason(const AbortReason& reason) {
  std::string out;
  AppendField(out, "threshold", reason.threshold);
  AppendField(out, "actual", reason.actual);
  AppendField(out, "worker", std::to_string(reason.worker));
  AppendField(out, "message", reason.message);
  return out;
}

AbortReason ParseAbortReason(std::string_view payload) {
  AbortReason reason;
  reason.fleet = true;
  while (!payload.empty()) {
    std::string_view value = NextPart(payload, '\n');
    const std::string_view name = NextPart(value, '\t');
    if (name == "threshold") {
      reason.threshold = value;
    } else if (name == "actual") {
      reason.actual = value;
    } else if (name == "message") {
      reason.message = value;
    } else if (name == "worker") {
      if (!ParseNumber(value, &reason.worker)) reason.worker = -1;
    }
  }
  return reason;
}

}  // namespace hammer::load
