#include "hammer/load/access_log.h"

#include <utility>

#include "hammer/base/civil_date.h"
#include "hammer/base/strings.h"

namespace hammer::load {
namespace {

constexpr std::string_view kOtherMethod =
    "a method other than GET and HEAD (the log holds no body to send)";
constexpr std::string_view kNotARequest =
    "a request that is not 'METHOD /target' (nginx logs '-' or the raw bytes of a request it "
    "could not parse)";

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// Reads the digits of `text` at *at (exactly `count` of them when count > 0).
bool ReadNumber(std::string_view text, size_t* at, size_t count, int64_t* out) {
  size_t start = *at;
  int64_t value = 0;
  while (*at < text.size() && text[*at] >= '0' && text[*at] <= '9' &&
         (count == 0 || *at - start < count) && *at - start < 18) {
    value = value * 10 + (text[*at] - '0');
    ++*at;
  }
  if (*at == start || (count > 0 && *at - start != count)) return false;
  *out = value;
  return true;
}

bool Expect(std::string_view text, size_t* at, char c) {
  if (*at >= text.size() || text[*at] != c) return false;
  ++*at;
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A quoted field at *at: '"' ... '"', with the backslash escapes nginx and Apache write.
bool ReadQuoted(std::string_view line, size_t* at, std::string* out) {
  if (!Expect(line, at, '"')) return false;
  out->clear();
  while (*at < line.size()) {
    char c = line[(*at)++];
    if (c == '"') return true;
    if (c != '\\' || *at == line.size()) {
      out->push_back(c);
      continue;
    }
    char next = line[(*at)++];
    if (next == 'x' && *at + 2 <= line.size() && HexValue(line[*at]) >= 0 &&
        HexValue(line[*at + 1]) >= 0) {
      out->push_back(static_cast<char>(HexValue(line[*at]) * 16 + HexValue(line[*at + 1])));
      *at += 2;
    } else if (next == '"' || next == '\\') {
      out->push_back(next);
    } else {
      out->push_back('\\');
      out->push_back(next);
    }
  }
  return false;  // no closing quote
}

// A field up to the next space.
std::string_view ReadWord(std::string_view line, size_t* at) {
  size_t end = line.find(' ', *at);
  if (end == std::string_view::npos) end = line.size();
  std::string_view word = line.substr(*at, end - *at);
  *at = end;
  return word;
}

bool SkipSpaces(std::string_view line, size_t* at) {
  size_t start = *at;
  while (*at < line.size() && line[*at] == ' ')
    ++*at;
  return *at > start;
}

// The target of a replayable request line: origin-form, no space or control byte.
bool IsOriginForm(std::string_view target) {
  if (target.empty() || target.front() != '/') return false;
  for (char c : target) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) return false;
  }
  return true;
}

}  // namespace

Result<int64_t> ParseLogTime(std::string_view text) {
  static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  auto bad = [&] {
    return Status::Error("expected a time like 10/Oct/2000:13:55:36 -0700, got " +
                         QuoteInput(text));
  };
  size_t at = 0;
  int64_t day = 0, year = 0, hour = 0, minute = 0, second = 0, zone = 0;
  if (!ReadNumber(text, &at, 2, &day) || !Expect(text, &at, '/')) return bad();
  if (text.size() < at + 3) return bad();
  int month = 0;
  for (int m = 0; m < 12; ++m) {
    if (text.substr(at, 3) == kMonths[m]) month = m + 1;
  }
  at += 3;
  if (month == 0 || !Expect(text, &at, '/') || !ReadNumber(text, &at, 4, &year) ||
      !Expect(text, &at, ':') || !ReadNumber(text, &at, 2, &hour) || !Expect(text, &at, ':') ||
      !ReadNumber(text, &at, 2, &minute) || !Expect(text, &at, ':') ||
      !ReadNumber(text, &at, 2, &second) || !Expect(text, &at, ' ')) {
    return bad();
  }
  if (at >= text.size() || (text[at] != '+' && text[at] != '-')) return bad();
  const int64_t sign = text[at++] == '-' ? -1 : 1;
  if (!ReadNumber(text, &at, 4, &zone) || at != text.size()) return bad();
  // A leap second (:60) is accepted as the second after :59, as mktime does.
  if (!IsValidDate(year, month, static_cast<int>(day)) || hour > 23 || minute > 59 || second > 60 ||
      zone % 100 > 59) {
    return bad();
  }
  const int64_t zone_seconds = sign * ((zone / 100) * 3600 + (zone % 100) * 60);
  return DaysSinceEpoch(year, month, static_cast<int>(day)) * 86400 + hour * 3600 + minute * 60 +
         second - zone_seconds;
}

Result<AccessLogLine> ParseAccessLogLine(std::string_view line) {
  AccessLogLine parsed;
  size_t at = 0;
  parsed.remote_addr = ReadWord(line, &at);
  if (parsed.remote_addr.empty()) return Status::Error("expected the client address first");
  if (!SkipSpaces(line, &at) || ReadWord(line, &at).empty() || !SkipSpaces(line, &at) ||
      ReadWord(line, &at).empty() || !SkipSpaces(line, &at)) {
    return Status::Error("expected 'ADDRESS IDENT USER [TIME]' at the start");
  }
  if (!Expect(line, &at, '[')) return Status::Error("expected '[' and the time after the user");
  size_t close = line.find(']', at);
  if (close == std::string_view::npos) return Status::Error("expected ']' after the time");
  Result<int64_t> time = ParseLogTime(line.substr(at, close - at));
  if (!time.ok()) return time.status();
  if (*time < 0) return Status::Error("a time before 1970");
  parsed.time_unix_seconds = *time;
  at = close + 1;
  if (!SkipSpaces(line, &at) || !ReadQuoted(line, &at, &parsed.request)) {
    return Status::Error("expected the quoted request (\"GET /path HTTP/1.1\") after the time");
  }
  int64_t status = 0;
  if (!SkipSpaces(line, &at) || !ReadNumber(line, &at, 3, &status) ||
      (at < line.size() && line[at] != ' ')) {
    return Status::Error("expected the 3-digit status after the request");
  }
  parsed.status = static_cast<int>(status);
  std::string_view bytes = (SkipSpaces(line, &at), ReadWord(line, &at));
  int64_t ignored = 0;
  size_t digits = 0;
  if (bytes != "-" && (!ReadNumber(bytes, &digits, 0, &ignored) || digits != bytes.size())) {
    return Status::Error("expected the size sent (digits or '-') after the status");
  }
  // The common format ends here; the combined one adds "referer" "user agent", and a custom
  // format may add more: none of it is used.
  return parsed;
}

Result<AccessLogReader> AccessLogReader::Open(const std::string& path, std::string origin,
                                              const AccessLogOptions& options) {
  LineReader::Options line_options = LineReader::WholeLines(options.max_line_bytes);
  line_options.interrupt = options.interrupt;
  Result<LineReader> lines = LineReader::Open(path, line_options);
  if (!lines.ok()) return lines.status();
  return AccessLogReader(std::move(lines).value(), std::move(origin));
}

AccessLogReader AccessLogReader::FromString(std::string text, std::string name, std::string origin,
                                            const AccessLogOptions& options) {
  return AccessLogReader(LineReader::FromString(std::move(text), std::move(name),
                                                LineReader::WholeLines(options.max_line_bytes)),
                         std::move(origin));
}

AccessLogReader::AccessLogReader(LineReader lines, std::string origin)
    : lines_(std::move(lines)), origin_(std::move(origin)) {}

Result<bool> AccessLogReader::Next(RequestSpec* out) {
  while (!failed_) {
    std::string_view line;
    Result<bool> more = lines_.Next(&line);
    if (!more.ok()) {
      failed_ = true;
      return more.status();
    }
    if (!*more) return false;
    if (IsBlank(line)) continue;
    std::string where = lines_.name() + ":" + std::to_string(lines_.line_number());
    Result<AccessLogLine> parsed = ParseAccessLogLine(line);
    if (!parsed.ok()) {
      failed_ = true;
      return Status::Error(where + ": " + parsed.status().message());
    }
    std::string_view request = parsed->request;
    const size_t method_end = request.find(' ');
    std::string_view method = request.substr(0, method_end);
    std::string_view rest =
        method_end == std::string_view::npos ? std::string_view() : request.substr(method_end + 1);
    std::string_view target = rest.substr(0, rest.find(' '));
    std::string_view protocol =
        target.size() == rest.size() ? std::string_view() : rest.substr(target.size() + 1);
    if (!CheckMethod(method).ok() || !IsOriginForm(target) ||
        (!protocol.empty() && !protocol.starts_with("HTTP/"))) {
      ++skipped_[std::string(kNotARequest)];
      continue;
    }
    if (method != "GET" && method != "HEAD") {
      ++skipped_[std::string(kOtherMethod)];
      continue;
    }
    *out = RequestSpec();
    out->method = std::string(method);
    out->url = origin_ + std::string(target);
    if (!CheckUrl(out->url).ok()) {
      ++skipped_[std::string(kNotARequest)];
      continue;
    }
    out->timestamp_us = parsed->time_unix_seconds * 1'000'000;
    out->client = std::string(parsed->remote_addr);
    out->where = std::move(where);
    return true;
  }
  return false;
}

}  // namespace hammer::load
