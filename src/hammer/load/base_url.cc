#include "hammer/load/base_url.h"

#include <algorithm>

#include "hammer/http/message.h"
#include "hammer/http/url.h"

namespace hammer::load {

Result<BaseUrl> BaseUrl::Parse(std::string_view text) {
  Result<http::Url> url = http::ParseUrl(text);
  if (!url.ok()) return Status::Error("--base-url: " + url.status().message());
  if (url->target != "/") {
    return Status::Error(
        "--base-url: give scheme://host[:port] only (each entry keeps its own "
        "path and query), got '" +
        std::string(text) + "'");
  }
  BaseUrl base;
  base.origin_ = url->Origin();
  return base;
}

void BaseUrl::Apply(RequestSpec* spec, bool preserve_host) const {
  std::string_view url = spec->url;
  size_t scheme_end = url.find("://");
  std::string_view rest = scheme_end == std::string_view::npos ? url : url.substr(scheme_end + 3);
  size_t path = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, path);
  std::string_view target = path == std::string_view::npos ? std::string_view() : rest.substr(path);
  auto is_host = [](const auto& h) { return http::EqualsIgnoreCase(h.first, "Host"); };
  const bool has_host = std::any_of(spec->headers.begin(), spec->headers.end(), is_host);
  if (preserve_host) {
    if (!has_host) spec->headers.emplace_back("Host", std::string(authority));
  } else if (has_host) {
    std::erase_if(spec->headers, is_host);
  }
  std::string rebased = origin_;
  if (target.empty() || target.front() != '/') rebased.push_back('/');
  rebased.append(target);
  spec->url = std::move(rebased);
}

}  // namespace hammer::load
