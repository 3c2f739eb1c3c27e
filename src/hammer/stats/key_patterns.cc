#include "hammer/stats/key_patterns.h"

#include <re2/re2.h>

#include <utility>

#include "hammer/base/strings.h"

namespace hammer::stats {

Result<KeyPatterns> KeyPatterns::Create(const std::vector<std::string>& patterns) {
  KeyPatterns result;
  for (const std::string& text : patterns) {
    std::string what = "--key-pattern " + QuoteInput(text) + ": ";
    size_t equals = text.rfind('=');
    if (equals == std::string::npos) return Status::Error(what + "expected REGEX=NAME");
    std::string regex_text = text.substr(0, equals);
    std::string name = text.substr(equals + 1);
    if (regex_text.empty()) return Status::Error(what + "empty REGEX");
    if (name.empty()) return Status::Error(what + "empty NAME");
    RE2::Options options;
    options.set_log_errors(false);
    auto regex = std::make_shared<const RE2>(regex_text, options);
    if (!regex->ok()) return Status::Error(what + "invalid REGEX: " + regex->error());
    std::string error;
    if (!regex->CheckRewriteString(name, &error)) {
      return Status::Error(what + "invalid NAME: " + error);
    }
    result.patterns_.push_back(Pattern{std::move(regex), std::move(name)});
  }
  return result;
}

std::string KeyPatterns::Rename(std::string key) const {
  for (const Pattern& pattern : patterns_) {
    std::string renamed;
    if (RE2::Extract(key, *pattern.regex, pattern.name, &renamed)) return renamed;
  }
  return key;
}

}  // namespace hammer::stats
