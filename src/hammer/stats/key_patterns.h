// KeyPatterns: `--key-pattern REGEX=NAME` (repeatable), the renaming of keys shared by
// `hammer load` (applied to each request's key as it is recorded, load/key_mapper.h) and
// `hammer stats` (applied to each record's key as it is read, so that keys are grouped after
// the run exactly as load would have grouped them).
//
// The patterns are tried in order against the key, and the first one that matches anywhere in
// it (RE2 partial match; anchor with ^ and $ to match the whole key) replaces the whole key
// with NAME. "/item/[0-9]+=/item/:id" turns "/item/42" into "/item/:id". NAME may refer to
// groups of REGEX as \1..\9 (\0 is the whole match; write \\ for a backslash). The text is
// split at its last '=', so REGEX may contain '=' and NAME may not; NAME must not be empty.
//
// Create returns an error naming the bad argument: a pattern without '=NAME', an empty REGEX
// or NAME, a REGEX that RE2 rejects, or a NAME that refers to a group the REGEX does not have.
// An immutable value (copies share the compiled patterns); Rename may be called from any number
// of threads at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/status.h"

namespace re2 {
class RE2;
}

namespace hammer::stats {

class KeyPatterns {
 public:
  KeyPatterns() = default;  // no patterns: every key stays as it is

  static Result<KeyPatterns> Create(const std::vector<std::string>& patterns);

  // NAME of the first pattern matching `key` (its groups substituted); `key` itself when none
  // matches.
  std::string Rename(std::string key) const;
  bool empty() const { return patterns_.empty(); }

 private:
  struct Pattern {
    std::shared_ptr<const re2::RE2> regex;
    std::string name;
  };
  std::vector<Pattern> patterns_;
};

}  // namespace hammer::stats
