// ResponseParser: a resumable, zero-copy HTTP/1.x response parser.
//
// Written by hand (not llhttp/picohttpparser, which Debian does not package as -dev) because it
// is the load generator's hot path: it never allocates per message, never copies body bytes and
// hands out views into the caller's buffer. It is fuzzed (tests/fuzz/response_parser_fuzz.cc).
//
// Usage, per connection:
//   parser.Reset(/*no_body=*/method == "HEAD");
//   loop: append bytes read from the socket to `buf`;
//         Progress p = parser.Feed(buf_unconsumed, visitor);  drop p.consumed bytes from buf;
//         kComplete -> response done, leftover bytes belong to the next response;
//         kError -> close the connection.
//   on EOF: parser.FinishAtEof(visitor) completes a close-delimited body or reports kTruncated.
//
// The head is consumed only once it is complete: until then Feed returns kNeedMore with
// consumed == 0 and the caller keeps the bytes; the parser remembers how far it already
// scanned, so feeding a growing head byte by byte costs O(n) overall. Body bytes are consumed
// (and passed to OnBody) as they arrive; chunked framing is removed. Interim 1xx responses
// (other than 101) are skipped. Not thread-safe; one parser per connection.
#pragma once

#include <vector>

#include "hammer/http/message.h"

namespace hammer::http {

class ResponseParser {
 public:
  class Visitor {
   public:
    virtual ~Visitor() = default;
    // The final response head. Views are valid only during the call.
    virtual void OnHead(const ResponseHead& head) = 0;
    // A piece of the (de-chunked) body; a view into the input passed to Feed.
    virtual void OnBody(std::string_view data) = 0;
  };

  explicit ResponseParser(Limits limits = {});

  // Prepares for the next response. `no_body` is true when the request was HEAD (the response
  // then has no body whatever its headers say).
  void Reset(bool no_body = false);

  Progress Feed(std::string_view input, Visitor& visitor);

  // The peer closed the connection. Completes a close-delimited body (kComplete); if nothing of
  // this response has arrived yet or it is cut short, returns kError with kTruncated.
  Progress FinishAtEof(Visitor& visitor);

  // True once any byte of the current response has been seen (consumed or pending). Lets a
  // client tell "server closed an idle keep-alive connection" from "response cut short".
  bool started() const { return started_; }
  // True once OnHead has been delivered for the current response.
  bool head_done() const { return state_ != State::kHead; }

 private:
  enum class State : uint8_t {
    kHead,
    kBodyLength,
    kBodyUntilClose,
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
  bool no_body_ = false;
  bool started_ = false;
  size_t scanned_ = 0;           // bytes of a pending head already searched for the terminator
  uint64_t remaining_ = 0;       // body or chunk bytes still expected
  size_t line_bytes_ = 0;        // length of a pending chunk-size / trailer line
  std::vector<Header> headers_;  // reused storage, capacity limits_.max_headers
};

}  // namespace hammer::http
