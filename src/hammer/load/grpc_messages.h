// GrpcMessageReader: a resumable reader of gRPC's length-prefixed messages, the body of every
// gRPC request and response (gRPC over HTTP/2, grpc/grpc doc/PROTOCOL-HTTP2.md):
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
#include <string_view>

namespace hammer::load {

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

}  // namespace hammer::load
