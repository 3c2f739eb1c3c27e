// BaseUrl: --base-url, which sends a request file's entries to another scheme, host and port
// (a capture from production replayed against staging), keeping each entry's path and query.
//
// The Host an entry is sent with follows the new URL (an entry's own Host field is dropped),
// unless the Host is to be preserved: the entry's own Host field then stays, and an entry
// without one gets its original URL's authority. A plain value; thread-safe to read.
#pragma once

#include <string>
#include <string_view>

#include "hammer/base/status.h"
#include "hammer/load/request_spec.h"

namespace hammer::load {

class BaseUrl {
 public:
  // "http(s)://host[:port]" with no path beyond "/", no query. Errors name the problem.
  static Result<BaseUrl> Parse(std::string_view text);

  // `spec`'s URL on this base; its Host as described above.
  void Apply(RequestSpec* spec, bool preserve_host) const;

  // "scheme://host[:port]" as given.
  const std::string& origin() const { return origin_; }

 private:
  std::string origin_;  // "scheme://host[:port]" as given
};

}  // namespace hammer::load
