// ForkEligibility: may this request be copied to the dark clusters at all? rest.li's rule
// (rest.li's DarkClusterStrategy and its request-method filter):
//
//   eligible = (safe(method) OR target matches an allow pattern) AND NOT target matches a deny
//   pattern
//
//  * Safe methods are GET, HEAD, OPTIONS and TRACE, compared case-sensitively (methods are
//    case-sensitive). PUT, POST, DELETE, PATCH and anything unknown are unsafe: safe, not
//    idempotent, because a dark copy of a PUT or DELETE still writes.
//  * Method overrides (`X-HTTP-Method-Override`, `X-HTTP-Method`, `X-Method-Override`: the
//    first present, value trimmed) are a client's claim. Only when the proxy is told to trust
//    them (--trust-method-override, for rest.li query tunnelling) is the override the method
//    judged, whatever the request line says (an empty value is unsafe). Untrusted (the
//    default), the real method is judged, and an override naming an unsafe method makes the
//    request ineligible too, since an upstream that honours overrides would treat the copy as
//    a write.
//  * gRPC calls (a gRPC content type, http/grpc_wire.h) are all POST, so their method cannot
//    say whether they are safe: a call is safe when its path (/package.Service/Method) matches
//    one of the --dark-grpc-methods globs (fnmatch(3) syntax without FNM_PATHNAME, so '*' also
//    matches '/': "/shop.Catalog/Get*"), named by the operator as read-only. Allow and deny
//    patterns apply as to any request.
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
#include <span>
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
  ForkEligibility() = default;  // safe methods only, no patterns, overrides untrusted
  ForkEligibility(const std::vector<std::string>& allow, const std::vector<std::string>& deny,
                  bool trust_method_override = false, std::vector<std::string> grpc_methods = {});
  static Result<ForkEligibility> Create(const std::vector<std::string>& allow,
                                        const std::vector<std::string>& deny,
                                        bool trust_method_override = false,
                                        std::vector<std::string> grpc_methods = {});

  const Status& status() const { return status_; }

  // `method_override` is the method override header's value when one is present.
  bool Eligible(std::string_view method, std::string_view target,
                std::optional<std::string_view> method_override = std::nullopt) const;
  // The same, reading the method, target and override headers from a parsed request head; a
  // gRPC call is judged by its path against the gRPC method globs.
  bool Eligible(const http::RequestHead& head) const;
  // Whether a gRPC call's path is one of the read-only methods named.
  bool IsListedGrpcMethod(std::string_view path) const;

  // The first method override header's value, if any.
  static std::optional<std::string_view> MethodOverride(std::span<const http::Header> headers);

  static bool IsSafeMethod(std::string_view method);

 private:
  static bool MatchesAny(const std::vector<std::shared_ptr<const re2::RE2>>& patterns,
                         std::string_view target);

  std::vector<std::shared_ptr<const re2::RE2>> allow_;
  std::vector<std::shared_ptr<const re2::RE2>> deny_;
  bool trust_method_override_ = false;
  std::vector<std::string> grpc_methods_;  // fnmatch globs
  Status status_;
};

}  // namespace hammer::dark
