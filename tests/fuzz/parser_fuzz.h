// The check both HTTP/1.x parser fuzz targets run on each input (see response_parser_fuzz.cc
// and request_parser_fuzz.cc). Inputs are plain byte streams, so seed files are readable HTTP
// messages; the split point and the option set are derived from a hash of the input.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when:
//   - a Feed consumes more than it was given, or another harness invariant breaks
//     (kNeedMore unstable, done/failed not sticky, two OnHead calls for one message);
//   - consumed bytes plus leftover bytes differ from the input size;
//   - feeding the input split at the chosen point, or one byte at a time, reports anything
//     different from feeding it whole (heads, bodies, outcomes, byte counts);
//   - a complete Content-Length body has another size than announced, a bodiless message
//     has a body, or a response completes without a head.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "../unit/http/parser_harness.h"

namespace hammer::http::fuzz {

inline uint64_t Fnv1a(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

inline void Require(bool ok) {
  if (!ok) __builtin_trap();
}

template <typename Parser>
void CheckStream(const uint8_t* data, size_t size) {
  std::string_view stream(reinterpret_cast<const char*>(data), size);
  uint64_t hash = Fnv1a(stream);
  harness::StreamOptions options;
  options.no_body = (hash & 1) != 0;
  if ((hash & 6) == 0) {  // one input in four runs with tiny caps, to reach every limit
    options.limits.max_head_bytes = 32 + (hash >> 8) % 96;
    options.limits.max_headers = 1 + (hash >> 16) % 4;
    options.limits.max_line_bytes = 1 + (hash >> 24) % 12;
    options.limits.max_body_bytes = (hash >> 32) % 40;
  }

  harness::StreamRun whole = harness::RunWhole<Parser>(stream, options);
  Require(whole.violation.empty());
  size_t accounted = whole.leftover.size();
  for (const harness::RecordedMessage& m : whole.messages) {
    accounted += m.consumed;
    bool complete = m.state == Progress::State::kComplete;
    if (complete && m.head.framing == BodyFraming::kContentLength) {
      Require(m.body.size() == m.head.content_length);
    }
    if (complete && m.head.framing == BodyFraming::kNone) Require(m.body.empty());
    // Only a request stream may end "complete" without a head: the client closed while idle.
    if (complete && m.heads == 0) {
      Require(std::is_same_v<Parser, RequestParser> && &m == &whole.messages.back());
    }
  }
  Require(accounted == stream.size());

  size_t at = stream.empty() ? 0 : (hash >> 40) % (stream.size() + 1);
  Require(harness::RunSplit<Parser>(stream, at, options) == whole);
  if (stream.size() <= 2048) Require(harness::RunBytewise<Parser>(stream, options) == whole);
}

}  // namespace hammer::http::fuzz
