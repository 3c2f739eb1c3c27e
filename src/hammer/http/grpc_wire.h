// The gRPC wire format as hammer reads it (gRPC over HTTP/2, grpc/grpc doc/PROTOCOL-HTTP2.md),
// shared by `hammer load`'s calls, the HTTP/2 server and `hammer dark`:
//
//   Request  -> Request-Headers *Length-Prefixed-Message EOS
//               (content-type application/grpc[+format][;params], te: trailers)
//   Response -> (Response-Headers *Length-Prefixed-Message Trailers) / Trailers-Only
//   Status   -> "grpc-status" 1*DIGIT             0 is OK; the names are grpc's status codes
//                                                 (doc/statuscodes.md): 14 UNAVAILABLE, ...
//   Message  -> "grpc-message" Percent-Encoded     why, for a non-zero status
//
// A Trailers-Only answer carries grpc-status in its only HEADERS frame (the head); otherwise it
// comes in the trailers, which win when both carry one.
//
// GrpcMessageReader: a resumable reader of gRPC's length-prefixed messages, the body of every
// gRPC request and response:
//
//   Length-Prefixed-Message -> Compressed-Flag Message-Length Message
//   Compressed-Flag         -> 1 byte, 0 (not compressed) or 1 (compressed with grpc-encoding)
//   Message-Length          -> 4 bytes, unsigned big-endian
//   Message                 -> Message-Length bytes (a serialized protobuf, or any bytes)
//
// The body may arrive in pieces cut anywhere (Feed them in order). It is well-framed when it is
// zero or more whole messages: a flag byte other than 0 or 1 makes it malformed at once, and a
// body that ends inside a message is cut short (complete() is false). Messages are counted, not
// kept: memory is constant whatever the lengths claim. Not thread-safe; a value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/http/message.h"

namespace hammer::http {

// Whether a Content-Type makes a gRPC call or answer: application/grpc, alone or with a
// "+format" (application/grpc+proto, application/grpc+json) or parameters.
bool IsGrpcContentType(std::string_view content_type);
// The same for the Content-Type among `headers`.
bool IsGrpc(std::span<const Header> headers);

// The name of gRPC status `code` ("OK", "CANCELLED", ... "UNAUTHENTICATED"), "" beyond 16.
std::string_view GrpcStatusName(uint32_t code);
inline constexpr uint32_t kGrpcStatusCodes = 17;  // 0 (OK) to 16 (UNAUTHENTICATED)
inline constexpr uint32_t kGrpcUnavailable = 14;

// A grpc-status value: 1 to 10 digits that fit 32 bits, or nothing.
std::optional<uint32_t> ParseGrpcStatus(std::string_view value);
// The grpc-status among `fields` (the last one, as trailers after a head win), or nothing when
// none is there or it does not parse.
std::optional<uint32_t> GrpcStatusOf(std::span<const Header> fields);

// Whether a status is the server's fault, as a 5xx is: UNKNOWN, DEADLINE_EXCEEDED,
// UNIMPLEMENTED, INTERNAL, UNAVAILABLE and DATA_LOSS, the codes the common gRPC-to-HTTP mapping
// (grpc-gateway's HTTPStatusFromCode) answers with 500, 504, 501, 500, 503 and 500.
bool GrpcStatusIsServerError(uint32_t code);

// grpc-message's Percent-Encoded value decoded ("%20" -> ' '); a '%' not followed by two hex
// digits is kept as it is, as the protocol asks of receivers.
std::string PercentDecodeGrpcMessage(std::string_view value);

// `text` as grpc-message's Percent-Encoded value: bytes outside 0x20-0x7E, and '%', as %XX.
std::string PercentEncodeGrpcMessage(std::string_view text);

// A grpc-timeout value, 1 to 8 digits and a unit (H hours, M minutes, S seconds, m
// milliseconds, u microseconds, n nanoseconds), in nanoseconds (at most INT64_MAX / 2);
// nothing when malformed.
std::optional<int64_t> ParseGrpcTimeout(std::string_view value);

// The messages of a whole body (each without its prefix; views into `body`), or nothing when
// the body is not whole messages (cut inside one, or a flag byte other than 0 or 1). `compressed`
// (may be null) is set when any message has the compressed flag.
std::optional<std::vector<std::string_view>> SplitGrpcMessages(std::string_view body,
                                                               bool* compressed = nullptr);

class GrpcMessageReader {
 public:
  static constexpr size_t kPrefixBytes = 5;

  // Reads more of the body. After a malformed prefix, further bytes are ignored.
  void Feed(std::string_view data);
  // Forgets everything read: the next Feed starts a new body.
  void Reset() { *this = GrpcMessageReader(); }

  uint64_t messages() const { return messages_; }  // whole messages read so far
  bool malformed() const { return malformed_; }    // a flag byte was neither 0 nor 1
  // The body so far is whole messages (true for an empty body; false once malformed).
  bool complete() const { return !malformed_ && prefix_bytes_ == 0 && message_left_ == 0; }

 private:
  uint8_t prefix_[kPrefixBytes] = {};
  size_t prefix_bytes_ = 0;    // bytes of the current prefix read so far
  uint64_t message_left_ = 0;  // bytes of the current message still to come
  uint64_t messages_ = 0;
  bool malformed_ = false;
};

}  // namespace hammer::http
