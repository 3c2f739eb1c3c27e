#include "hammer/dark/eligibility.h"

#include <fnmatch.h>
#include <re2/re2.h>

#include <utility>

#include "hammer/base/strings.h"
#include "hammer/http/grpc_wire.h"

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
                                 const std::vector<std::string>& deny, bool trust_method_override,
                                 std::vector<std::string> grpc_methods)
    : trust_method_override_(trust_method_override), grpc_methods_(std::move(grpc_methods)) {
  status_ = Compile(allow, "allow", allow_);
  if (status_.ok()) status_ = Compile(deny, "deny", deny_);
  for (const std::string& glob : grpc_methods_) {
    if (status_.ok() && !glob.starts_with("/")) {
      status_ = Status::Error("--dark-grpc-methods \"" + glob +
                              "\": a gRPC method is a path, /package.Service/Method (e.g. "
                              "/shop.Catalog/Get*)");
    }
  }
}

Result<ForkEligibility> ForkEligibility::Create(const std::vector<std::string>& allow,
                                                const std::vector<std::string>& deny,
                                                bool trust_method_override,
                                                std::vector<std::string> grpc_methods) {
  ForkEligibility eligibility(allow, deny, trust_method_override, std::move(grpc_methods));
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

bool ForkEligibility::IsListedGrpcMethod(std::string_view path) const {
  const std::string text(path);
  for (const std::string& glob : grpc_methods_) {
    if (fnmatch(glob.c_str(), text.c_str(), 0) == 0) return true;
  }
  return false;
}

bool ForkEligibility::Eligible(const http::RequestHead& head) const {
  if (http::IsGrpc(head.headers)) {
    if (!status_.ok() || head.method != "POST") return false;
    const std::string_view path = head.target.substr(0, head.target.find('?'));
    if (!IsListedGrpcMethod(path) && !MatchesAny(allow_, head.target)) return false;
    return !MatchesAny(deny_, head.target);
  }
  return Eligible(head.method, head.target, MethodOverride(head.headers));
}

}  // namespace hammer::dark
