// ParserCore: the half of an HTTP/1.x message parser that does not care whether the message
// is a request or a response. It holds the message's progress (head, body, done), the sticky
// error, the resumable head scan, the reused header storage and the body decoder;
// ResponseParser and RequestParser add only their start line and framing rules on top.
//
// Internal to hammer/http. Never allocates after construction unless a head carries more than
// 256 header fields (then once, the vector keeps its capacity). Not thread-safe.
#pragma once

#include <cassert>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "hammer/http/body_decoder.h"
#include "hammer/http/head_scanner.h"
#include "hammer/http/message.h"

namespace hammer::http::internal {

class ParserCore {
 public:
  explicit ParserCore(const Limits& limits);

  // Forgets the current message (and any error) and waits for a new head.
  void Reset();

  const Limits& limits() const { return limits_; }
  // True while the head is incomplete and nothing has failed: the caller parses the head;
  // otherwise it calls Continue.
  bool in_head() const { return state_ == State::kHead && error_ == ParseError::kNone; }
  bool head_done() const { return state_ != State::kHead; }
  bool started() const { return started_; }
  void MarkStarted() { started_ = true; }

  // Looks for a complete head at the start of `pending`, resuming where the last call on the
  // same pending bytes stopped. kHeadTooLarge is reported as soon as the cap is exceeded.
  HeadScan ScanHead(std::string_view pending) {
    return internal::ScanHead(pending, limits_.max_head_bytes, &scanned_);
  }
  // The first `bytes` pending bytes were consumed without being part of a head (interim
  // responses, empty lines before a request line); keeps the resumed scan position valid.
  void DropPending(size_t bytes) { scanned_ = scanned_ > bytes ? scanned_ - bytes : 0; }
  // Parses the header fields of the head found by ScanHead into the reused storage.
  ParseError ParseFields(std::string_view field_lines, FieldFacts* facts) {
    return ParseFieldLines(field_lines, limits_.max_headers, &headers_, facts);
  }
  std::span<const Header> headers() const { return headers_; }

  // The head was accepted and delivered next; the body, framed as given, follows. Returns
  // kBodyTooLarge if a Content-Length exceeds Limits::max_body_bytes (the caller then Fails).
  ParseError StartBody(BodyFraming framing, uint64_t content_length);

  // Continues after the head: decodes body bytes from input[offset...] into visitor.OnBody;
  // once the message is done reports kComplete, once failed the sticky error.
  template <typename Visitor>
  Progress Continue(std::string_view input, size_t offset, Visitor& visitor) {
    if (error_ != ParseError::kNone) return {offset, Progress::State::kError, error_};
    if (state_ == State::kDone) return {offset, Progress::State::kComplete, ParseError::kNone};
    assert(state_ == State::kBody);
    return AfterBody(body_.Decode(input, offset, visitor));
  }

  // Records `error` (sticky until Reset) and reports it with `consumed` bytes used.
  Progress Fail(ParseError error, size_t consumed);

  // The peer closed the connection. A close-delimited body completes; so does an idle
  // connection when `idle_is_complete`; anything else is kTruncated.
  Progress FinishAtEof(bool idle_is_complete);

 private:
  enum class State : uint8_t {
    kHead,  // waiting for a complete head
    kBody,  // body_ is decoding the body
    kDone,  // the message ended; kComplete until Reset
  };

  Progress AfterBody(Progress progress);

  Limits limits_;
  State state_ = State::kHead;
  ParseError error_ = ParseError::kNone;
  bool started_ = false;
  size_t scanned_ = 0;  // bytes of the pending head already searched for its end
  BodyDecoder body_;
  std::vector<Header> headers_;
};

}  // namespace hammer::http::internal
