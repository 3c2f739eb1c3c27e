#include "hammer/dark/capture_line.h"

#include <charconv>
#include <utility>

#include "hammer/base/base64.h"
#include "hammer/base/json_string.h"
#include "hammer/base/strings.h"
#include "hammer/base/word_bytes.h"
#include "hammer/http/message.h"

namespace hammer::dark {
namespace {

constexpr std::string_view kSecretHeaders[] = {"authorization", "proxy-authorization", "cookie",
                                               "set-cookie", "x-api-key"};
constexpr std::string_view kSecretParameters[] = {"token", "key", "password", "sig"};

// Fields that frame the body or that the proxy asserts: the replaying client writes its own.
constexpr std::string_view kNotRecorded[] = {
    "host",       "content-length",  "transfer-encoding", "connection",   "te",
    "keep-alive", "x-forwarded-for", "forwarded",         "x-hammer-dark"};

bool InList(std::span<const std::string_view> list, std::string_view name) {
  for (std::string_view item : list) {
    if (http::EqualsIgnoreCase(item, name)) return true;
  }
  return false;
}

void AppendNumber(std::string& out, int64_t n) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof(buf), n).ptr);
}

void AppendJsonEscaped(std::string& out, std::string_view s) {
  hammer::AppendJsonEscaped(out, s, InvalidUtf8::kLatin1);
}

void AppendJsonString(std::string& out, std::string_view s) {
  hammer::AppendJsonString(out, s, InvalidUtf8::kLatin1);
}

// Whether `text` starts with `prefix`, ignoring ASCII case.
bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         http::EqualsIgnoreCase(text.substr(0, prefix.size()), prefix);
}

// One field line of a head: "Name: value".
struct Field {
  std::string_view name;
  std::string_view value;
  bool written = false;  // already in the line, with the first field of its name
};

// The fields of `head` after its request line, in order, into `fields` (storage reused).
void HeadFields(std::string_view head, std::string_view* request_line, std::vector<Field>& fields) {
  fields.clear();
  size_t end = head.find("\r\n");
  *request_line = head.substr(0, end);
  while (end != std::string_view::npos) {
    head.remove_prefix(end + 2);
    end = head.find("\r\n");
    std::string_view line = head.substr(0, end);
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    fields.push_back({line.substr(0, colon), TrimOws(line.substr(colon + 1))});
  }
}

}  // namespace

CaptureRedaction::CaptureRedaction(const std::vector<std::string>& redact,
                                   const std::vector<std::string>& keep) {
  for (std::string_view name : kSecretHeaders)
    headers_.emplace_back(name);
  for (std::string_view name : kSecretParameters)
    parameters_.emplace_back(name);
  for (const std::string& name : redact) {
    headers_.push_back(AsciiStrToLower(name));
    parameters_.push_back(AsciiStrToLower(name));
  }
  for (const std::string& name : keep) {
    std::erase(headers_, AsciiStrToLower(name));
    std::erase(parameters_, AsciiStrToLower(name));
  }
}

bool CaptureRedaction::Listed(const std::vector<std::string>& names, std::string_view name) {
  for (const std::string& item : names) {
    if (http::EqualsIgnoreCase(item, name)) return true;
  }
  return false;
}

bool CaptureRedaction::RedactsHeader(std::string_view name) const {
  return Listed(headers_, name);
}

bool CaptureRedaction::RedactsParameter(std::string_view name) const {
  return Listed(parameters_, name);
}

std::string CaptureRedaction::RedactTarget(std::string_view target) const {
  size_t question = target.find('?');
  if (question == std::string_view::npos) return std::string(target);
  std::string out(target.substr(0, question + 1));
  std::string_view query = target.substr(question + 1);
  std::string_view fragment;
  if (size_t hash = query.find('#'); hash != std::string_view::npos) {
    fragment = query.substr(hash);
    query = query.substr(0, hash);
  }
  while (true) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    if (eq != std::string_view::npos && RedactsParameter(pair.substr(0, eq))) {
      out.append(pair.substr(0, eq + 1)).append(kRedacted);
    } else {
      out.append(pair);
    }
    if (amp == std::string_view::npos) break;
    out.push_back('&');
    query.remove_prefix(amp + 1);
  }
  out.append(fragment);
  return out;
}

bool IsBinaryBody(std::string_view content_type, std::string_view body) {
  const std::string_view type = TrimOws(content_type.substr(0, content_type.find(';')));
  constexpr std::string_view kBinaryTypes[] = {"application/grpc",
                                               "application/octet-stream",
                                               "application/x-protobuf",
                                               "application/protobuf",
                                               "application/zip",
                                               "application/gzip",
                                               "image/",
                                               "audio/",
                                               "video/"};
  for (std::string_view binary : kBinaryTypes) {
    if (StartsWithIgnoreCase(type, binary)) return true;
  }
  // Printable ASCII eight bytes at a time; a word with anything else is looked at byte by byte.
  size_t i = 0;
  while (i < body.size()) {
    if (i + 8 <= body.size()) {
      const uint64_t word = word_bytes::Load(body.data() + i);
      if (!word_bytes::HasHigh(word) && !word_bytes::HasLess(word, 0x20) &&
          !word_bytes::HasByte(word, 0x7F)) {
        i += 8;
        continue;
      }
    }
    const auto c = static_cast<uint8_t>(body[i]);
    if (c >= 0x80) {
      size_t n = Utf8SequenceLength(body.substr(i));
      if (n == 0) return true;
      i += n;
      continue;
    }
    if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7F) return true;
    ++i;
  }
  return false;
}

void AppendCaptureLine(std::string& out, const CapturedExchange& exchange,
                       const CaptureRedaction& redaction) {
  std::string_view request_line;
  // The writer thread encodes line after line: its field list keeps its storage.
  thread_local std::vector<Field> fields;
  HeadFields(exchange.head, &request_line, fields);
  size_t space = request_line.find(' ');
  std::string_view method = request_line.substr(0, space);
  std::string_view target =
      space == std::string_view::npos
          ? std::string_view()
          : request_line.substr(space + 1, request_line.rfind(' ') - space - 1);

  out.append("{\"method\":");
  AppendJsonString(out, method);
  out.append(exchange.https ? ",\"url\":\"https://" : ",\"url\":\"http://");
  AppendJsonEscaped(out, exchange.authority.empty() ? std::string_view("localhost")
                                                    : std::string_view(exchange.authority));
  // "*" (OPTIONS) has no path of its own: the URL names the server.
  if (target == "*") {
    out.push_back('/');
  } else if (target.find('?') == std::string_view::npos) {
    AppendJsonEscaped(out, target);  // nothing to redact
  } else {
    AppendJsonEscaped(out, redaction.RedactTarget(target));
  }
  out.push_back('"');

  // Fields of one name together, in the order each name first appears.
  std::string_view content_type;
  bool any = false;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].written || InList(kNotRecorded, fields[i].name)) continue;
    if (http::EqualsIgnoreCase(fields[i].name, "content-type")) content_type = fields[i].value;
    out.append(any ? "," : ",\"header\":{");
    any = true;
    AppendJsonString(out, fields[i].name);
    out.append(":[");
    const bool secret = redaction.RedactsHeader(fields[i].name);
    for (size_t j = i; j < fields.size(); ++j) {
      if (j != i &&
          (fields[j].written || !http::EqualsIgnoreCase(fields[j].name, fields[i].name))) {
        continue;
      }
      fields[j].written = true;
      if (j != i) out.push_back(',');
      AppendJsonString(out, secret ? kRedacted : fields[j].value);
    }
    out.push_back(']');
  }
  if (any) out.push_back('}');

  if (!exchange.body.empty()) {
    out.append(",\"body\":\"");
    AppendBase64(out, exchange.body);
    out.push_back('"');
    if (IsBinaryBody(content_type, exchange.body)) out.append(",\"body_binary\":true");
  }
  if (exchange.body_truncated) {
    out.append(",\"body_truncated\":true,\"body_size\":");
    AppendNumber(out, static_cast<int64_t>(exchange.body_size));
  }
  out.append(",\"ts\":");
  AppendNumber(out, exchange.arrival_us);
  out.append(",\"protocol\":");
  AppendJsonString(out, exchange.protocol);
  out.append(",\"status\":");
  AppendNumber(out, exchange.status);
  out.append(",\"latency_us\":");
  AppendNumber(out, exchange.latency_us);
  if (exchange.connection != 0) {
    out.append(",\"conn\":");
    AppendNumber(out, static_cast<int64_t>(exchange.connection));
  }
  out.append("}\n");
}

}  // namespace hammer::dark
