#include "hammer/http/owned_headers.h"

namespace hammer::http {

void OwnedHeaders::Assign(std::span<const Header> headers,
                          std::span<const std::string_view> extra) {
  size_t total = 0;
  for (const Header& h : headers)
    total += h.name.size() + h.value.size();
  for (std::string_view e : extra)
    total += e.size();
  // Build into a fresh buffer: `headers` may point into our own bytes_.
  std::string bytes;
  bytes.reserve(total);
  std::vector<std::pair<size_t, size_t>> offsets;  // name start, value start
  offsets.reserve(headers.size());
  for (const Header& h : headers) {
    size_t name_at = bytes.size();
    bytes.append(h.name);
    size_t value_at = bytes.size();
    bytes.append(h.value);
    offsets.emplace_back(name_at, value_at);
  }
  std::vector<size_t> extra_at;
  for (std::string_view e : extra) {
    extra_at.push_back(bytes.size());
    bytes.append(e);
  }
  std::vector<Header> views;
  views.reserve(headers.size());
  std::string_view base;
  bytes_ = std::move(bytes);
  base = bytes_;
  for (size_t i = 0; i < headers.size(); ++i) {
    views.push_back({base.substr(offsets[i].first, headers[i].name.size()),
                     base.substr(offsets[i].second, headers[i].value.size())});
  }
  headers_ = std::move(views);
  extras_.clear();
  for (size_t i = 0; i < extra.size(); ++i)
    extras_.push_back(base.substr(extra_at[i], extra[i].size()));
}

}  // namespace hammer::http
