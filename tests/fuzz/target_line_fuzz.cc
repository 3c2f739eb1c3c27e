// libFuzzer target for ParseTargetLine (one line of a `hammer load` URL list) and ParseUrl on
// the URL it finds. Input: one line, as the target source hands it over (no '\n'; anything else
// allowed). Seeds: tests/fuzz/corpus/target_line/.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when:
//   - a view the parser returns points outside the line (the default method "GET" aside);
//   - a skipped line is not blank or a comment after the optional OFFSET<TAB> prefix, or a
//     request line is;
//   - a request's URL is empty or keeps surrounding blanks or a trailing CR;
//   - a method the line names is not LooksLikeMethod(), or is not followed by a blank;
//   - for a URL that ParseUrl accepts, the serialized request head is not exactly one
//     "METHOD TARGET HTTP/1.1" line, CRLF-terminated header lines and a blank line (no bare CR
//     or LF that could split it), or the URL does not parse back from its ToString().
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/http/request_writer.h"
#include "hammer/http/url.h"
#include "hammer/load/target_line.h"

namespace {

using hammer::load::TargetLine;

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

bool IsBlank(char c) {
  return c == ' ' || c == '\t';
}

bool Within(std::string_view part, std::string_view whole) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

// The line as the parser should see it: without "DIGITS<TAB>", blanks and trailing CRs trimmed.
std::string_view Content(std::string_view line) {
  size_t digits = 0;
  while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9')
    ++digits;
  if (digits > 0 && digits < line.size() && line[digits] == '\t') line.remove_prefix(digits + 1);
  while (!line.empty() && IsBlank(line.front()))
    line.remove_prefix(1);
  while (!line.empty() && (IsBlank(line.back()) || line.back() == '\r'))
    line.remove_suffix(1);
  return line;
}

void CheckHead(std::string_view method, const hammer::http::Url& url) {
  std::string head = hammer::http::SerializeRequestHead(method, url, {}, 0);
  std::string first = std::string(method) + " " + url.target + " HTTP/1.1\r\n";
  Require(head.compare(0, first.size(), first) == 0);
  Require(head.size() >= 4 && head.compare(head.size() - 4, 4, "\r\n\r\n") == 0);
  // Every CR is followed by LF and every LF preceded by CR; the only empty line is the last.
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '\r') Require(i + 1 < head.size() && head[i + 1] == '\n');
    if (head[i] == '\n') Require(i > 0 && head[i - 1] == '\r');
  }
  Require(head.find("\r\n\r\n") == head.size() - 4);
  Require(head.find("\r\nHost: " + url.HostHeader() + "\r\n") != std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  TargetLine parsed = hammer::load::ParseTargetLine(line);
  std::string_view content = Content(line);

  if (parsed.kind == TargetLine::Kind::kSkip) {
    Require(content.empty() || content.front() == '#');
    return 0;
  }
  Require(parsed.kind == TargetLine::Kind::kRequest);
  Require(!content.empty() && content.front() != '#');

  // The URL: inside the line, the tail of the content, trimmed.
  std::string_view url_text = parsed.url;
  Require(!url_text.empty() && Within(url_text, line));
  Require(!IsBlank(url_text.front()) && !IsBlank(url_text.back()) && url_text.back() != '\r');
  Require(url_text.data() + url_text.size() == content.data() + content.size());

  // The method: the default, or a word at the start of the content followed by a blank.
  if (Within(parsed.method, line)) {
    Require(hammer::load::LooksLikeMethod(parsed.method));
    Require(parsed.method.data() == content.data());
    Require(parsed.method.size() < content.size() && IsBlank(content[parsed.method.size()]));
    Require(url_text.data() > parsed.method.data() + parsed.method.size());
  } else {
    Require(parsed.method == "GET");
    Require(url_text.data() == content.data());
  }

  hammer::Result<hammer::http::Url> url = hammer::http::ParseUrl(url_text);
  if (!url.ok()) {
    Require(!url.status().message().empty());
    return 0;
  }
  hammer::Result<hammer::http::Url> again = hammer::http::ParseUrl(url->ToString());
  Require(again.ok() && *again == *url);
  CheckHead(parsed.method, *url);
  return 0;
}
