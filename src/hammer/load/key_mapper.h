// KeyMapper: the key that records and summaries group a request under.
//
// `--key MODE` picks what the key is made from:
//   url          the URL as written in the input (the seed's behaviour)
//   path         the path, without the query string: "/item/42"
//   method-path  method, a space and the path: "GET /item/42"
//   host         the Host header value: host, with ":port" unless it is the scheme's default
//
// `--key-pattern REGEX=NAME` (repeatable) then renames the key from MODE (stats::KeyPatterns,
// shared with `hammer stats --key-pattern`, which renames the keys of records the same way).
//
// Create returns an error naming the bad argument: an unknown mode, or a pattern that
// stats::KeyPatterns::Create refuses. A KeyMapper is an immutable value (copies share the
// compiled patterns); KeyFor may be called from any number of threads at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/http/url.h"
#include "hammer/stats/key_patterns.h"

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
  // The same key written into `*key` (replacing what it held), reusing its capacity. `url_text`
  // must not view `*key`.
  void KeyFor(std::string_view method, const http::Url& url, std::string_view url_text,
              std::string* key) const;

  KeyMode mode() const { return mode_; }

 private:
  KeyMode mode_ = KeyMode::kUrl;
  stats::KeyPatterns patterns_;
};

}  // namespace hammer::load
