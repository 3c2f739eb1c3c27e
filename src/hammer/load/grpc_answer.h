// gRPC unary calls as load: which requests are gRPC calls, and how the answer to one is judged.
//
// The wire format is gRPC over HTTP/2 (http/grpc_wire.h).
//
// GrpcAnswer follows one answer as the HTTP client delivers it (head, body pieces, trailers)
// and judges the call once it has ended. The HTTP status is judged before it (a 4xx or 5xx is
// http_4xx / http_5xx, as for any request); what GrpcAnswer decides is:
//   - grpc-status 0 and a body of whole length-prefixed messages: success;
//   - a non-zero grpc-status: Failure::kGrpcStatus, detail "grpc-status 14 UNAVAILABLE: <the
//     percent-decoded grpc-message, at most kMaxMessageBytes of it>";
//   - no grpc-status, a grpc-status that is not 1 to 10 digits, or a body that is not whole
//     messages (cut inside one, or a flag byte other than 0/1): Failure::kProtocol, with a
//     detail saying which.
// A value; not thread-safe (one per RequestSlot, on its loop). Views passed in are copied.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/base/failure.h"
#include "hammer/http/grpc_wire.h"
#include "hammer/http/message.h"
#include "hammer/http/request_writer.h"

namespace hammer::load {

// Whether `headers` make a gRPC call (a gRPC Content-Type, http/grpc_wire.h).
bool IsGrpcRequest(const http::HeaderList& headers);

// gRPC calls answered, by grpc-status: ghz's "status code distribution". A mergeable value.
struct GrpcStatusCounts {
  // by_code[c] for codes 0..16; by_code[http::kGrpcStatusCodes] for any larger code.
  std::array<uint64_t, http::kGrpcStatusCodes + 1> by_code{};

  void Record(uint32_t code) {
    ++by_code[code < http::kGrpcStatusCodes ? code : http::kGrpcStatusCodes];
  }
  void Merge(const GrpcStatusCounts& other) {
    for (size_t i = 0; i < by_code.size(); ++i)
      by_code[i] += other.by_code[i];
  }
  uint64_t total() const;
  // (name, count) for every code counted, in code order; larger codes are "other".
  std::vector<std::pair<std::string_view, uint64_t>> Counted() const;
};

struct GrpcFailure {
  Failure type;
  std::string detail;
};

class GrpcAnswer {
 public:
  static constexpr size_t kMaxMessageBytes = 256;  // of grpc-message, in a failure's detail

  void Reset() { *this = GrpcAnswer(); }
  // The response head (or the whole of a Trailers-Only answer).
  void OnHead(std::span<const http::Header> headers) { KeepStatus(headers); }
  void OnBody(std::string_view data) { messages_.Feed(data); }
  void OnTrailers(std::span<const http::Header> trailers) { KeepStatus(trailers); }

  // The grpc-status received, when one came and is a number.
  std::optional<uint32_t> status() const;
  // Once the answer has ended: the call's failure, or nothing when it succeeded.
  std::optional<GrpcFailure> Judge() const;

 private:
  void KeepStatus(std::span<const http::Header> fields);

  std::optional<std::string> status_;  // grpc-status as received
  std::string message_;                // grpc-message as received (percent-encoded)
  http::GrpcMessageReader messages_;
};

}  // namespace hammer::load
