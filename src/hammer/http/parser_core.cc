#include "hammer/http/parser_core.h"

#include <algorithm>

namespace hammer::http::internal {

ParserCore::ParserCore(const Limits& limits) : limits_(limits), body_(limits) {
  // Enough for the common case, bounded so a huge max_headers does not reserve gigabytes.
  headers_.reserve(std::min<size_t>(limits_.max_headers, 256));
}

void ParserCore::Reset() {
  state_ = State::kHead;
  error_ = ParseError::kNone;
  started_ = false;
  scanned_ = 0;
  headers_.clear();
}

ParseError ParserCore::StartBody(BodyFraming framing, uint64_t content_length) {
  ParseError error = body_.Start(framing, content_length);
  if (error == ParseError::kNone) {
    state_ = State::kBody;
    scanned_ = 0;
  }
  return error;
}

Progress ParserCore::Fail(ParseError error, size_t consumed) {
  error_ = error;
  return {consumed, Progress::State::kError, error};
}

Progress ParserCore::FinishAtEof(bool idle_is_complete) {
  if (error_ != ParseError::kNone) return {0, Progress::State::kError, error_};
  if (state_ == State::kBody && body_.framing() == BodyFraming::kUntilClose) {
    state_ = State::kDone;
  }
  if (state_ == State::kDone || (state_ == State::kHead && !started_ && idle_is_complete)) {
    return {0, Progress::State::kComplete, ParseError::kNone};
  }
  return Fail(ParseError::kTruncated, 0);
}

Progress ParserCore::AfterBody(Progress progress) {
  if (progress.state == Progress::State::kComplete) state_ = State::kDone;
  if (progress.state == Progress::State::kError) error_ = progress.error;
  return progress;
}

}  // namespace hammer::http::internal
