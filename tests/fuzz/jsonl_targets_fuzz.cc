// libFuzzer target for JsonTargetReader (vegeta's JSON targets, one object per line). Input:
// the text of a targets file. Seeds: tests/fuzz/corpus/jsonl_targets/.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when a returned target would
// not pass the readers' own field checks (method, URL, headers), has no location or an
// offset, when an error has no "name:line: " prefix, when the reader returns more targets
// than the input has lines, or when it does not stay at its end after an error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/load/jsonl_targets.h"

namespace {

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t lines = 1;
  for (char c : text)
    lines += c == '\n';
  hammer::load::JsonTargetOptions options;
  options.max_line_bytes = 4096;
  auto reader = hammer::load::JsonTargetReader::FromString(std::move(text), "fuzz.jsonl", options);
  hammer::load::RequestSpec spec;
  size_t targets = 0;
  while (true) {
    hammer::Result<bool> more = reader.Next(&spec);
    if (!more.ok()) {
      Require(std::string_view(more.status().message()).starts_with("fuzz.jsonl:"));
      hammer::Result<bool> after = reader.Next(&spec);
      Require(after.ok() && !*after);
      break;
    }
    if (!*more) break;
    ++targets;
    Require(targets <= lines);
    Require(hammer::load::CheckMethod(spec.method).ok());
    Require(hammer::load::CheckUrl(spec.url).ok());
    for (const auto& [name, value] : spec.headers)
      Require(hammer::load::CheckHeader(name, value).ok());
    Require(spec.body.size() <= options.max_line_bytes);
    Require(spec.offset == -1);
    Require(std::string_view(spec.where).starts_with("fuzz.jsonl:"));
  }
  return 0;
}
