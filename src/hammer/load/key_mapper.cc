#include "hammer/load/key_mapper.h"

#include <re2/re2.h>

#include <utility>

#include "hammer/base/strings.h"
#include "hammer/load/request_spec.h"

namespace hammer::load {

Result<KeyMode> ParseKeyMode(std::string_view text) {
  if (text == "url") return KeyMode::kUrl;
  if (text == "path") return KeyMode::kPath;
  if (text == "method-path") return KeyMode::kMethodPath;
  if (text == "host") return KeyMode::kHost;
  return Status::Error("unknown key " + QuoteInput(text) + " (use url, path, method-path or host)");
}

std::string_view KeyModeName(KeyMode mode) {
  switch (mode) {
    case KeyMode::kUrl:
      return "url";
    case KeyMode::kPath:
      return "path";
    case KeyMode::kMethodPath:
      return "method-path";
    case KeyMode::kHost:
      return "host";
  }
  return "url";
}

Result<KeyMapper> KeyMapper::Create(KeyMode mode, const std::vector<std::string>& patterns) {
  KeyMapper mapper;
  mapper.mode_ = mode;
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
    mapper.patterns_.push_back(Pattern{std::move(regex), std::move(name)});
  }
  return mapper;
}

std::string KeyMapper::KeyFor(std::string_view method, const http::Url& url,
                              std::string_view url_text) const {
  std::string key;
  switch (mode_) {
    case KeyMode::kUrl:
      key = std::string(url_text);
      break;
    case KeyMode::kPath:
      key = std::string(url.Path());
      break;
    case KeyMode::kMethodPath:
      key = std::string(method) + " " + std::string(url.Path());
      break;
    case KeyMode::kHost:
      key = url.HostHeader();
      break;
  }
  for (const Pattern& pattern : patterns_) {
    std::string renamed;
    if (RE2::Extract(key, *pattern.regex, pattern.name, &renamed)) return renamed;
  }
  return key;
}

}  // namespace hammer::load
