#include "hammer/http/request_parser.h"

#include "hammer/http/head_scanner.h"

namespace hammer::http {
namespace {

using internal::FieldFacts;

// RFC 9112 §2.2: a server SHOULD ignore empty lines before a request line; some clients send
// a stray CRLF after a request body. Returns the number of such bytes at the start of input.
size_t SkipEmptyLines(std::string_view input) {
  size_t i = 0;
  while (true) {
    if (i < input.size() && input[i] == '\n') {
      i += 1;
    } else if (i + 1 < input.size() && input[i] == '\r' && input[i + 1] == '\n') {
      i += 2;
    } else {
      return i;
    }
  }
}

// "METHOD SP request-target SP HTTP/1.x" (RFC 9112 §3).
ParseError ParseRequestLine(std::string_view line, RequestHead* head) {
  size_t first = line.find(' ');
  if (first == std::string_view::npos) return ParseError::kBadStartLine;
  size_t second = line.find(' ', first + 1);
  if (second == std::string_view::npos) return ParseError::kBadStartLine;
  std::string_view method = line.substr(0, first);
  std::string_view target = line.substr(first + 1, second - first - 1);
  if (!internal::IsToken(method) || target.empty()) return ParseError::kBadStartLine;
  for (char c : target) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) return ParseError::kBadStartLine;
  }
  head->method = method;
  head->target = target;
  return internal::ParseHttpVersion(line.substr(second + 1), &head->minor_version);
}

// RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without Host, and to any
// request with more than one Host line or an invalid Host value. Two Hosts are how a client
// gets one server to route on the first and another on the second.
ParseError CheckHost(const FieldFacts& facts, int minor_version) {
  if (facts.host_fields > 1 || facts.host_invalid) return ParseError::kBadHost;
  if (facts.host_fields == 0 && minor_version == 1) return ParseError::kBadHost;
  return ParseError::kNone;
}

// RFC 9112 §6.3 for requests. The only transfer coding accepted is a single "chunked" (RFC
// 9112 §6.1: a server that does not understand a coding answers 501; nginx does the same), so
// "gzip, chunked" is refused rather than forwarded with its gzip silently dropped. A malformed
// list, or Transfer-Encoding together with Content-Length, is 400: a server and a proxy that
// disagree on which framing wins is request smuggling.
ParseError DecideFraming(const FieldFacts& facts, RequestHead* head) {
  head->keep_alive = facts.KeepAlive(head->minor_version);
  head->expect_continue = facts.expect_continue && head->minor_version == 1;  // RFC 9110 §10.1.1
  if (facts.has_transfer_encoding) {
    if (facts.has_content_length || facts.transfer_coding_malformed) {
      return ParseError::kBadTransferEncoding;
    }
    if (facts.transfer_codings != 1 || !facts.chunked) {
      return ParseError::kUnsupportedTransferCoding;
    }
    head->framing = BodyFraming::kChunked;
  } else if (facts.has_content_length) {
    head->framing = BodyFraming::kContentLength;
    head->content_length = facts.content_length;
  } else {
    head->framing = BodyFraming::kNone;
  }
  return ParseError::kNone;
}

}  // namespace

RequestParser::RequestParser(Limits limits) : core_(limits) {}

void RequestParser::Reset() {
  core_.Reset();
}

Progress RequestParser::Feed(std::string_view input, Visitor& visitor) {
  return core_.in_head() ? ParseHead(input, visitor) : core_.Continue(input, 0, visitor);
}

Progress RequestParser::FinishAtEof() {
  return core_.FinishAtEof(/*idle_is_complete=*/true);
}

Progress RequestParser::ParseHead(std::string_view input, Visitor& visitor) {
  size_t offset = SkipEmptyLines(input);
  core_.DropPending(offset);
  std::string_view pending = input.substr(offset);
  // A lone CR may still turn out to be an ignorable empty line.
  if (pending.size() > 1 || (pending.size() == 1 && pending[0] != '\r')) core_.MarkStarted();
  internal::HeadScan scan = core_.ScanHead(pending);
  if (scan.error != ParseError::kNone) return core_.Fail(scan.error, offset);
  if (scan.length == 0) return {offset, Progress::State::kNeedMore, ParseError::kNone};

  RequestHead head;
  FieldFacts facts;
  ParseError error = ParseRequestLine(scan.start_line, &head);
  if (error == ParseError::kNone) error = core_.ParseFields(scan.field_lines, &facts);
  if (error == ParseError::kNone) error = CheckHost(facts, head.minor_version);
  if (error == ParseError::kNone) error = DecideFraming(facts, &head);
  if (error == ParseError::kNone) error = core_.StartBody(head.framing, head.content_length);
  if (error != ParseError::kNone) return core_.Fail(error, offset);
  offset += scan.length;
  head.headers = core_.headers();
  visitor.OnHead(head);
  return core_.Continue(input, offset, visitor);
}

}  // namespace hammer::http
