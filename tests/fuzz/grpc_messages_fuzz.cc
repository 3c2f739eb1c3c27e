// libFuzzer target for GrpcMessageReader and SplitGrpcMessages, which read gRPC bodies (server
// and client input).
//
// Input layout: byte 0 is the piece size (1-256) the rest is fed in.
// Traps when: feeding the body in pieces gives another count, completeness or malformed verdict
// than feeding it whole; SplitGrpcMessages finds another verdict or count; a complete body's
// messages, re-read by a plain loop over the prefixes, differ in number.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hammer/http/grpc_wire.h"

namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = size_t{data[0]} + 1;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  hammer::http::GrpcMessageReader whole, pieces;
  whole.Feed(body);
  for (size_t at = 0; at < body.size(); at += piece)
    pieces.Feed(body.substr(at, piece));
  Check(whole.messages() == pieces.messages());
  Check(whole.complete() == pieces.complete());
  Check(whole.malformed() == pieces.malformed());
  // SplitGrpcMessages, which keeps the messages, agrees with the reader, which counts them.
  const auto split = hammer::http::SplitGrpcMessages(body);
  Check(split.has_value() == whole.complete());
  if (split) Check(split->size() == whole.messages());
  if (whole.complete()) {
    uint64_t count = 0;
    size_t at = 0;
    while (at < body.size()) {
      Check(body.size() - at >= 5 && static_cast<uint8_t>(body[at]) <= 1);
      const uint64_t length = uint64_t{static_cast<uint8_t>(body[at + 1])} << 24 |
                              uint64_t{static_cast<uint8_t>(body[at + 2])} << 16 |
                              uint64_t{static_cast<uint8_t>(body[at + 3])} << 8 |
                              uint64_t{static_cast<uint8_t>(body[at + 4])};
      Check(body.size() - at - 5 >= length);
      at += 5 + length;
      ++count;
    }
    Check(count == whole.messages());
  }
  return 0;
}
