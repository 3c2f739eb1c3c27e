#include "hammer/dark/eligibility.h"

#include <re2/re2.h>

#include "hammer/base/strings.h"

namespace hammer::dark {
namespace {

constexpr std::string_view kMethodOverrides[] = {"X-HTTP-Method-Override", "X-HTTP-Method",
                                                 "X-Method-Override"};

Status Compile(const std::vector<std::string>& patterns, std::string_view what,
               std::vector<std::shared_ptr<const re2::RE2>>& out) {
  RE2::Options options;
  options.set_log_errors(false);
  for (const std::string& pattern : patterns) {
    auto re = std::make_shared<const re2::RE2>(pattern, options);
    if (!re->ok()) {
      return Status::Error(std::string(what) + " pattern \"" + pattern + "\": " + re->error());
    }
    out.push_back(std::move(re));
  }
  return Status::Ok();
}

}  // namespace

ForkEligibility::ForkEligibility(const std::vector<std::string>& allow,
                                 const std::vector<std::string>& deny, bool trust_method_override)
    : trust_method_override_(trust_method_override) {
  status_ = Compile(allow, "allow", allow_);
  if (status_.ok()) status_ = Compile(deny, "deny", deny_);
}

Result<ForkEligibility> ForkEligibility::Create(const std::vector<std::string>& allow,
                                                const std::vector<std::string>& deny,
                                                bool trust_method_override) {
  ForkEligibility eligibility(allow, deny, trust_method_override);
  if (!eligibility.status().ok()) return eligibility.status();
  return eligibility;
}

bool ForkEligibility::IsSafeMethod(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS" || method == "TRACE";
}

bool ForkEligibility::MatchesAny(const std::vector<std::shared_ptr<const re2::RE2>>& patterns,
                                 std::string_view target) {
  for (const auto& re : patterns) {
    if (RE2::FullMatch(target, *re)) return true;
  }
  return false;
}

bool ForkEligibility::Eligible(std::string_view method, std::string_view target,
                               std::optional<std::string_view> method_override) const {
  if (!status_.ok()) return false;
  bool safe;
  if (trust_method_override_) {
    safe = IsSafeMethod(method_override ? TrimOws(*method_override) : method);
  } else {
    safe = IsSafeMethod(method) && (!method_override || IsSafeMethod(TrimOws(*method_override)));
  }
  if (!safe && !MatchesAny(allow_, target)) return false;
  return !MatchesAny(deny_, target);
}

std::optional<std::string_view> ForkEligibility::MethodOverride(
    std::span<const http::Header> headers) {
  for (std::string_view name : kMethodOverrides) {
    if (auto value = http::FindHeader(headers, name)) return value;
  }
  return std::nullopt;
}

bool ForkEligibility::Eligible(const http::RequestHead& head) const {
  return Eligible(head.method, head.target, MethodOverride(head.headers));
}

}  // namespace hammer::dark
