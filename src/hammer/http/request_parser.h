// RequestParser: the server-side twin of ResponseParser (used by `hammer serve` and by the
// dark proxy's listener). Same contract: resumable, zero-copy, caps on every size.
//
// A request without Content-Length or Transfer-Encoding has no body. A request carrying both
// is rejected (kBadTransferEncoding), which closes the request-smuggling hole. The proxy maps
// kHeadTooLarge / kTooManyHeaders to 431 and kBodyTooLarge to 413. Not thread-safe.
#pragma once

#include <vector>

#include "hammer/http/message.h"

namespace hammer::http {

class RequestParser {
 public:
  class Visitor {
   public:
    virtual ~Visitor() = default;
    virtual void OnHead(const RequestHead& head) = 0;
    virtual void OnBody(std::string_view data) = 0;
  };

  explicit RequestParser(Limits limits = {});

  void Reset();
  Progress Feed(std::string_view input, Visitor& visitor);
  // The client closed: kComplete if between requests (nothing started), else kTruncated.
  Progress FinishAtEof();

  bool started() const { return started_; }
  bool head_done() const { return state_ != State::kHead; }

 private:
  enum class State : uint8_t {
    kHead,
    kBodyLength,
    kChunkSize,
    kChunkData,
    kChunkDataEnd,
    kTrailers,
    kDone,
  };

  Progress ParseHead(std::string_view input, Visitor& visitor);
  Progress ParseBody(std::string_view input, size_t offset, Visitor& visitor);

  Limits limits_;
  State state_ = State::kHead;
  bool started_ = false;
  size_t scanned_ = 0;
  uint64_t remaining_ = 0;
  uint64_t body_seen_ = 0;
  size_t line_bytes_ = 0;
  std::vector<Header> headers_;
};

}  // namespace hammer::http
