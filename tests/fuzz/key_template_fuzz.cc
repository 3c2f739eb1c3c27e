// libFuzzer target for KeyTemplater, the cache in front of KeyTemplate that a key table keeps
// (it remembers the last key's prefix and shape and, for a key of the same shape, copies the
// last template instead of templating). Input: keys, one per line, given to one KeyTemplater in
// order, so consecutive keys can share or almost share a shape. Seeds:
// tests/fuzz/corpus/key_template/.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when:
//   - KeyTemplater's answer differs from KeyTemplate's for any key (the cache must never show);
//   - a template is not its own template (KeyTemplate is idempotent);
//   - the string overload and the one writing into a reused string disagree.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/stats/key_template.h"

namespace {

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  hammer::stats::KeyTemplater templater;
  std::string cached;
  std::string reused = "left over from before";
  while (!input.empty()) {
    const size_t end = input.find('\n');
    const std::string_view key = input.substr(0, end);
    input.remove_prefix(end == std::string_view::npos ? input.size() : end + 1);
    templater.Template(key, &cached);
    const std::string expected = hammer::stats::KeyTemplate(key);
    Require(cached == expected);
    hammer::stats::KeyTemplate(key, &reused);
    Require(reused == expected);
    Require(hammer::stats::KeyTemplate(expected) == expected);
  }
  return 0;
}
