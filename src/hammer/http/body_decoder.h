// BodyDecoder: removes the framing from an HTTP/1.x message body (RFC 9112 §6, §7.1) for
// ResponseParser and RequestParser, so both share one implementation of Content-Length,
// chunked and close-delimited bodies.
//
// Internal to hammer/http. Zero-copy: body pieces are views into the input. A chunk-size line
// or trailer line is consumed only once complete; until then Decode stops at its first byte
// (the caller keeps it and appends more input) and remembers how far it has searched for the
// line end. Trailer fields go to the visitor's OnTrailer when it has one (views into the
// input). Errors: kBadChunk, kChunkLineTooLong, kBadHeader (malformed trailer field),
// kHeadTooLarge and kTooManyHeaders (a trailer section over Limits::max_head_bytes or
// max_headers: it is bounded like a head), kBodyTooLarge (more than Limits::max_body_bytes of
// body). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hammer/http/message.h"

namespace hammer::http::internal {

class BodyDecoder {
 public:
  explicit BodyDecoder(const Limits& limits)
      : max_line_bytes_(limits.max_line_bytes),
        max_trailer_bytes_(limits.max_head_bytes),
        max_trailers_(limits.max_headers),
        max_body_bytes_(limits.max_body_bytes) {}

  // Starts a new body. kNone, and kContentLength with length 0, are done at once. Returns
  // kBodyTooLarge if a Content-Length exceeds the body cap, else kNone.
  ParseError Start(BodyFraming framing, uint64_t content_length);

  // Decodes the body from input[offset...], passing each piece to visitor.OnBody as it is
  // found. `consumed` in the result counts from the start of `input` (offset included).
  template <typename Visitor>
  Progress Decode(std::string_view input, size_t offset, Visitor& visitor) {
    while (true) {
      Step step = Next(input.substr(offset));
      offset += step.consumed;
      if (!step.data.empty()) visitor.OnBody(step.data);
      if constexpr (requires { visitor.OnTrailer(step.trailer); }) {
        if (!step.trailer.name.empty()) visitor.OnTrailer(step.trailer);
      }
      if (step.error != ParseError::kNone) return {offset, Progress::State::kError, step.error};
      if (done()) return {offset, Progress::State::kComplete, ParseError::kNone};
      if (step.consumed == 0) return {offset, Progress::State::kNeedMore, ParseError::kNone};
    }
  }

  BodyFraming framing() const { return framing_; }
  bool done() const { return phase_ == Phase::kDone; }

 private:
  enum class Phase : uint8_t {
    kLength,        // Content-Length body
    kUntilClose,    // body ends when the connection does
    kChunkSize,     // expecting a chunk-size line
    kChunkData,     // inside chunk data
    kChunkDataEnd,  // expecting the line ending after chunk data
    kTrailers,      // after the last chunk: trailer lines until an empty line
    kDone,
  };

  // One step of decoding: consumes input up to and including at most one piece of body data.
  struct Step {
    size_t consumed = 0;
    std::string_view data;  // body bytes found by this step; a view into the input
    ParseError error = ParseError::kNone;
    Header trailer = {};  // a trailer field found by this step (empty name: none)
  };
  Step Next(std::string_view input);
  Step TakeData(std::string_view input, size_t offset);

  size_t max_line_bytes_;
  size_t max_trailer_bytes_;  // the trailer section is bounded like a head
  size_t max_trailers_;
  uint64_t max_body_bytes_;
  BodyFraming framing_ = BodyFraming::kNone;
  Phase phase_ = Phase::kDone;
  uint64_t remaining_ = 0;    // bytes left in the Content-Length body or the current chunk
  uint64_t body_bytes_ = 0;   // body bytes seen so far, for the body cap
  size_t line_scanned_ = 0;   // bytes of a pending size/trailer line already searched for LF
  size_t trailer_bytes_ = 0;  // of the trailer section's lines so far
  size_t trailers_ = 0;
};

}  // namespace hammer::http::internal
