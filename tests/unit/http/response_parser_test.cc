#include "hammer/http/response_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parser_checks.h"

namespace hammer::http {
namespace {

using harness::RecordedMessage;
using harness::StreamOptions;
using harness::StreamRun;
using State = Progress::State;

using Check = harness::ParserChecks<ResponseParser>;
using harness::WithLimits;

constexpr std::string_view kContentLength =
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello";
constexpr std::string_view kChunked =
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5;name=value\r\nhello\r\n6 ; x\r\n world\r\nA\r\n0123456789\r\n"
    "0\r\nX-Trailer: yes\r\nX-Other:\r\n\r\n";
constexpr std::string_view kUntilClose = "HTTP/1.0 200 OK\r\nServer: test\r\n\r\nbody until close";
constexpr std::string_view kBareLf =
    "HTTP/1.1 200 OK\nContent-Length: 3\n\nabcHTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n"
    "3\nxyz\n0\n\n";
constexpr std::string_view kInterim =
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
constexpr std::string_view kPipelined =
    "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n"
    "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: "
    "gzip, chunked\r\n\r\n1\r\nz\r\n0\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n"
    "Connection: close\r\n\r\nnope";

TEST(ResponseParserTest, ContentLength) {
  RecordedMessage m = Check::One(kContentLength);
  EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(m.heads, 1);
  EXPECT_EQ(m.head.minor_version, 1);
  EXPECT_EQ(m.head.status, 200);
  EXPECT_EQ(m.head.reason, "OK");
  using Fields = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(m.head.headers, (Fields{{"Content-Length", "5"}, {"Content-Type", "text/plain"}}));
  EXPECT_EQ(m.head.framing, BodyFraming::kContentLength);
  EXPECT_EQ(m.head.content_length, 5u);
  EXPECT_TRUE(m.head.keep_alive);
  EXPECT_EQ(m.body, "hello");
  EXPECT_EQ(m.consumed, kContentLength.size());
}

TEST(ResponseParserTest, ChunkedWithExtensionsAndTrailers) {
  StreamRun run = Check::Parse(kChunked);
  ASSERT_EQ(run.messages.size(), 1u);
  const RecordedMessage& m = run.messages[0];
  EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(m.head.framing, BodyFraming::kChunked);
  EXPECT_EQ(m.head.content_length, 0u);
  EXPECT_TRUE(m.head.keep_alive);
  EXPECT_EQ(m.body, "hello world0123456789");
  std::vector<std::pair<std::string, std::string>> trailers = {{"X-Trailer", "yes"},
                                                               {"X-Other", ""}};
  EXPECT_EQ(m.trailers, trailers);
  EXPECT_EQ(m.consumed, kChunked.size());
  EXPECT_EQ(run.leftover, "");
}

TEST(ResponseParserTest, UntilCloseCompletesAtEof) {
  ResponseParser parser;
  harness::Recorder<ResponseParser> recorder;
  Progress p = parser.Feed(kUntilClose, recorder);
  EXPECT_EQ(p.state, State::kNeedMore);
  EXPECT_EQ(p.consumed, kUntilClose.size());
  EXPECT_EQ(recorder.message.head.framing, BodyFraming::kUntilClose);
  EXPECT_FALSE(recorder.message.head.keep_alive);
  EXPECT_EQ(recorder.message.body, "body until close");
  p = parser.FinishAtEof(recorder);
  EXPECT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.consumed, 0u);
  // HTTP/1.1 without a length is close-delimited too, whatever Connection says.
  RecordedMessage m = Check::One("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\nxy");
  EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(m.head.framing, BodyFraming::kUntilClose);
  EXPECT_FALSE(m.head.keep_alive);
  EXPECT_EQ(m.body, "xy");
}

TEST(ResponseParserTest, BodyBytesAreViewsIntoTheInput) {
  struct Views : ResponseParser::Visitor {
    void OnHead(const ResponseHead&) override {}
    void OnBody(std::string_view data) override { pieces.push_back(data); }
    std::vector<std::string_view> pieces;
  } views;
  ResponseParser parser;
  std::string input(kChunked);
  Progress p = parser.Feed(input, views);
  ASSERT_EQ(p.state, State::kComplete);
  ASSERT_EQ(views.pieces.size(), 3u);
  for (std::string_view piece : views.pieces) {
    EXPECT_GE(piece.data(), input.data());
    EXPECT_LE(piece.data() + piece.size(), input.data() + input.size());
  }
  EXPECT_EQ(views.pieces[1], " world");
}

TEST(ResponseParserTest, ChunkDataArrivesInPieces) {
  ResponseParser parser;
  harness::Recorder<ResponseParser> recorder;
  std::string_view head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::string input = std::string(head) + "a\r\n01234";
  Progress p = parser.Feed(input, recorder);
  EXPECT_EQ(p.state, State::kNeedMore);
  EXPECT_EQ(p.consumed, input.size());
  EXPECT_EQ(recorder.message.body, "01234");
  p = parser.Feed("56789\r", recorder);
  EXPECT_EQ(p.state, State::kNeedMore);
  EXPECT_EQ(p.consumed, 5u);  // the CR waits: it may start the CRLF after the data
  EXPECT_EQ(recorder.message.body, "0123456789");
  p = parser.Feed("\r\n0\r\n\r\n", recorder);
  EXPECT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.consumed, 7u);
}

TEST(ResponseParserTest, NoBodyStatusesAndHead) {
  for (std::string_view status : {"204 No Content", "304 Not Modified"}) {
    std::string response = "HTTP/1.1 " + std::string(status) + "\r\nContent-Length: 10\r\n\r\n";
    StreamRun run = Check::Parse(response + "HTTP/1.1");
    ASSERT_EQ(run.messages.size(), 2u) << status;
    EXPECT_EQ(run.messages[0].state, State::kComplete);
    EXPECT_EQ(run.messages[0].head.framing, BodyFraming::kNone);
    EXPECT_TRUE(run.messages[0].head.keep_alive);
    EXPECT_EQ(run.messages[0].consumed, response.size());
    EXPECT_EQ(run.messages[1].error, ParseError::kTruncated);
  }
  StreamOptions head_request;
  head_request.no_body = true;
  for (std::string_view framing : {"Content-Length: 10", "Transfer-Encoding: chunked", "X: y"}) {
    std::string response = "HTTP/1.1 200 OK\r\n" + std::string(framing) + "\r\n\r\n";
    RecordedMessage m = Check::One(response, head_request);
    EXPECT_EQ(m.state, State::kComplete) << framing;
    EXPECT_EQ(m.head.framing, BodyFraming::kNone);
    EXPECT_TRUE(m.head.keep_alive);
    EXPECT_EQ(m.consumed, response.size());
  }
}

TEST(ResponseParserTest, InterimResponsesAreSkipped) {
  RecordedMessage m = Check::One(kInterim);
  EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(m.heads, 1);
  EXPECT_EQ(m.head.status, 200);
  EXPECT_EQ(m.body, "ok");
  EXPECT_EQ(m.consumed, kInterim.size());

  // An interim response alone is consumed; the parser waits for the final one.
  ResponseParser parser;
  harness::Recorder<ResponseParser> recorder;
  std::string_view interim = "HTTP/1.1 100 Continue\r\n\r\n";
  Progress p = parser.Feed(std::string(interim) + "HTTP/1.1 2", recorder);
  EXPECT_EQ(p.state, State::kNeedMore);
  EXPECT_EQ(p.consumed, interim.size());
  EXPECT_EQ(recorder.message.heads, 0);
  EXPECT_TRUE(parser.started());
  EXPECT_FALSE(parser.head_done());
  EXPECT_EQ(parser.FinishAtEof(recorder).error, ParseError::kTruncated);
}

TEST(ResponseParserTest, SwitchingProtocolsIsFinal) {
  std::string_view response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n";
  StreamOptions one;
  one.max_messages = 1;
  StreamRun run = Check::Parse(std::string(response) + "\x81\x05", one);
  ASSERT_EQ(run.messages.size(), 1u);
  EXPECT_EQ(run.leftover, "\x81\x05");
  EXPECT_EQ(run.messages[0].head.status, 101);
  EXPECT_EQ(run.messages[0].head.framing, BodyFraming::kNone);
  EXPECT_FALSE(run.messages[0].head.keep_alive);
  EXPECT_EQ(run.messages[0].consumed, response.size());
}

TEST(ResponseParserTest, KeepAliveRules) {
  auto keep_alive = [](std::string_view version, std::string_view connection) {
    std::string response = "HTTP/1." + std::string(version) + " 200 OK\r\nContent-Length: 0\r\n";
    if (!connection.empty()) response += "Connection: " + std::string(connection) + "\r\n";
    return Check::One(response + "\r\n").head.keep_alive;
  };
  EXPECT_TRUE(keep_alive("1", ""));
  EXPECT_FALSE(keep_alive("1", "close"));
  EXPECT_FALSE(keep_alive("1", "Upgrade, CLOSE"));
  EXPECT_TRUE(keep_alive("1", "closed, keep-alive"));
  EXPECT_FALSE(keep_alive("0", ""));
  EXPECT_TRUE(keep_alive("0", "Keep-Alive"));
  EXPECT_TRUE(keep_alive("0", " foo ,keep-alive "));
  EXPECT_FALSE(keep_alive("0", "keep-alive, close"));
  // Transfer-Encoding in an HTTP/1.0 message means faulty framing: close afterwards.
  RecordedMessage m = Check::One(
      "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(m.head.framing, BodyFraming::kChunked);
  EXPECT_FALSE(m.head.keep_alive);
}

TEST(ResponseParserTest, TransferEncoding) {
  auto framing = [](std::string_view fields) {
    return Check::One("HTTP/1.1 200 OK\r\n" + std::string(fields) + "\r\n0\r\n\r\n").head.framing;
  };
  EXPECT_EQ(framing("Transfer-Encoding: Chunked\r\n"), BodyFraming::kChunked);
  EXPECT_EQ(framing("Transfer-Encoding: gzip, chunked\r\n"), BodyFraming::kChunked);
  EXPECT_EQ(framing("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"),
            BodyFraming::kChunked);
  EXPECT_EQ(framing("Transfer-Encoding: chunked,\r\n"), BodyFraming::kChunked);
  EXPECT_EQ(framing("Transfer-Encoding: chunked, gzip\r\n"), BodyFraming::kUntilClose);
  EXPECT_EQ(framing("Transfer-Encoding: gzip\r\n"), BodyFraming::kUntilClose);
  // Transfer-Encoding overrides Content-Length in a response (RFC 9112 §6.3).
  RecordedMessage m = Check::One(
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n"
      "0\r\n\r\n");
  EXPECT_EQ(m.head.framing, BodyFraming::kChunked);
  EXPECT_EQ(m.body, "ab");
  m = Check::One("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nraw");
  EXPECT_FALSE(m.head.keep_alive);
  EXPECT_EQ(m.body, "raw");
}

TEST(ResponseParserTest, ContentLengthValues) {
  auto parse = [](std::string_view fields, std::string_view body) {
    return Check::One("HTTP/1.1 200 OK\r\n" + std::string(fields) + "\r\n" + std::string(body));
  };
  EXPECT_EQ(parse("Content-Length: 0\r\n", "").state, State::kComplete);
  // Identical repeated values, in one field or several, are one length.
  EXPECT_EQ(parse("Content-Length: 007\r\nContent-Length: 7\r\n", "1234567").body, "1234567");
  EXPECT_EQ(parse("Content-Length: 3, 3\r\n", "abc").body, "abc");
  RecordedMessage m = parse("Content-Length: 18446744073709551615\r\n", "");
  EXPECT_EQ(m.head.content_length, UINT64_MAX);
  EXPECT_EQ(m.error, ParseError::kTruncated);
  for (std::string_view value : {"3\r\nContent-Length: 4", "3, 4", "3,,3", "", "-1", "+1", "0x10",
                                 "1 2", "18446744073709551616", "99999999999999999999999"}) {
    EXPECT_EQ(
        Check::ErrorOf("HTTP/1.1 200 OK\r\nContent-Length: " + std::string(value) + "\r\n\r\n"),
        ParseError::kBadContentLength)
        << value;
  }
}

TEST(ResponseParserTest, StatusLine) {
  RecordedMessage m = Check::One("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(m.head.reason, "");
  m = Check::One("HTTP/1.0 999 Custom reason, with\ttab\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(m.head.status, 999);
  EXPECT_EQ(m.head.minor_version, 0);
  EXPECT_EQ(m.head.reason, "Custom reason, with\ttab");
  EXPECT_EQ(Check::One("HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n").head.reason, "");
  for (std::string_view line : {"HTTP/1.1 20 OK", "HTTP/1.1 099 Low", "HTTP/1.1 2000 OK",
                                "HTTP/1.1  200 OK", "HTTP/1.1 2x0 OK", "ICY 200 OK", "HTTP/1.1",
                                "http/1.1 200 OK", "", " HTTP/1.1 200 OK", "HTTP/1.1 200 O\x01K"}) {
    EXPECT_EQ(Check::ErrorOf(std::string(line) + "\r\n\r\n"), ParseError::kBadStartLine) << line;
  }
  for (std::string_view line : {"HTTP/2.0 200 OK", "HTTP/1.2 200 OK", "HTTP/0.9 200 OK",
                                "HTTP/1.10 200 OK", "HTTP/2 200"}) {
    EXPECT_EQ(Check::ErrorOf(std::string(line) + "\r\n\r\n"), ParseError::kBadVersion) << line;
  }
}

TEST(ResponseParserTest, HeaderFields) {
  RecordedMessage m = Check::One(
      "HTTP/1.1 200 OK\r\nX-Trim: \t value with  inner \t\r\nX-Empty:\r\nX-Bare:value\r\n"
      "X-Obs-Text: caf\xc3\xa9\r\n!#$%&'*+-.^_`|~09azAZ: token\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(m.state, State::kComplete);
  using Fields = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(m.head.headers, (Fields{{"X-Trim", "value with  inner"},
                                    {"X-Empty", ""},
                                    {"X-Bare", "value"},
                                    {"X-Obs-Text", "caf\xc3\xa9"},
                                    {"!#$%&'*+-.^_`|~09azAZ", "token"},
                                    {"Content-Length", "0"}}));
  for (std::string_view field :
       {"Name : value", "Name\t: value", "No colon", ": no name", " folded: value", "\tfolded",
        "Na me: value", "Name: a\x01z", "Name: a\rz", "Name: a\x7fz", "N\xc3\xa9: v"}) {
    EXPECT_EQ(Check::ErrorOf("HTTP/1.1 200 OK\r\nA: b\r\n" + std::string(field) + "\r\n\r\n"),
              ParseError::kBadHeader)
        << field;
  }
  // obs-fold right after the status line is rejected too.
  EXPECT_EQ(Check::ErrorOf("HTTP/1.1 200 OK\r\n folded\r\n\r\n"), ParseError::kBadHeader);
}

TEST(ResponseParserTest, HeadSizeLimit) {
  Limits limits;
  limits.max_head_bytes = 64;
  std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: ";
  head += std::string(64 - head.size() - 4, 'v') + "\r\n\r\n";
  ASSERT_EQ(head.size(), 64u);
  EXPECT_EQ(Check::One(head, WithLimits(limits)).state, State::kComplete);
  std::string longer = head;
  longer.insert(longer.size() - 4, "v");
  EXPECT_EQ(Check::ErrorOf(longer, WithLimits(limits)), ParseError::kHeadTooLarge);

  // Detected as soon as the pending bytes exceed the cap, before any terminator.
  ResponseParser parser(limits);
  harness::Recorder<ResponseParser> recorder;
  std::string partial(64, 'x');
  EXPECT_EQ(parser.Feed(partial, recorder).state, State::kNeedMore);
  partial += 'x';
  Progress p = parser.Feed(partial, recorder);
  EXPECT_EQ(p.state, State::kError);
  EXPECT_EQ(p.error, ParseError::kHeadTooLarge);
  EXPECT_EQ(p.consumed, 0u);
}

TEST(ResponseParserTest, HeaderCountLimit) {
  Limits limits;
  limits.max_headers = 2;
  std::string two = "HTTP/1.1 200 OK\r\nA: 1\r\nContent-Length: 0\r\n\r\n";
  EXPECT_EQ(Check::One(two, WithLimits(limits)).state, State::kComplete);
  EXPECT_EQ(Check::ErrorOf("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", WithLimits(limits)),
            ParseError::kTooManyHeaders);
}

TEST(ResponseParserTest, ChunkErrors) {
  std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  auto chunked = [&](std::string_view body) { return Check::One(head + std::string(body)); };
  RecordedMessage m = chunked("5\r\nhelloX0\r\n\r\n");
  EXPECT_EQ(m.error, ParseError::kBadChunk);
  EXPECT_EQ(m.body, "hello");
  EXPECT_EQ(m.consumed, head.size() + 8);
  for (std::string_view body :
       {"zz\r\n", "\r\n", " 5\r\nhello\r\n", "-5\r\n", "0x5\r\n", "5 5\r\n", "5;ext\x01\r\n",
        "5\rx\r\n", "5\r\nhello\rX", "10000000000000000\r\n"}) {
    EXPECT_EQ(chunked(body).error, ParseError::kBadChunk) << body;
  }
  // The largest size parses (the body is then cut short); leading zeros are fine.
  EXPECT_EQ(chunked("ffffffffffffffff\r\n").error, ParseError::kTruncated);
  EXPECT_EQ(chunked("00000000000000000002\r\nok\r\n0\r\n\r\n").body, "ok");
  EXPECT_EQ(chunked("2\r\nok\r\n0\r\nBad trailer\r\n\r\n").error, ParseError::kBadHeader);
}

TEST(ResponseParserTest, ChunkLineLimit) {
  Limits limits;
  limits.max_line_bytes = 8;
  std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  auto error = [&](std::string_view body) {
    return Check::One(head + std::string(body), WithLimits(limits)).error;
  };
  EXPECT_EQ(error("2;abcdef\r\nok\r\n0\r\n\r\n"), ParseError::kNone);  // 8 bytes: at the cap
  EXPECT_EQ(error("2;abcdefg\r\nok\r\n0\r\n\r\n"), ParseError::kChunkLineTooLong);
  EXPECT_EQ(error("0\r\nX: 12345\r\n\r\n"), ParseError::kNone);
  EXPECT_EQ(error("0\r\nX: 123456\r\n\r\n"), ParseError::kChunkLineTooLong);
  // Caught before the line ends.
  EXPECT_EQ(error("2;abcdefghijkl"), ParseError::kChunkLineTooLong);
  EXPECT_EQ(error("0\r\nX: 1234567890"), ParseError::kChunkLineTooLong);
  EXPECT_EQ(error("2;abcdefg\r"), ParseError::kChunkLineTooLong);
  EXPECT_EQ(error("2;abcdef\r"), ParseError::kTruncated);  // the CR may end the line
}

TEST(ResponseParserTest, BodyLimit) {
  Limits limits;
  limits.max_body_bytes = 4;
  EXPECT_EQ(Check::ErrorOf("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", WithLimits(limits)),
            ParseError::kBodyTooLarge);
  RecordedMessage m = Check::One("HTTP/1.1 200 OK\r\n\r\nhello", WithLimits(limits));
  EXPECT_EQ(m.error, ParseError::kBodyTooLarge);
  EXPECT_EQ(m.body, "hell");
  m = Check::One("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n",
                 WithLimits(limits));
  EXPECT_EQ(m.error, ParseError::kBodyTooLarge);
  EXPECT_EQ(m.body, "abc");
  EXPECT_EQ(
      Check::One("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nhell", WithLimits(limits)).state,
      State::kComplete);
}

TEST(ResponseParserTest, TruncatedAndStarted) {
  ResponseParser parser;
  harness::Recorder<ResponseParser> recorder;
  EXPECT_FALSE(parser.started());
  Progress p = parser.FinishAtEof(recorder);  // an idle keep-alive connection closed
  EXPECT_EQ(p.state, State::kError);
  EXPECT_EQ(p.error, ParseError::kTruncated);
  EXPECT_FALSE(parser.started());

  parser.Reset();
  EXPECT_EQ(parser.Feed("", recorder).state, State::kNeedMore);
  EXPECT_FALSE(parser.started());
  p = parser.Feed("H", recorder);
  EXPECT_EQ(p.consumed, 0u);
  EXPECT_TRUE(parser.started());
  EXPECT_FALSE(parser.head_done());
  EXPECT_EQ(parser.FinishAtEof(recorder).error, ParseError::kTruncated);

  for (std::string_view cut : {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel",
                               "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello",
                               "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"}) {
    RecordedMessage m = Check::One(cut);
    EXPECT_EQ(m.heads, 1) << cut;
    EXPECT_EQ(m.error, ParseError::kTruncated) << cut;
  }
}

TEST(ResponseParserTest, DoneAndFailedAreSticky) {
  ResponseParser parser;
  harness::Recorder<ResponseParser> recorder;
  std::string two = std::string(kContentLength) + std::string(kContentLength);
  Progress p = parser.Feed(two, recorder);
  EXPECT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.consumed, kContentLength.size());
  EXPECT_TRUE(parser.head_done());
  p = parser.Feed(std::string_view(two).substr(p.consumed), recorder);
  EXPECT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.consumed, 0u);
  EXPECT_EQ(recorder.message.heads, 1);

  parser.Reset();
  EXPECT_FALSE(parser.started());
  EXPECT_FALSE(parser.head_done());
  EXPECT_EQ(parser.Feed("NOT HTTP\r\n\r\n", recorder).error, ParseError::kBadStartLine);
  p = parser.Feed(kContentLength, recorder);
  EXPECT_EQ(p.error, ParseError::kBadStartLine);
  EXPECT_EQ(parser.FinishAtEof(recorder).error, ParseError::kBadStartLine);
  parser.Reset();
  EXPECT_EQ(parser.Feed(kContentLength, recorder).state, State::kComplete);
}

TEST(ResponseParserTest, PipelinedResponses) {
  StreamRun run = Check::Parse(kPipelined);
  ASSERT_EQ(run.messages.size(), 5u);
  EXPECT_EQ(run.messages[0].head.status, 204);
  EXPECT_EQ(run.messages[1].head.status, 304);
  EXPECT_EQ(run.messages[2].head.framing, BodyFraming::kContentLength);
  EXPECT_EQ(run.messages[2].body, "");
  EXPECT_EQ(run.messages[3].body, "z");
  EXPECT_EQ(run.messages[4].body, "nope");
  EXPECT_FALSE(run.messages[4].head.keep_alive);
  size_t total = 0;
  for (const RecordedMessage& m : run.messages) {
    EXPECT_EQ(m.state, State::kComplete);
    total += m.consumed;
  }
  EXPECT_EQ(total, kPipelined.size());
}

TEST(ResponseParserTest, EverySplitGivesTheSameResult) {
  for (std::string_view sample :
       {kContentLength, kChunked, kUntilClose, kBareLf, kInterim, kPipelined}) {
    SCOPED_TRACE(sample);
    Check::SplitInvariant(sample);
  }
  StreamOptions head_request;
  head_request.no_body = true;
  Check::SplitInvariant(kContentLength, head_request);
  // Errors and truncation are reported identically too.
  Check::SplitInvariant("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX0\r\n");
  Check::SplitInvariant("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort");
  Limits limits;
  limits.max_head_bytes = 40;
  limits.max_line_bytes = 4;
  Check::SplitInvariant(kContentLength, WithLimits(limits));
  Check::SplitInvariant("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;abcdef\r\n",
                        WithLimits(Limits{.max_line_bytes = 4}));
}

}  // namespace
}  // namespace hammer::http
