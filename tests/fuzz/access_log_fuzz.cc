// libFuzzer target for AccessLogReader (nginx/Apache combined and common log lines). Input:
// the text of a log. Seeds: tests/fuzz/corpus/access_log/.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when a returned entry is not a
// GET or HEAD on the origin with a valid URL, has no location, a time that is not a whole
// second or no client; when an error has no "name:line: " prefix; when the reader returns more
// entries than the input has lines, or lines kept and skipped outnumber them; or when it does
// not stay at its end after an error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/load/access_log.h"

namespace {

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

constexpr std::string_view kOrigin = "http://127.0.0.1:8080";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t lines = 1;
  for (char c : text)
    lines += c == '\n';
  hammer::load::AccessLogOptions options;
  options.max_line_bytes = 4096;
  auto reader = hammer::load::AccessLogReader::FromString(std::move(text), "fuzz.log",
                                                          std::string(kOrigin), options);
  hammer::load::RequestSpec spec;
  size_t entries = 0;
  while (true) {
    hammer::Result<bool> more = reader.Next(&spec);
    if (!more.ok()) {
      Require(std::string_view(more.status().message()).starts_with("fuzz.log:"));
      hammer::Result<bool> after = reader.Next(&spec);
      Require(after.ok() && !*after);
      break;
    }
    if (!*more) break;
    ++entries;
    Require(entries <= lines);
    Require(spec.method == "GET" || spec.method == "HEAD");
    Require(std::string_view(spec.url).starts_with(std::string(kOrigin) + "/"));
    Require(hammer::load::CheckUrl(spec.url).ok());
    Require(spec.headers.empty() && spec.body.empty());
    Require(spec.timestamp_us >= 0 && spec.timestamp_us % 1'000'000 == 0);
    Require(!spec.client.empty());
    Require(std::string_view(spec.where).starts_with("fuzz.log:"));
  }
  uint64_t skipped = 0;
  for (const auto& [reason, n] : reader.skipped())
    skipped += n;
  Require(entries + skipped <= lines);
  return 0;
}
