// libFuzzer target for the record line format (stats/record.h): ParseRecordLine and
// ParseSeconds on arbitrary bytes, and the writers that must give back what was parsed.
// Input: one line (without its '\n'; a '\n' inside is just another key or value byte).
// Seeds: tests/fuzz/corpus/record_line/ (hammer's own records, timestamped ones, the seed
// Ruby mapper's floats, partials, and lines each reader rule rejects).
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when:
//   - a parsed record's key is not the line's bytes before its first TAB, holds a TAB, or is
//     longer than kMaxKeyBytes; a malformed line has no reason;
//   - a success has a negative time or one at or above 1e12 s, or a timestamp outside
//     [0, kMaxEpochMs];
//   - a partial's fields are not the bytes after "#hp1 ", or, for "#ha1 ", its origin (task
//     and attempt of 1-256 bytes without TAB, CR or LF; lines above 0) is not the fields
//     after the tag, or its partial does not end where the line ends;
//   - writing a parsed success or failure (typed or not) back (AppendSuccessRecord /
//     AppendFailureRecord)
//     and parsing that gives another kind, time or timestamp, or a key other than the
//     sanitized key;
//   - ParseSeconds accepts a text and AppendSeconds of the result does not parse back to the
//     same microseconds.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "hammer/stats/record.h"

namespace stats = hammer::stats;

namespace {

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

constexpr int64_t kMaxMicros = 1'000'000'000'000'000'000;  // 1e12 s

std::string Sanitized(std::string_view key) {
  std::string out;
  stats::AppendSanitizedKey(out, key);
  return out;
}

// Writes `record` back as a line and parses it again: the same record must come out.
void CheckRoundTrip(const stats::ParsedRecord& record) {
  std::optional<int64_t> epoch_ms;
  if (record.has_epoch_ms) epoch_ms = record.epoch_ms;
  std::string line;
  if (record.kind == stats::RecordKind::kSuccess) {
    stats::AppendSuccessRecord(line, record.key, record.micros, epoch_ms);
  } else {
    stats::AppendFailureRecord(line, record.key, epoch_ms, record.failure);
  }
  Require(!line.empty() && line.back() == '\n');
  line.pop_back();
  stats::ParsedRecord again = stats::ParseRecordLine(line);
  Require(again.kind == record.kind);
  Require(again.key == Sanitized(record.key));
  Require(again.has_epoch_ms == record.has_epoch_ms);
  if (record.has_epoch_ms) Require(again.epoch_ms == record.epoch_ms);
  if (record.kind == stats::RecordKind::kSuccess) Require(again.micros == record.micros);
  Require(again.failure == record.failure);
}

void CheckSeconds(std::string_view text) {
  int64_t micros = -1;
  if (!stats::ParseSeconds(text, &micros)) return;
  Require(micros >= 0 && micros <= kMaxMicros);
  std::string written;
  stats::AppendSeconds(written, micros);
  int64_t again = -1;
  Require(stats::ParseSeconds(written, &again) && again == micros);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  stats::ParsedRecord record = stats::ParseRecordLine(line);
  if (record.kind == stats::RecordKind::kMalformed) {
    Require(record.error != nullptr && record.error[0] != '\0');
  } else {
    Require(record.key.size() <= stats::kMaxKeyBytes);
    Require(record.key.data() == line.data());
    Require(record.key.size() < line.size() && line[record.key.size()] == '\t');
    Require(std::memchr(record.key.data(), '\t', record.key.size()) == nullptr);
    if (record.has_epoch_ms) Require(record.epoch_ms >= 0 && record.epoch_ms <= stats::kMaxEpochMs);
  }
  switch (record.kind) {
    case stats::RecordKind::kSuccess:
      Require(record.micros >= 0 && record.micros <= kMaxMicros);
      CheckRoundTrip(record);
      break;
    case stats::RecordKind::kFailure:
      CheckRoundTrip(record);
      break;
    case stats::RecordKind::kPartial: {
      const std::string_view value = line.substr(record.key.size() + 1);
      std::string_view expected = value;
      if (expected.ends_with('\r')) expected.remove_suffix(1);
      if (!record.origin) {
        Require(expected.starts_with(stats::kPartialTag));
        Require(record.partial == expected.substr(stats::kPartialTag.size() + 1));
        break;
      }
      const stats::PartialOrigin& origin = *record.origin;
      Require(expected.starts_with(stats::kAttemptPartialTag));
      for (std::string_view name : {origin.task, origin.attempt}) {
        Require(!name.empty() && name.size() <= stats::kMaxOriginFieldBytes);
        for (char c : name)
          Require(c != '\t' && c != '\r' && c != '\n');
      }
      Require(origin.started_ms >= 0 && origin.lines > 0);
      // The origin's views are the line's own fields, in order, each followed by one space.
      const char* tag_end = expected.data() + stats::kAttemptPartialTag.size();
      Require(*tag_end == ' ' && origin.task.data() == tag_end + 1);
      Require(origin.task.data()[origin.task.size()] == ' ');
      Require(origin.attempt.data() == origin.task.data() + origin.task.size() + 1);
      Require(origin.attempt.data()[origin.attempt.size()] == ' ');
      Require(record.partial.data() + record.partial.size() == expected.data() + expected.size());
      break;
    }
    case stats::RecordKind::kMalformed:
      break;
  }
  CheckSeconds(line);
  // The value alone, as a reader sees it after the key.
  if (const size_t tab = line.find('\t'); tab != std::string_view::npos) {
    CheckSeconds(line.substr(tab + 1));
  }
  return 0;
}
