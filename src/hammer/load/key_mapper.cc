#include "hammer/load/key_mapper.h"

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
  Result<stats::KeyPatterns> compiled = stats::KeyPatterns::Create(patterns);
  if (!compiled.ok()) return compiled.status();
  KeyMapper mapper;
  mapper.mode_ = mode;
  mapper.patterns_ = std::move(*compiled);
  return mapper;
}

std::string KeyMapper::KeyFor(std::string_view method, const http::Url& url,
                              std::string_view url_text) const {
  std::string key;
  KeyFor(method, url, url_text, &key);
  return key;
}

void KeyMapper::KeyFor(std::string_view method, const http::Url& url, std::string_view url_text,
                       std::string* key) const {
  switch (mode_) {
    case KeyMode::kUrl:
      AssignText(key, url_text);
      break;
    case KeyMode::kPath:
      key->assign(url.Path());
      break;
    case KeyMode::kMethodPath:
      key->assign(method).append(" ").append(url.Path());
      break;
    case KeyMode::kHost:
      *key = url.HostHeader();
      break;
  }
  if (!patterns_.empty()) *key = patterns_.Rename(std::move(*key));
}

}  // namespace hammer::load
