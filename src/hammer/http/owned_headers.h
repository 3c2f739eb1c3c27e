// OwnedHeaders: a copy of a header list that outlives the buffer it was parsed from (parsers
// hand out views that die with the next read). One string holds every byte; the Header views
// point into it. Copying an OwnedHeaders re-points the views.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/http/message.h"

namespace hammer::http {

class OwnedHeaders {
 public:
  OwnedHeaders() = default;
  explicit OwnedHeaders(std::span<const Header> headers) { Assign(headers); }
  OwnedHeaders(const OwnedHeaders& other) { Assign(other.headers_); }
  OwnedHeaders& operator=(const OwnedHeaders& other) {
    if (this != &other) Assign(other.headers_);
    return *this;
  }

  // Copies `headers`, plus `extra` strings the caller wants kept alongside (e.g. a method and
  // a request target); Extra(i) returns them.
  void Assign(std::span<const Header> headers, std::span<const std::string_view> extra = {});
  std::span<const Header> headers() const { return headers_; }
  std::string_view Extra(size_t i) const { return extras_[i]; }

 private:
  std::string bytes_;
  std::vector<Header> headers_;
  std::vector<std::string_view> extras_;
};

}  // namespace hammer::http
