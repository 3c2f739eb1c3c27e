// Test support for ResponseParser and RequestParser, shared by the unit tests and the fuzz
// targets (so it does not depend on GoogleTest).
//
// RunStream feeds a byte stream to a parser in the given pieces exactly as a real caller does:
// it keeps the bytes a Feed call did not consume, appends the next piece, resets the parser
// after each complete message (pipelining) and calls FinishAtEof when the input runs out. It
// copies everything the parser reported, so two runs over the same bytes split differently
// can be compared with ==, and it checks the invariants every caller relies on.
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hammer/http/message.h"
#include "hammer/http/request_parser.h"
#include "hammer/http/response_parser.h"

namespace hammer::http::harness {

// A copy of a ResponseHead or RequestHead (fields of the other kind stay at their defaults).
struct RecordedHead {
  int minor_version = -1;
  int status = 0;
  std::string reason;
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;
  BodyFraming framing = BodyFraming::kNone;
  uint64_t content_length = 0;
  bool keep_alive = false;
  bool expect_continue = false;
  bool operator==(const RecordedHead&) const = default;
};

// Everything reported for one message.
struct RecordedMessage {
  int heads = 0;  // OnHead calls (0 or 1)
  RecordedHead head;
  std::string body;                                           // OnBody pieces concatenated
  std::vector<std::pair<std::string, std::string>> trailers;  // OnTrailer calls (responses)
  Progress::State state = Progress::State::kNeedMore;
  ParseError error = ParseError::kNone;
  size_t consumed = 0;  // stream bytes consumed for this message
  bool operator==(const RecordedMessage&) const = default;
};

struct StreamRun {
  std::vector<RecordedMessage> messages;
  std::string leftover;   // bytes never consumed
  std::string violation;  // empty, or the invariant the parser broke
  bool operator==(const StreamRun&) const = default;
};

struct StreamOptions {
  Limits limits;
  bool no_body = false;      // responses: the request was HEAD
  size_t max_messages = 16;  // stop after this many complete messages
};

inline std::ostream& operator<<(std::ostream& os, const RecordedMessage& m) {
  os << "{heads=" << m.heads << " status=" << m.head.status << " method=" << m.head.method
     << " target=" << m.head.target << " minor=" << m.head.minor_version
     << " framing=" << static_cast<int>(m.head.framing) << " length=" << m.head.content_length
     << " keep_alive=" << m.head.keep_alive << " headers=" << m.head.headers.size() << " body=\""
     << m.body << "\" state=" << static_cast<int>(m.state) << " error=" << ParseErrorName(m.error)
     << " consumed=" << m.consumed << "}";
  return os;
}

inline std::ostream& operator<<(std::ostream& os, const StreamRun& run) {
  os << "{messages=[";
  for (const RecordedMessage& m : run.messages)
    os << m << " ";
  return os << "] leftover=\"" << run.leftover << "\" violation=\"" << run.violation << "\"}";
}

inline void Record(const ResponseHead& head, RecordedHead* out) {
  out->minor_version = head.minor_version;
  out->status = head.status;
  out->reason = head.reason;
  for (const Header& h : head.headers)
    out->headers.emplace_back(h.name, h.value);
  out->framing = head.framing;
  out->content_length = head.content_length;
  out->keep_alive = head.keep_alive;
}

inline void Record(const RequestHead& head, RecordedHead* out) {
  out->minor_version = head.minor_version;
  out->method = head.method;
  out->target = head.target;
  for (const Header& h : head.headers)
    out->headers.emplace_back(h.name, h.value);
  out->framing = head.framing;
  out->content_length = head.content_length;
  out->keep_alive = head.keep_alive;
  out->expect_continue = head.expect_continue;
}

template <typename Parser>
class Recorder final : public Parser::Visitor {
 public:
  using Head =
      std::conditional_t<std::is_same_v<Parser, ResponseParser>, ResponseHead, RequestHead>;

  void OnHead(const Head& head) override {
    ++message.heads;
    message.head = {};
    Record(head, &message.head);
  }
  void OnBody(std::string_view data) override { message.body.append(data); }
  void OnTrailer(const Header& trailer) override {
    message.trailers.emplace_back(std::string(trailer.name), std::string(trailer.value));
  }

  RecordedMessage message;
};

inline void ResetParser(ResponseParser& parser, bool no_body) {
  parser.Reset(no_body);
}
inline void ResetParser(RequestParser& parser, bool /*no_body*/) {
  parser.Reset();
}
inline Progress FinishParser(ResponseParser& parser, ResponseParser::Visitor& visitor) {
  return parser.FinishAtEof(visitor);
}
inline Progress FinishParser(RequestParser& parser, RequestParser::Visitor& /*visitor*/) {
  return parser.FinishAtEof();
}

template <typename Parser>
StreamRun RunStream(std::span<const std::string_view> all_pieces, const StreamOptions& options) {
  std::vector<std::string_view> pieces;
  for (std::string_view piece : all_pieces) {
    if (!piece.empty()) pieces.push_back(piece);
  }
  Parser parser(options.limits);
  Recorder<Parser> recorder;
  StreamRun run;
  std::string buffer;
  size_t next = 0;
  auto check = [&run](bool ok, const char* what) {
    if (!ok && run.violation.empty()) run.violation = what;
    return ok;
  };
  ResetParser(parser, options.no_body);
  while (true) {
    Progress p = parser.Feed(buffer, recorder);
    if (!check(p.consumed <= buffer.size(), "consumed more than the input")) break;
    buffer.erase(0, p.consumed);
    recorder.message.consumed += p.consumed;
    bool at_eof = false;
    if (p.state == Progress::State::kNeedMore) {
      Progress again = parser.Feed(buffer, recorder);
      check(again.state == Progress::State::kNeedMore && again.consumed == 0,
            "kNeedMore is not stable when fed the same bytes again");
      if (next < pieces.size()) {
        buffer.append(pieces[next++]);
        continue;
      }
      p = FinishParser(parser, recorder);
      at_eof = true;
      check(p.state != Progress::State::kNeedMore, "FinishAtEof returned kNeedMore");
    }
    recorder.message.state = p.state;
    recorder.message.error = p.error;
    check(recorder.message.heads <= 1, "OnHead called twice for one message");
    check((p.state == Progress::State::kError) == (p.error != ParseError::kNone),
          "error set without kError or kError without error");
    if (!at_eof) {
      // Done and failed are sticky until Reset.
      Progress again = parser.Feed(buffer, recorder);
      check(again.state == p.state && again.error == p.error && again.consumed == 0,
            "parser did not stay done/failed until Reset");
    }
    run.messages.push_back(std::move(recorder.message));
    recorder.message = {};
    if (at_eof || p.state != Progress::State::kComplete) break;
    if (run.messages.size() >= options.max_messages) break;
    if (buffer.empty() && next == pieces.size()) break;
    ResetParser(parser, options.no_body);
  }
  run.leftover = buffer;
  for (; next < pieces.size(); ++next)
    run.leftover.append(pieces[next]);
  return run;
}

template <typename Parser>
StreamRun RunWhole(std::string_view stream, const StreamOptions& options = {}) {
  std::string_view pieces[] = {stream};
  return RunStream<Parser>(pieces, options);
}

template <typename Parser>
StreamRun RunSplit(std::string_view stream, size_t at, const StreamOptions& options = {}) {
  std::string_view pieces[] = {stream.substr(0, at), stream.substr(at)};
  return RunStream<Parser>(pieces, options);
}

template <typename Parser>
StreamRun RunBytewise(std::string_view stream, const StreamOptions& options = {}) {
  std::vector<std::string_view> pieces;
  for (size_t i = 0; i < stream.size(); ++i)
    pieces.push_back(stream.substr(i, 1));
  return RunStream<Parser>(pieces, options);
}

}  // namespace hammer::http::harness
