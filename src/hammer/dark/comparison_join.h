// ComparisonJoin: gathers the answers to one forked request — primary, dark and (with
// --compare-secondary) a second regular instance — and, once all expected answers are in, diffs
// them and records the result in the loop's ComparisonReport. Shared (shared_ptr) by the
// exchanges that carry the answers; never awaited by the client's response. Loop thread only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/dark/comparison_report.h"
#include "hammer/dark/json_diff.h"
#include "hammer/http/owned_headers.h"

namespace hammer::dark {

class ComparisonJoin {
 public:
  ComparisonJoin(ComparisonReport* report, JsonDiff* diff, std::string endpoint,
                 std::string request);

  void ExpectDark() { dark_expected_ = true; }
  void ExpectSecondary() { secondary_expected_ = true; }
  bool dark_expected() const { return dark_expected_; }

  void SetPrimary(int status, std::span<const http::Header> headers, std::string_view body,
                  int64_t micros);
  void SetDark(int status, std::span<const http::Header> headers, std::string_view body,
               int64_t micros);
  void SetSecondary(int status, std::span<const http::Header> headers, std::string_view body);
  void PrimaryFailed() { Failed(); }
  void DarkFailed() { Failed(); }
  void SecondaryFailed() { Failed(); }

 private:
  struct Answer {
    bool arrived = false;
    int status = 0;
    http::OwnedHeaders headers;
    std::string body;
    int64_t micros = -1;
  };
  void Store(Answer& answer, int status, std::span<const http::Header> headers,
             std::string_view body, int64_t micros);
  void Failed();
  void MaybeFinish();

  ComparisonReport* report_;
  JsonDiff* diff_;
  std::string endpoint_;
  std::string request_;
  bool dark_expected_ = false;
  bool secondary_expected_ = false;
  bool done_ = false;
  Answer primary_, dark_, secondary_;
};

}  // namespace hammer::dark
