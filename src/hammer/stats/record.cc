#include "hammer/stats/record.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "hammer/base/word_bytes.h"

namespace hammer::stats {
namespace {

constexpr double kMaxSeconds = 1e12;  // keeps every µs value and realistic sums inside int64
constexpr int kMaxFastIntegerDigits = 12;

// First non-digit at or after p. Ruby prints 16-17 digit fractions; eight at a time keeps
// them cheap (a byte is a digit when its high nibble is 3 and adding 6 does not carry).
const char* SkipDigits(const char* p, const char* end) {
  constexpr uint64_t kHighNibbles = 0xF0F0F0F0F0F0F0F0;
  constexpr uint64_t kThrees = 0x3030303030303030;
  constexpr uint64_t kSixes = 0x0606060606060606;
  while (end - p >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    if ((word & kHighNibbles) != kThrees || ((word + kSixes) & kHighNibbles) != kThrees) break;
    p += 8;
  }
  while (p < end && static_cast<unsigned>(*p - '0') < 10)
    ++p;
  return p;
}

// Whether any byte of `text` is at most '\r', eight bytes at a time (word_bytes.h).
bool HasByteUpToCr(std::string_view text) {
  return word_bytes::AnyWord(text, 'a',
                             [](uint64_t w) { return word_bytes::HasLess(w, '\r' + 1) != 0; });
}

// 1 to 15 decimal digits, nothing else.
bool ParseEpochMs(std::string_view text, int64_t* epoch_ms) {
  if (text.empty() || text.size() > 15) return false;
  int64_t value = 0;
  for (char c : text) {
    if (static_cast<unsigned>(c - '0') >= 10) return false;
    value = value * 10 + (c - '0');
  }
  *epoch_ms = value;
  return true;
}

// "#ha1"'s origin: task, attempt, started_ms and lines, each followed by one space; the rest
// are #hp1's fields. Returns an error, or "" once `origin` and `partial` are set.
const char* ParseOrigin(std::string_view fields, PartialOrigin* origin, std::string_view* partial) {
  std::string_view parts[4];
  for (std::string_view& part : parts) {
    const size_t space = fields.find(' ');
    if (space == std::string_view::npos) return "#ha1: too few fields";
    part = fields.substr(0, space);
    fields.remove_prefix(space + 1);
  }
  for (std::string_view name : {parts[0], parts[1]}) {
    if (name.empty() || name.size() > kMaxOriginFieldBytes || HasByteUpToCr(name)) {
      return "#ha1: task and attempt must be 1-256 bytes without TAB, CR or LF";
    }
  }
  int64_t lines = 0;
  if (!ParseEpochMs(parts[2], &origin->started_ms)) return "#ha1: started_ms is not 1-15 digits";
  if (!ParseEpochMs(parts[3], &lines) || lines == 0) return "#ha1: lines is not a count above 0";
  origin->task = parts[0];
  origin->attempt = parts[1];
  origin->lines = static_cast<uint64_t>(lines);
  *partial = fields;
  return "";
}

void AppendEpochMs(std::string& out, std::optional<int64_t> epoch_ms) {
  if (!epoch_ms) return;
  out.push_back('\t');
  char buf[24];
  int64_t value = std::clamp<int64_t>(*epoch_ms, 0, kMaxEpochMs);
  out.append(buf, std::to_chars(buf, buf + sizeof(buf), value).ptr);
}

}  // namespace

void AppendSanitizedKey(std::string& out, std::string_view key) {
  size_t start = out.size();
  out.append(key);
  // A record per request: a quick look for any byte up to '\r' first, the replacing only for a
  // key that has one.
  if (!HasByteUpToCr(key)) return;
  for (size_t i = start; i < out.size(); ++i) {
    char c = out[i];
    if (c == '\t' || c == '\n' || c == '\r') out[i] = ' ';
  }
}

void AppendSeconds(std::string& out, int64_t micros) {
  char buf[32];
  char* end = buf;
  uint64_t magnitude = static_cast<uint64_t>(micros);
  if (micros < 0) {
    *end++ = '-';
    magnitude = ~magnitude + 1;
  }
  end = std::to_chars(end, buf + sizeof(buf), magnitude / 1000000).ptr;
  *end++ = '.';
  uint64_t fraction = magnitude % 1000000;
  for (int digit = 5; digit >= 0; --digit) {
    end[digit] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  out.append(buf, end + 6);
}

void AppendSuccessRecord(std::string& out, std::string_view key, int64_t micros) {
  AppendSuccessRecord(out, key, micros, std::nullopt);
}

void AppendFailureRecord(std::string& out, std::string_view key) {
  AppendFailureRecord(out, key, std::nullopt);
}

void AppendSuccessRecord(std::string& out, std::string_view key, int64_t micros,
                         std::optional<int64_t> epoch_ms) {
  AppendSanitizedKey(out, key);
  out.push_back('\t');
  AppendSeconds(out, micros < 0 ? 0 : micros);
  AppendEpochMs(out, epoch_ms);
  out.push_back('\n');
}

void AppendFailureRecord(std::string& out, std::string_view key, std::optional<int64_t> epoch_ms) {
  AppendFailureRecord(out, key, epoch_ms, std::nullopt);
}

void AppendFailureRecord(std::string& out, std::string_view key, std::optional<int64_t> epoch_ms,
                         std::optional<Failure> type) {
  AppendSanitizedKey(out, key);
  out.push_back('\t');
  AppendEpochMs(out, epoch_ms);
  if (type) out.append("\t").append(FailureName(*type));
  out.push_back('\n');
}

bool ParseSeconds(std::string_view text, int64_t* micros) {
  // Fast and exact path for plain decimals: what hammer writes ("0.012345") and what Ruby
  // prints for times of 0.1 ms and more ("0.123456789"). Rounds the decimal value itself to the
  // nearest µs, halves up: llround of the exact value, without a double's error.
  const char* p = text.data();
  const char* end = p + text.size();
  int64_t whole = 0;
  int integer_digits = 0;
  while (p < end && static_cast<unsigned>(*p - '0') < 10 &&
         integer_digits <= kMaxFastIntegerDigits) {
    whole = whole * 10 + (*p++ - '0');
    ++integer_digits;
  }
  if (integer_digits > 0 && integer_digits <= kMaxFastIntegerDigits) {
    if (p == end) {
      *micros = whole * 1000000;
      return true;
    }
    if (*p == '.' && p + 1 < end) {
      const char* q = p + 1;
      int64_t fraction = 0;
      int digits = 0;
      for (; digits < 6 && q < end && static_cast<unsigned>(*q - '0') < 10; ++digits)
        fraction = fraction * 10 + (*q++ - '0');
      bool round_up = q < end && static_cast<unsigned>(*q - '0') < 10 && *q >= '5';
      q = SkipDigits(q, end);
      if (q == end) {
        for (; digits < 6; ++digits)
          fraction *= 10;
        *micros = whole * 1000000 + fraction + (round_up ? 1 : 0);
        return true;
      }
    }
  }
  // General path: exponents ("1.0e-05", Ruby's form below 0.1 ms) and other spellings.
  if (text.empty() || !((text[0] >= '0' && text[0] <= '9') || text[0] == '.')) return false;
  double seconds = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || ptr != text.data() + text.size()) return false;
  if (!std::isfinite(seconds) || seconds < 0 || seconds >= kMaxSeconds) return false;
  *micros = std::llround(seconds * 1e6);
  return true;
}

ParsedRecord ParseRecordLine(std::string_view line) {
  ParsedRecord record;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const void* tab = std::memchr(line.data(), '\t', line.size());
  if (tab == nullptr) {
    record.error = "no TAB between key and value";
    return record;
  }
  size_t key_size = static_cast<size_t>(static_cast<const char*>(tab) - line.data());
  if (key_size > kMaxKeyBytes) {
    record.error = "key longer than 64 KiB";
    return record;
  }
  record.key = line.substr(0, key_size);
  std::string_view value = line.substr(key_size + 1);
  if (value.empty()) {
    record.kind = RecordKind::kFailure;
    return record;
  }
  if (value[0] == '#') {
    if (value.size() > kPartialTag.size() && value.starts_with(kPartialTag) &&
        value[kPartialTag.size()] == ' ') {
      record.kind = RecordKind::kPartial;
      record.partial = value.substr(kPartialTag.size() + 1);
    } else if (value.size() > kAttemptPartialTag.size() && value.starts_with(kAttemptPartialTag) &&
               value[kAttemptPartialTag.size()] == ' ') {
      PartialOrigin origin;
      record.error =
          ParseOrigin(value.substr(kAttemptPartialTag.size() + 1), &origin, &record.partial);
      if (*record.error == '\0') {
        record.kind = RecordKind::kPartial;
        record.origin = origin;
      }
    } else {
      record.error = "unknown partial format (expected #hp1 or #ha1)";
    }
    return record;
  }
  // The opt-in third field. The seconds field is short, so this memchr is cheap.
  if (const void* time_tab = std::memchr(value.data(), '\t', value.size()); time_tab != nullptr) {
    size_t seconds_size = static_cast<size_t>(static_cast<const char*>(time_tab) - value.data());
    std::string_view third = value.substr(seconds_size + 1);
    if (seconds_size == 0) {
      // A failure: its third field is EPOCH_MS, TYPE, or EPOCH_MS<TAB>TYPE (--failure-types).
      std::string_view type = third;
      if (!third.empty() && third[0] >= '0' && third[0] <= '9') {
        size_t type_tab = third.find('\t');
        type = type_tab == std::string_view::npos ? std::string_view() : third.substr(type_tab + 1);
        if (!ParseEpochMs(third.substr(0, std::min(type_tab, third.size())), &record.epoch_ms)) {
          record.error = "timestamp is not an integer number of milliseconds since the epoch";
          return record;
        }
        record.has_epoch_ms = true;
        if (type_tab == std::string_view::npos) {
          record.kind = RecordKind::kFailure;
          return record;
        }
      }
      record.failure = FailureFromName(type);
      if (!record.failure) {
        record.error = "third field is neither a time nor a failure type";
        return record;
      }
      record.kind = RecordKind::kFailure;
      return record;
    }
    if (!ParseEpochMs(third, &record.epoch_ms)) {
      record.error = "timestamp is not an integer number of milliseconds since the epoch";
      return record;
    }
    record.has_epoch_ms = true;
    value = value.substr(0, seconds_size);
    if (value.empty()) {
      record.kind = RecordKind::kFailure;
      return record;
    }
  }
  if (value.size() > kMaxValueBytes || !ParseSeconds(value, &record.micros)) {
    record.error = "value is not a non-negative number of seconds";
    return record;
  }
  record.kind = RecordKind::kSuccess;
  return record;
}

void AppendAbortNote(std::string& out, std::string_view text) {
  out.append(kAbortNoteKey);
  out.push_back('\t');
  out.append(kAbortNoteTag);
  out.push_back(' ');
  AppendSanitizedKey(out, text);
  out.push_back('\n');
}

bool ParseAbortNote(std::string_view line, std::string_view* text) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!line.starts_with(kAbortNoteKey)) return false;
  line.remove_prefix(kAbortNoteKey.size());
  if (line.size() < kAbortNoteTag.size() + 2 || line[0] != '\t') return false;
  line.remove_prefix(1);
  if (!line.starts_with(kAbortNoteTag) || line[kAbortNoteTag.size()] != ' ') return false;
  *text = line.substr(kAbortNoteTag.size() + 1);
  return true;
}

}  // namespace hammer::stats
