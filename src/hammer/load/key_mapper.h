// KeyMapper: the key that records and summaries group a request under.
//
// `--key MODE` picks what the key is made from:
//   url          the URL as written in the input (the seed's behaviour)
//   path         the path, without the query string: "/item/42"
//   method-path  method, a space and the path: "GET /item/42"
//   host         the Host header value: host, with ":port" unless it is the scheme's default
//
// `--key-pattern REGEX=NAME` (repeatable) then renames keys: the patterns are tried in order
// against the key from MODE, and the first one that matches anywhere in it (RE2 partial
// match; anchor with ^ and $ to match the whole key) replaces the whole key with NAME.
// "/item/[0-9]+=/item/:id" turns "/item/42" into "/item/:id". NAME may refer to groups of
// REGEX as \1..\9 (\0 is the whole match; write \\ for a backslash). The text is split at its
// last '=', so REGEX may contain '=' and NAME may not; NAME must not be empty.
//
// Create returns an error naming the bad argument: an unknown mode, a pattern without
// '=NAME', an empty REGEX or NAME, a REGEX that RE2 rejects, or a NAME that refers to a group
// the REGEX does not have. A KeyMapper is an immutable value (copies share the compiled
// patterns); KeyFor may be called from any number of threads at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/http/url.h"

namespace re2 {
class RE2;
}

namespace hammer::load {

enum class KeyMode : uint8_t { kUrl, kPath, kMethodPath, kHost };

// "url", "path", "method-path", "host".
Result<KeyMode> ParseKeyMode(std::string_view text);
std::string_view KeyModeName(KeyMode mode);

class KeyMapper {
 public:
  // Mode url without patterns: the key is the URL text.
  KeyMapper() = default;

  static Result<KeyMapper> Create(KeyMode mode, const std::vector<std::string>& patterns);

  // `url` is `url_text` parsed (the caller has it already); `url_text` is the URL as written.
  std::string KeyFor(std::string_view method, const http::Url& url,
                     std::string_view url_text) const;

  KeyMode mode() const { return mode_; }

 private:
  struct Pattern {
    std::shared_ptr<const re2::RE2> regex;
    std::string name;
  };

  KeyMode mode_ = KeyMode::kUrl;
  std::vector<Pattern> patterns_;
};

}  // namespace hammer::load
