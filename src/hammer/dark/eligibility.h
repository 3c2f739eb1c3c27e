// ForkEligibility: may this request be copied to the dark clusters at all? rest.li's rule
// (shared/reference/dark-canary.md §1.1 and the §1.5 table):
//
//   eligible = (safe(method) OR target matches an allow pattern) AND NOT target matches a deny
//   pattern
//
//  * Safe methods are GET, HEAD, OPTIONS and TRACE, compared case-sensitively (methods are
//    case-sensitive). PUT, POST, DELETE, PATCH and anything unknown are unsafe: safe, not
//    idempotent, because a dark copy of a PUT or DELETE still writes.
//  * When an `X-HTTP-Method-Override` header is present (rest.li query tunnelling), its value
//    (whitespace trimmed) is the method judged, whatever the request line says; an empty value
//    is unsafe.
//  * Patterns are RE2 and must match the whole request-target as received (path and query,
//    e.g. "/white?x=1"), as Java's Matcher.matches() does in rest.li: write ".*white.*" to match
//    a substring. An allow pattern makes unsafe methods eligible; a deny pattern wins over
//    everything.
//
// A pattern that does not compile makes the object fail closed: status() holds the error and
// nothing is eligible (use Create() at configuration time to report it). Copyable (patterns
// are shared, immutable); Eligible() is const and thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/http/message.h"

namespace re2 {
class RE2;
}

namespace hammer::dark {

class ForkEligibility {
 public:
  ForkEligibility() = default;  // safe methods only, no patterns
  ForkEligibility(const std::vector<std::string>& allow, const std::vector<std::string>& deny);
  static Result<ForkEligibility> Create(const std::vector<std::string>& allow,
                                        const std::vector<std::string>& deny);

  const Status& status() const { return status_; }

  // `method_override` is the X-HTTP-Method-Override value when that header is present.
  bool Eligible(std::string_view method, std::string_view target,
                std::optional<std::string_view> method_override = std::nullopt) const;
  // The same, reading the method, target and override header from a parsed request head.
  bool Eligible(const http::RequestHead& head) const;

  static bool IsSafeMethod(std::string_view method);

 private:
  static bool MatchesAny(const std::vector<std::shared_ptr<const re2::RE2>>& patterns,
                         std::string_view target);

  std::vector<std::shared_ptr<const re2::RE2>> allow_;
  std::vector<std::shared_ptr<const re2::RE2>> deny_;
  Status status_;
};

}  // namespace hammer::dark
