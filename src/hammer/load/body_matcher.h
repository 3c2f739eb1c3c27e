// BodyMatcher: does a response body match --error-pattern, even when the match straddles two
// reads? (The seed mapper tested curl's whole body against
// /(unexpected error|something went wrong|Api::Error)/i.)
//
// RE2 cannot resume a match across buffers, so each piece is searched on its own (zero copy)
// and the seam between pieces is searched in a small window holding the last kSeamBytes of
// the previous piece and the first kSeamBytes of the next. Matches up to kSeamBytes long are
// therefore found wherever they fall. The compiled pattern is shared (RE2 is thread-safe);
// a BodyMatcher holds per-response state and belongs to one thread.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer::load {

inline constexpr std::string_view kSeedErrorPattern =
    "(unexpected error|something went wrong|Api::Error)";

// A compiled, case-insensitive pattern.
Result<std::shared_ptr<const re2::RE2>> CompileErrorPattern(std::string_view pattern);

class BodyMatcher {
 public:
  static constexpr size_t kSeamBytes = 1024;

  explicit BodyMatcher(const re2::RE2* pattern) : pattern_(pattern) {}
  void Reset() {
    matched_ = false;
    tail_.clear();
  }
  void Feed(std::string_view piece);
  bool matched() const { return matched_; }

 private:
  const re2::RE2* pattern_;
  bool matched_ = false;
  std::string tail_;    // last bytes of the previous piece (<= kSeamBytes)
  std::string window_;  // scratch for the seam search
};

}  // namespace hammer::load
