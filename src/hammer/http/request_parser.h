// RequestParser: the server-side twin of ResponseParser (used by `hammer serve` and by the
// dark proxy's listener). Same contract: resumable, zero-copy, caps on every size.
//
// A request without Content-Length or Transfer-Encoding has no body. A request carrying both
// is rejected (kBadTransferEncoding), which closes the request-smuggling hole, and so is a
// malformed coding list; a well-formed list other than exactly "chunked" is
// kUnsupportedTransferCoding. Duplicate Host lines, an invalid Host value, and an HTTP/1.1
// request without Host are kBadHost. Servers map kUnsupportedTransferCoding to 501,
// kHeadTooLarge / kTooManyHeaders to 431, kBodyTooLarge to 413, anything else to 400: a
// Content-Length over the cap fails at head time (before OnHead), a chunked body as soon as a
// chunk-size line would take it past the cap. Empty lines before a request line are ignored (RFC
// 9112 §2.2) and do not count as started(). "Expect: 100-continue" is honoured for HTTP/1.1 only.
// Errors are sticky until Reset. Not thread-safe.
#pragma once

#include "hammer/http/message.h"
#include "hammer/http/parser_core.h"

namespace hammer::http {

class RequestParser {
 public:
  class Visitor {
   public:
    virtual ~Visitor() = default;
    virtual void OnHead(const RequestHead& head) = 0;
    virtual void OnBody(std::string_view data) = 0;
    // A trailer field of a chunked body (RFC 9112 §7.1.2), checked for syntax; a view into
    // the input passed to Feed.
    virtual void OnTrailer(const Header& /*trailer*/) {}
  };

  explicit RequestParser(Limits limits = {});

  void Reset();
  Progress Feed(std::string_view input, Visitor& visitor);
  // The client closed: kComplete if between requests (nothing started), else kTruncated.
  Progress FinishAtEof();

  bool started() const { return core_.started(); }
  bool head_done() const { return core_.head_done(); }

 private:
  Progress ParseHead(std::string_view input, Visitor& visitor);

  internal::ParserCore core_;  // message progress, sticky error, header storage, body
};

}  // namespace hammer::http
