#include "hammer/load/body_matcher.h"

namespace hammer::load {

Result<std::shared_ptr<const re2::RE2>> CompileErrorPattern(std::string_view pattern) {
  re2::RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  options.set_never_capture(true);
  auto re =
      std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    return Status::Error("invalid --error-pattern '" + std::string(pattern) + "': " + re->error());
  }
  return re;
}

void BodyMatcher::Feed(std::string_view piece) {
  if (matched_ || pattern_ == nullptr || piece.empty()) return;
  if (!tail_.empty()) {
    window_.assign(tail_);
    window_.append(piece.substr(0, kSeamBytes));
    if (re2::RE2::PartialMatch(re2::StringPiece(window_.data(), window_.size()), *pattern_)) {
      matched_ = true;
      return;
    }
  }
  if (re2::RE2::PartialMatch(re2::StringPiece(piece.data(), piece.size()), *pattern_)) {
    matched_ = true;
    return;
  }
  if (piece.size() >= kSeamBytes) {
    tail_.assign(piece.substr(piece.size() - kSeamBytes));
  } else {
    tail_.append(piece);
    if (tail_.size() > kSeamBytes) tail_.erase(0, tail_.size() - kSeamBytes);
  }
}

}  // namespace hammer::load
