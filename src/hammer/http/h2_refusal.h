// H2Refusal: why an HTTP/2 server session refused something a client sent. The server connection
// counts each under the server's Rejection of the same meaning (server_resources.h), so
// `hammer serve`'s stats and `hammer dark`'s /metrics show HTTP/1.1 and HTTP/2 refusals alike.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hammer::http {

enum class H2Refusal : uint8_t {
  kHeadTooLarge,   // 431: a head over the size or field-count limits (an HPACK bomb included)
  kBodyTooLarge,   // 413: a request body over the limit
  kBufferFull,     // REFUSED_STREAM: the connection's buffers were full
  kOverBudget,     // 503: the server's process-wide buffer budget was exhausted
  kRapidReset,     // GOAWAY ENHANCE_YOUR_CALM: most streams reset by the client before an answer
  kProtocolError,  // the session ended on a protocol error or a flood (nghttp2's checks)
};

inline constexpr size_t kH2RefusalCount = static_cast<size_t>(H2Refusal::kProtocolError) + 1;

inline constexpr std::array<std::string_view, kH2RefusalCount> kH2RefusalNames = {
    "head_too_large", "body_too_large", "buffer_full",
    "over_budget",    "rapid_reset",    "protocol_error"};

inline constexpr std::string_view H2RefusalName(H2Refusal refusal) {
  return kH2RefusalNames[static_cast<size_t>(refusal)];
}

}  // namespace hammer::http
