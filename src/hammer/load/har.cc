#include "hammer/load/har.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <optional>
#include <utility>

#include "hammer/base/base64.h"
#include "hammer/base/civil_date.h"
#include "hammer/base/strings.h"
#include "hammer/http/message.h"

namespace hammer::load {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

constexpr size_t kMaxSchemeBytes = 32;
constexpr std::array<std::string_view, 9> kDroppedHeaders = {
    "host",       "content-length",   "connection",
    "keep-alive", "proxy-connection", "transfer-encoding",
    "te",         "upgrade",          "accept-encoding"};

bool DroppedHeader(std::string_view name) {
  if (!name.empty() && name.front() == ':') return true;
  for (std::string_view dropped : kDroppedHeaders) {
    if (http::EqualsIgnoreCase(name, dropped)) return true;
  }
  return false;
}

// A member of `parent`, or nullopt when absent or JSON null.
std::optional<element> Member(object parent, std::string_view name) {
  element value;
  if (parent.at_key(name).get(value) != simdjson::SUCCESS || value.is_null()) return std::nullopt;
  return value;
}

std::optional<std::string_view> StringMember(object parent, std::string_view name) {
  std::optional<element> value = Member(parent, name);
  std::string_view text;
  if (!value || value->get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
  return text;
}

// A form body rebuilt from postData.params (what a browser records when it omits the text):
// name=value pairs, percent-encoded as application/x-www-form-urlencoded, joined by '&'.
std::string FormBodyFromParams(object post) {
  std::string body;
  std::optional<element> params_value = Member(post, "params");
  simdjson::dom::array params;
  if (!params_value || params_value->get_array().get(params) != simdjson::SUCCESS) return body;
  auto encode = [&body](std::string_view text) {
    static const char kHex[] = "0123456789ABCDEF";
    for (unsigned char c : text) {
      if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
        body.push_back(static_cast<char>(c));
      } else if (c == ' ') {
        body.push_back('+');
      } else {
        body.push_back('%');
        body.push_back(kHex[c >> 4]);
        body.push_back(kHex[c & 15]);
      }
    }
  };
  for (element param : params) {
    object pair;
    if (param.get_object().get(pair) != simdjson::SUCCESS) continue;
    std::optional<std::string_view> name = StringMember(pair, "name");
    if (!name) continue;
    if (!body.empty()) body.push_back('&');
    encode(*name);
    body.push_back('=');
    encode(StringMember(pair, "value").value_or(""));
  }
  return body;
}

// "data: URL" for a data: URL; empty for http(s); "invalid URL" when there is no scheme.
std::string SchemeSkipReason(std::string_view url) {
  size_t colon = url.find(':');
  if (colon == 0 || colon == std::string_view::npos || colon > kMaxSchemeBytes) {
    return "invalid URL";
  }
  std::string scheme;
  for (char c : url.substr(0, colon)) {
    c = AsciiToLower(c);
    bool ok = (c >= 'a' && c <= 'z') ||
              (!scheme.empty() && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
    if (!ok) return "invalid URL";
    scheme += c;
  }
  if (scheme == "http" || scheme == "https") return "";
  return scheme + ": URL";
}

bool FromCache(object entry) {
  std::optional<element> cache = Member(entry, "_fromCache");
  bool flag = true;
  if (!cache) return false;
  if (cache->get_bool().get(flag) == simdjson::SUCCESS) return flag;
  return true;  // "memory", "disk"
}

bool Unanswered(object entry) {
  std::optional<element> response = Member(entry, "response");
  object response_object;
  if (!response || response->get_object().get(response_object) != simdjson::SUCCESS) return false;
  std::optional<element> status = Member(response_object, "status");
  double value = -1;
  return status && status->get_double().get(value) == simdjson::SUCCESS && value == 0;
}

// Fills `spec` from entry.request; returns a skip reason, or "" when the entry is replayable.
std::string ReadRequest(object entry, const HarOptions& options, RequestSpec* spec) {
  std::optional<element> request_value = Member(entry, "request");
  object request;
  if (!request_value || request_value->get_object().get(request) != simdjson::SUCCESS) {
    return "malformed entry";
  }
  std::optional<std::string_view> method = StringMember(request, "method");
  std::optional<std::string_view> url = StringMember(request, "url");
  if (!method || !url) return "malformed entry";
  if (std::string reason = SchemeSkipReason(*url); !reason.empty()) return reason;
  if (FromCache(entry)) return "served from cache";
  if (!options.keep_unanswered && Unanswered(entry)) return "no response";
  if (!CheckMethod(*method).ok()) return "invalid method";
  if (!CheckUrl(*url).ok()) return "invalid URL";
  spec->method = std::string(*method);
  spec->url = std::string(*url);

  if (std::optional<element> headers_value = Member(request, "headers")) {
    array headers;
    if (headers_value->get_array().get(headers) != simdjson::SUCCESS) return "malformed entry";
    for (element item : headers) {
      object header;
      if (item.get_object().get(header) != simdjson::SUCCESS) return "malformed entry";
      std::optional<std::string_view> name = StringMember(header, "name");
      std::optional<std::string_view> value = StringMember(header, "value");
      if (!name || !value) return "malformed entry";
      if (DroppedHeader(*name)) continue;
      if (!CheckHeader(*name, *value).ok()) return "invalid header";
      spec->headers.emplace_back(*name, *value);
    }
  }

  std::optional<element> post_value = Member(request, "postData");
  object post;
  if (post_value && post_value->get_object().get(post) == simdjson::SUCCESS) {
    std::optional<std::string_view> text = StringMember(post, "text");
    if (text) spec->body = std::string(*text);
    if (spec->body.empty()) spec->body = FormBodyFromParams(post);
    std::optional<std::string_view> encoding = StringMember(post, "encoding");
    if (encoding && http::EqualsIgnoreCase(*encoding, "base64")) {
      Result<std::string> decoded = Base64Decode(spec->body);
      if (!decoded.ok()) return "invalid body";
      spec->body = std::move(decoded).value();
    }
    std::optional<std::string_view> mime = StringMember(post, "mimeType");
    bool has_type = false;
    for (const auto& [name, value] : spec->headers) {
      has_type = has_type || http::EqualsIgnoreCase(name, "content-type");
    }
    if (mime && !mime->empty() && !spec->body.empty() && !has_type &&
        CheckHeader("Content-Type", *mime).ok()) {
      spec->headers.emplace_back("Content-Type", *mime);
    }
  }
  return "";
}

Result<HarReadResult> ParsePadded(const char* data, size_t size, std::string_view name,
                                  const HarOptions& options) {
  if (size >= 3 && std::string_view(data, 3) == "\xEF\xBB\xBF") {  // a BOM is allowed (spec)
    data += 3;
    size -= 3;
  }
  simdjson::dom::parser parser;
  element root;
  if (simdjson::error_code error = parser.parse(data, size, false).get(root)) {
    return Status::Error(std::string(name) + ": invalid JSON: " + simdjson::error_message(error));
  }
  array entries;
  if (root["log"]["entries"].get_array().get(entries) != simdjson::SUCCESS) {
    return Status::Error(std::string(name) + ": not a HAR file (no log.entries array)");
  }

  HarReadResult result;
  std::vector<int64_t> started;  // per request; INT64_MIN when unknown
  std::optional<int64_t> earliest;
  uint64_t number = 0;
  for (element item : entries) {
    ++number;
    object entry;
    RequestSpec spec;
    std::string reason = item.get_object().get(entry) == simdjson::SUCCESS
                             ? ReadRequest(entry, options, &spec)
                             : "malformed entry";
    if (!reason.empty()) {
      ++result.skipped[reason];
      continue;
    }
    spec.where = std::string(name) + ":entry " + std::to_string(number);
    int64_t time = INT64_MIN;
    std::optional<std::string_view> text = StringMember(entry, "startedDateTime");
    if (text && ParseIsoTimestamp(*text, &time)) {
      if (!earliest || time < *earliest) earliest = time;
    } else {
      time = INT64_MIN;
    }
    started.push_back(time);
    result.requests.push_back(std::move(spec));
  }
  for (size_t i = 0; i < result.requests.size(); ++i) {
    if (started[i] != INT64_MIN) result.requests[i].offset = started[i] - *earliest;
  }
  return result;
}

// Reads all of `fd` into a buffer with simdjson's padding after `*size` bytes.
Status ReadPadded(int fd, const std::string& name, size_t max_bytes, std::string* buffer,
                  size_t* size) {
  std::string too_large =
      name + ": larger than " + std::to_string(max_bytes >> 20) + " MiB, the limit for a HAR file";
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    if (static_cast<uint64_t>(info.st_size) > max_bytes) return Status::Error(too_large);
    buffer->resize(static_cast<size_t>(info.st_size) + 65536);
  }
  *size = 0;
  while (true) {
    if (buffer->size() < *size + 65536) buffer->resize(std::max(*size + 65536, buffer->size() * 2));
    ssize_t n = ::read(fd, buffer->data() + *size, buffer->size() - *size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno("read " + name, errno);
    if (n == 0) break;
    *size += static_cast<size_t>(n);
    if (*size > max_bytes) return Status::Error(too_large);
  }
  buffer->resize(*size + simdjson::SIMDJSON_PADDING);
  std::fill(buffer->begin() + static_cast<ptrdiff_t>(*size), buffer->end(), '\0');
  return Status::Ok();
}

int Digits(std::string_view text, size_t at, size_t count) {
  if (at + count > text.size()) return -1;
  int value = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

bool ParseIsoTimestamp(std::string_view text, int64_t* nanos) {
  // YYYY-MM-DDTHH:MM:SS
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[13] != ':' || text[16] != ':' ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ')) {
    return false;
  }
  int year = Digits(text, 0, 4), month = Digits(text, 5, 2), day = Digits(text, 8, 2);
  int hour = Digits(text, 11, 2), minute = Digits(text, 14, 2), second = Digits(text, 17, 2);
  // int64 nanoseconds reach from 1677 to 2262.
  if (year < 1678 || year > 2261 || !IsValidDate(year, month, day) || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 || second > 59) {
    return false;
  }
  size_t at = 19;
  int64_t fraction = 0;
  if (at < text.size() && text[at] == '.') {
    ++at;
    size_t digits = 0;
    int64_t scale = kSecond;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      if (digits < 9) {
        scale /= 10;
        fraction += (text[at] - '0') * scale;
      }
      ++digits;
      ++at;
    }
    if (digits == 0) return false;
  }
  int64_t zone_seconds = 0;
  std::string_view zone = text.substr(at);
  if (zone == "Z" || zone == "z") {
  } else if (!zone.empty()) {
    if (zone[0] != '+' && zone[0] != '-') return false;
    int zone_hour = Digits(zone, 1, 2);
    int zone_minute = 0;
    if (zone.size() == 6 && zone[3] == ':') {
      zone_minute = Digits(zone, 4, 2);
    } else if (zone.size() == 5) {
      zone_minute = Digits(zone, 3, 2);
    } else if (zone.size() != 3) {
      return false;
    }
    if (zone_hour < 0 || zone_hour > 23 || zone_minute < 0 || zone_minute > 59) return false;
    zone_seconds = (zone_hour * 3600 + zone_minute * 60) * (zone[0] == '-' ? -1 : 1);
  }
  int64_t seconds =
      DaysSinceEpoch(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - zone_seconds;
  *nanos = seconds * kSecond + fraction;
  return true;
}

Result<HarReadResult> ParseHar(std::string_view text, std::string_view name,
                               const HarOptions& options) {
  if (text.size() > options.max_bytes) {
    return Status::Error(std::string(name) + ": larger than " +
                         std::to_string(options.max_bytes >> 20) +
                         " MiB, the limit for a HAR file");
  }
  std::string buffer(text.size() + simdjson::SIMDJSON_PADDING, '\0');
  std::copy(text.begin(), text.end(), buffer.begin());
  return ParsePadded(buffer.data(), text.size(), name, options);
}

Result<HarReadResult> ReadHar(const std::string& path, const HarOptions& options) {
  bool stdin_input = path == "-";
  std::string name = stdin_input ? "stdin" : path;
  int fd = stdin_input ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("open " + path, errno);
  std::string buffer;
  size_t size = 0;
  Status read = ReadPadded(fd, name, options.max_bytes, &buffer, &size);
  if (!stdin_input) ::close(fd);
  if (!read.ok()) return read;
  return ParsePadded(buffer.data(), size, name, options);
}

}  // namespace hammer::load
