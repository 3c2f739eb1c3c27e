// One line of a `hammer load` URL list, as the seed mapper read it and a little more:
//   http://host/path              a GET of that URL
//   POST http://host/path         METHOD URL
//   12345<TAB>http://host/path    Hadoop's byte-offset prefix (NLineInputFormat) is dropped
//   # comment, or a blank line    skipped
// Duplicated lines are how users weight URLs. Pure functions; thread-safe.
#pragma once

#include <string_view>

namespace hammer::load {

struct TargetLine {
  enum class Kind : uint8_t { kSkip, kRequest };
  Kind kind = Kind::kSkip;
  std::string_view method;  // "GET" unless the line names one
  std::string_view url;     // not yet validated: ParseUrl decides (invalid_url on failure)
};

// Splits a line (without its newline; a trailing CR is ignored).
TargetLine ParseTargetLine(std::string_view line);

// True for an HTTP method token as users write them (upper-case letters, 1-16 chars).
bool LooksLikeMethod(std::string_view word);

}  // namespace hammer::load
