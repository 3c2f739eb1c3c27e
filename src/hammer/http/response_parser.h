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
// (and passed to OnBody) as they arrive; chunked framing is removed, and a chunk-size or
// trailer line is held back (not consumed) the same way until it is complete. Trailer fields
// are checked for syntax and passed to OnTrailer. Interim 1xx responses (other than 101) are
// consumed and passed to OnInterim, never to OnHead. A 101 is final: no body, keep_alive false, and
// the bytes after its head belong to the new protocol. Limits::max_body_bytes applies to responses
// too (kBodyTooLarge; unlimited by default). After kError every call reports the same error until
// Reset. Not thread-safe; one parser per connection.
#pragma once

#include "hammer/http/message.h"
#include "hammer/http/parser_core.h"

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
    // A trailer field of a chunked body (RFC 9112 §7.1.2), checked for syntax; a view into
    // the input passed to Feed.
    virtual void OnTrailer(const Header& /*trailer*/) {}
    // An interim 1xx response (100 Continue, 103 Early Hints, ...) before the final one; views
    // valid during the call.
    virtual void OnInterim(const ResponseHead& /*head*/) {}
  };

  explicit ResponseParser(Limits limits = {});

  // Prepares for the next response. `no_body` is true when the request was HEAD (the response
  // then has no body whatever its headers say). `upgrade`: the request asked to switch
  // protocols, and a 101 is followed by the new protocol's bytes, passed on as a body that
  // ends with the connection.
  void Reset(bool no_body = false, bool upgrade = false);

  Progress Feed(std::string_view input, Visitor& visitor);

  // The peer closed the connection. Completes a close-delimited body (kComplete); if nothing of
  // this response has arrived yet or it is cut short, returns kError with kTruncated.
  Progress FinishAtEof(Visitor& visitor);

  // True once any byte of the current response has been seen (consumed or pending). Lets a
  // client tell "server closed an idle keep-alive connection" from "response cut short".
  bool started() const { return core_.started(); }
  // True once OnHead has been delivered for the current response.
  bool head_done() const { return core_.head_done(); }

 private:
  Progress ParseHead(std::string_view input, Visitor& visitor);

  bool no_body_ = false;
  bool upgrade_ = false;
  internal::ParserCore core_;  // message progress, sticky error, header storage, body
};

}  // namespace hammer::http
