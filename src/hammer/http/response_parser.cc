#include "hammer/http/response_parser.h"

#include "hammer/http/head_scanner.h"

namespace hammer::http {
namespace {

using internal::FieldFacts;

// "HTTP/1.x SSS[ reason]" (RFC 9112 §4). The reason may be absent or empty.
ParseError ParseStatusLine(std::string_view line, ResponseHead* head) {
  size_t space = line.find(' ');
  if (space == std::string_view::npos) return ParseError::kBadStartLine;
  ParseError error = internal::ParseHttpVersion(line.substr(0, space), &head->minor_version);
  if (error != ParseError::kNone) return error;
  std::string_view rest = line.substr(space + 1);
  if (rest.size() < 3 || rest[0] < '1' || rest[0] > '9' || rest[1] < '0' || rest[1] > '9' ||
      rest[2] < '0' || rest[2] > '9') {
    return ParseError::kBadStartLine;
  }
  head->status = (rest[0] - '0') * 100 + (rest[1] - '0') * 10 + (rest[2] - '0');
  if (rest.size() > 3) {
    if (rest[3] != ' ' || !internal::IsFieldText(rest.substr(4))) return ParseError::kBadStartLine;
    head->reason = rest.substr(4);
  }
  return ParseError::kNone;
}

// RFC 9112 §6.3, in order: responses that never have a body, then Transfer-Encoding (which
// overrides Content-Length), then Content-Length, then the connection's end.
void DecideFraming(const FieldFacts& facts, bool no_body, ResponseHead* head) {
  head->keep_alive = facts.KeepAlive(head->minor_version);
  if (no_body || head->status < 200 || head->status == 204 || head->status == 304) {
    head->framing = BodyFraming::kNone;
  } else if (facts.has_transfer_encoding) {
    head->framing = facts.chunked ? BodyFraming::kChunked : BodyFraming::kUntilClose;
  } else if (facts.has_content_length) {
    head->framing = BodyFraming::kContentLength;
    head->content_length = facts.content_length;
  } else {
    head->framing = BodyFraming::kUntilClose;
  }
  // After a close-delimited body, or a protocol switch, the connection is no longer HTTP/1.
  if (head->framing == BodyFraming::kUntilClose || head->status == 101) head->keep_alive = false;
}

}  // namespace

ResponseParser::ResponseParser(Limits limits) : core_(limits) {}

void ResponseParser::Reset(bool no_body, bool upgrade) {
  no_body_ = no_body;
  upgrade_ = upgrade;
  core_.Reset();
}

Progress ResponseParser::Feed(std::string_view input, Visitor& visitor) {
  return core_.in_head() ? ParseHead(input, visitor) : core_.Continue(input, 0, visitor);
}

Progress ResponseParser::FinishAtEof(Visitor& /*visitor*/) {
  return core_.FinishAtEof(/*idle_is_complete=*/false);
}

Progress ResponseParser::ParseHead(std::string_view input, Visitor& visitor) {
  size_t offset = 0;
  // Loops only to skip interim (1xx) responses that precede the final one.
  while (true) {
    std::string_view pending = input.substr(offset);
    if (!pending.empty()) core_.MarkStarted();
    internal::HeadScan scan = core_.ScanHead(pending);
    if (scan.error != ParseError::kNone) return core_.Fail(scan.error, offset);
    if (scan.length == 0) return {offset, Progress::State::kNeedMore, ParseError::kNone};

    ResponseHead head;
    FieldFacts facts;
    ParseError error = ParseStatusLine(scan.start_line, &head);
    if (error == ParseError::kNone) error = core_.ParseFields(scan.field_lines, &facts);
    if (error != ParseError::kNone) return core_.Fail(error, offset);
    if (head.status < 200 && head.status != 101) {
      head.headers = core_.headers();
      visitor.OnInterim(head);
      offset += scan.length;
      core_.DropPending(scan.length);
      continue;
    }
    DecideFraming(facts, no_body_, &head);
    if (upgrade_ && head.status == 101) head.framing = BodyFraming::kUntilClose;
    error = core_.StartBody(head.framing, head.content_length);
    if (error != ParseError::kNone) return core_.Fail(error, offset);
    offset += scan.length;
    head.headers = core_.headers();
    visitor.OnHead(head);
    return core_.Continue(input, offset, visitor);
  }
}

}  // namespace hammer::http
