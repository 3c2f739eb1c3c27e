#include "hammer/http/request_parser.h"

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
using Fields = std::vector<std::pair<std::string, std::string>>;
using namespace std::string_view_literals;

using Check = harness::ParserChecks<RequestParser>;
using harness::WithLimits;

constexpr std::string_view kGet =
    "GET /search?q=a%20b&x=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n";
constexpr std::string_view kPost =
    "POST /submit HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n"
    "hello world";
constexpr std::string_view kChunked =
    "PUT /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
    "4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nChecksum: abc\r\n\r\n";
constexpr std::string_view kPipelined =
    "GET /a HTTP/1.1\r\nHost: h\r\n\r\n\r\nGET /b HTTP/1.0\nConnection: keep-alive\n\n"
    "POST /c HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nConnection: close\r\n\r\nxyz";

TEST(RequestParserTest, RequestWithoutBody) {
  RecordedMessage m = Check::One(kGet);
  EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(m.heads, 1);
  EXPECT_EQ(m.head.method, "GET");
  EXPECT_EQ(m.head.target, "/search?q=a%20b&x=1");
  EXPECT_EQ(m.head.minor_version, 1);
  EXPECT_EQ(m.head.headers, (Fields{{"Host", "example.com"}, {"Accept", "*/*"}}));
  EXPECT_EQ(m.head.framing, BodyFraming::kNone);
  EXPECT_TRUE(m.head.keep_alive);
  EXPECT_FALSE(m.head.expect_continue);
  EXPECT_EQ(m.body, "");
  EXPECT_EQ(m.consumed, kGet.size());
}

TEST(RequestParserTest, ContentLengthBodyAndExpectContinue) {
  RecordedMessage m = Check::One(kPost);
  EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(m.head.method, "POST");
  EXPECT_EQ(m.head.framing, BodyFraming::kContentLength);
  EXPECT_EQ(m.head.content_length, 11u);
  EXPECT_TRUE(m.head.expect_continue);
  EXPECT_EQ(m.body, "hello world");
  EXPECT_EQ(m.consumed, kPost.size());

  // OnHead comes before the body arrives, so a server can answer 100 Continue.
  RequestParser parser;
  harness::Recorder<RequestParser> recorder;
  std::string_view head = kPost.substr(0, kPost.size() - 11);
  Progress p = parser.Feed(head, recorder);
  EXPECT_EQ(p.state, State::kNeedMore);
  EXPECT_EQ(p.consumed, head.size());
  EXPECT_TRUE(parser.head_done());
  EXPECT_TRUE(recorder.message.head.expect_continue);

  EXPECT_TRUE(Check::One("GET / HTTP/1.1\r\nHost: h\r\nExpect:  100-Continue \r\n\r\n")
                  .head.expect_continue);
  EXPECT_FALSE(Check::One("GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue-x\r\n\r\n")
                   .head.expect_continue);
  // RFC 9110 §10.1.1: Expect is ignored in HTTP/1.0 requests.
  EXPECT_FALSE(Check::One("GET / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n").head.expect_continue);
}

TEST(RequestParserTest, ChunkedBodyWithExtensionsAndTrailers) {
  RecordedMessage m = Check::One(kChunked);
  EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(m.head.framing, BodyFraming::kChunked);
  EXPECT_EQ(m.body, "Wikipedia in\r\n\r\nchunks.");
  EXPECT_EQ(m.consumed, kChunked.size());
  EXPECT_EQ(
      Check::One("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\n").state,
      State::kComplete);
}

TEST(RequestParserTest, TrailersAreBoundedLikeAHead) {
  RecordedMessage m = Check::One(kChunked);
  EXPECT_EQ(m.trailers, (Fields{{"Checksum", "abc"}}));
  Limits limits;
  limits.max_head_bytes = 64;  // the head below is 56 bytes, with 2 fields
  limits.max_headers = 2;
  const std::string prefix =
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
  // Two lines of 17 bytes each fit; a third goes over the count, a long one over the size.
  EXPECT_EQ(Check::One(prefix + "A: 123456789012\r\nB: 123456789012\r\n\r\n", WithLimits(limits))
                .trailers.size(),
            2u);
  EXPECT_EQ(Check::ErrorOf(prefix + "A: 1\r\nB: 2\r\nC: 3\r\n\r\n", WithLimits(limits)),
            ParseError::kTooManyHeaders);
  EXPECT_EQ(Check::ErrorOf(prefix + "A: 123456789012\r\nB: " + std::string(50, '7') + "\r\n\r\n",
                           WithLimits(limits)),
            ParseError::kHeadTooLarge);
}

TEST(RequestParserTest, KeepAliveRules) {
  EXPECT_TRUE(Check::One("GET / HTTP/1.1\r\nHost: h\r\n\r\n").head.keep_alive);
  EXPECT_FALSE(
      Check::One("GET / HTTP/1.1\r\nHost: h\r\nConnection: Close\r\n\r\n").head.keep_alive);
  EXPECT_FALSE(Check::One("GET / HTTP/1.0\r\n\r\n").head.keep_alive);
  EXPECT_TRUE(Check::One("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").head.keep_alive);
  EXPECT_FALSE(Check::One("GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n")
                   .head.keep_alive);
}

TEST(RequestParserTest, TransferEncodingRules) {
  // Both framings at once, or a malformed coding list, is 400 (request smuggling).
  for (std::string_view fields : {"Transfer-Encoding:\r\n", "Transfer-Encoding: chunked;q=1\r\n",
                                  "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
                                  "Content-Length: 0\r\nTransfer-Encoding: chunked\r\n"}) {
    EXPECT_EQ(
        Check::ErrorOf("POST / HTTP/1.1\r\nHost: h\r\n" + std::string(fields) + "\r\n0\r\n\r\n"),
        ParseError::kBadTransferEncoding)
        << fields;
  }
  // Any coding but one "chunked" is not implemented (501): "gzip, chunked" would otherwise be
  // forwarded with its gzip silently dropped.
  for (std::string_view fields :
       {"Transfer-Encoding: gzip\r\n", "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: chunked, gzip\r\n", "Transfer-Encoding: chunked, chunked\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n",
        "Transfer-Encoding: identity\r\n", "Transfer-Encoding: xchunked\r\n"}) {
    EXPECT_EQ(
        Check::ErrorOf("POST / HTTP/1.1\r\nHost: h\r\n" + std::string(fields) + "\r\n0\r\n\r\n"),
        ParseError::kUnsupportedTransferCoding)
        << fields;
  }
  // An empty list element is allowed (RFC 9110 §5.6.1): ", chunked" is one coding.
  EXPECT_EQ(
      Check::One("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: , chunked\r\n\r\n0\r\n\r\n")
          .head.framing,
      BodyFraming::kChunked);
  EXPECT_EQ(Check::ErrorOf(
                "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"),
            ParseError::kBadContentLength);
  EXPECT_EQ(Check::ErrorOf("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5x\r\n\r\n"),
            ParseError::kBadContentLength);
  RecordedMessage m =
      Check::One("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nok");
  EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(m.body, "ok");
}

TEST(RequestParserTest, HostRules) {
  // RFC 9112 §3.2: exactly one valid Host on HTTP/1.1; at most one on HTTP/1.0.
  EXPECT_EQ(Check::ErrorOf("GET / HTTP/1.1\r\n\r\n"), ParseError::kBadHost);
  EXPECT_EQ(Check::ErrorOf("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"), ParseError::kBadHost);
  EXPECT_EQ(Check::ErrorOf("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"), ParseError::kBadHost);
  EXPECT_EQ(Check::ErrorOf("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n"), ParseError::kBadHost);
  for (std::string_view value : {"a b", "a/b", "user@a", "a?b", "a#b", "a,b", "a\\b", "\xc3\xa9"}) {
    EXPECT_EQ(Check::ErrorOf("GET / HTTP/1.1\r\nHost: " + std::string(value) + "\r\n\r\n"),
              ParseError::kBadHost)
        << value;
  }
  for (std::string_view value : {"a.example", "a.example:8080", "127.0.0.1:1", "[::1]:80", ""}) {
    EXPECT_EQ(Check::One("GET / HTTP/1.1\r\nHost: " + std::string(value) + "\r\n\r\n").state,
              State::kComplete)
        << value;
  }
  EXPECT_EQ(Check::One("GET / HTTP/1.0\r\n\r\n").state, State::kComplete);
}

TEST(RequestParserTest, RequestLine) {
  RecordedMessage m = Check::One("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(m.head.method, "OPTIONS");
  EXPECT_EQ(m.head.target, "*");
  m = Check::One("GET http://example.com:8080/a?b HTTP/1.0\n\n");
  EXPECT_EQ(m.head.target, "http://example.com:8080/a?b");
  EXPECT_EQ(m.head.minor_version, 0);
  EXPECT_EQ(Check::One("M-SEARCH! /\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n").head.method, "M-SEARCH!");
  for (std::string_view line :
       {"GET /", "GET", "GET  / HTTP/1.1", " GET / HTTP/1.1", "GET /a b HTTP/1.1", "G(T / HTTP/1.1",
        "GET /\x01 HTTP/1.1", "GET /\x7f HTTP/1.1", "GET\t/ HTTP/1.1", "GET /\tx HTTP/1.1"}) {
    EXPECT_EQ(Check::ErrorOf(std::string(line) + "\r\n\r\n"), ParseError::kBadStartLine) << line;
  }
  for (std::string_view line :
       {"GET / HTTP/2.0", "GET / HTTP/1.2", "GET / HTTP/1.1 ", "GET / HTTP/3"}) {
    EXPECT_EQ(Check::ErrorOf(std::string(line) + "\r\n\r\n"), ParseError::kBadVersion) << line;
  }
  EXPECT_EQ(Check::ErrorOf("GET / http/1.1\r\n\r\n"), ParseError::kBadStartLine);
}

TEST(RequestParserTest, HeaderErrorsAndLimits) {
  EXPECT_EQ(Check::ErrorOf("GET / HTTP/1.1\r\nHost : h\r\n\r\n"), ParseError::kBadHeader);
  EXPECT_EQ(Check::ErrorOf("GET / HTTP/1.1\r\nHost: h\r\n  continued\r\n\r\n"),
            ParseError::kBadHeader);
  EXPECT_EQ(Check::ErrorOf("GET / HTTP/1.1\r\nHost: a\0z\r\n\r\n"sv), ParseError::kBadHeader);

  Limits limits;
  limits.max_headers = 1;
  EXPECT_EQ(Check::One("GET / HTTP/1.1\r\nHost: h\r\n\r\n", WithLimits(limits)).state,
            State::kComplete);
  EXPECT_EQ(Check::ErrorOf("GET / HTTP/1.1\r\nHost: h\r\nA: b\r\n\r\n", WithLimits(limits)),
            ParseError::kTooManyHeaders);

  limits = Limits{};
  limits.max_head_bytes = 30;
  EXPECT_EQ(Check::One("GET / HTTP/1.1\r\nHost: h\r\n\r\n", WithLimits(limits)).state,
            State::kComplete);
  EXPECT_EQ(Check::ErrorOf("GET /long HTTP/1.1\r\nHost: h\r\n\r\n", WithLimits(limits)),
            ParseError::kHeadTooLarge);
  EXPECT_EQ(Check::ErrorOf("GET /very-long-target-without-end", WithLimits(limits)),
            ParseError::kHeadTooLarge);
}

TEST(RequestParserTest, BodyLimit) {
  Limits limits;
  limits.max_body_bytes = 5;
  // Content-Length is refused at head time, before OnHead.
  RecordedMessage m =
      Check::One("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\n\r\n", WithLimits(limits));
  EXPECT_EQ(m.error, ParseError::kBodyTooLarge);
  EXPECT_EQ(m.heads, 0);
  EXPECT_EQ(m.consumed, 0u);
  EXPECT_EQ(
      Check::One("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", WithLimits(limits))
          .body,
      "hello");
  // Chunked: refused as soon as a chunk would take the body past the cap.
  std::string chunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  m = Check::One(chunked + "3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n", WithLimits(limits));
  EXPECT_EQ(m.error, ParseError::kBodyTooLarge);
  EXPECT_EQ(m.heads, 1);
  EXPECT_EQ(m.body, "abc");
  EXPECT_EQ(m.consumed, chunked.size() + 8);
  EXPECT_EQ(Check::One(chunked + "6\r\n", WithLimits(limits)).error, ParseError::kBodyTooLarge);
  m = Check::One(chunked + "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", WithLimits(limits));
  EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(m.body, "abcde");
}

TEST(RequestParserTest, ChunkErrors) {
  std::string chunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  EXPECT_EQ(Check::ErrorOf(chunked + "3\r\nabcd\r\n"), ParseError::kBadChunk);
  EXPECT_EQ(Check::ErrorOf(chunked + "g\r\n"), ParseError::kBadChunk);
  EXPECT_EQ(Check::ErrorOf(chunked + "1ffffffffffffffff\r\n"), ParseError::kBadChunk);
  Limits limits;
  limits.max_line_bytes = 3;
  EXPECT_EQ(Check::ErrorOf(chunked + "0001\r\n", WithLimits(limits)),
            ParseError::kChunkLineTooLong);
  EXPECT_EQ(Check::ErrorOf(chunked + "0\r\nA: bc\r\n\r\n", WithLimits(limits)),
            ParseError::kChunkLineTooLong);
  EXPECT_EQ(Check::ErrorOf(chunked + "0\r\n:\r\n\r\n"), ParseError::kBadHeader);
}

TEST(RequestParserTest, FinishAtEof) {
  RequestParser parser;
  harness::Recorder<RequestParser> recorder;
  Progress p = parser.FinishAtEof();  // the client closed between requests
  EXPECT_EQ(p.state, State::kComplete);
  EXPECT_FALSE(parser.started());

  p = parser.Feed("GE", recorder);
  EXPECT_EQ(p.state, State::kNeedMore);
  EXPECT_EQ(p.consumed, 0u);
  EXPECT_TRUE(parser.started());
  p = parser.FinishAtEof();
  EXPECT_EQ(p.state, State::kError);
  EXPECT_EQ(p.error, ParseError::kTruncated);

  parser.Reset();
  ASSERT_EQ(parser.Feed(kGet, recorder).state, State::kComplete);
  EXPECT_EQ(parser.FinishAtEof().state, State::kComplete);  // done, not yet Reset

  for (std::string_view cut :
       {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nabc",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc"}) {
    RecordedMessage m = Check::One(cut);
    EXPECT_EQ(m.heads, 1) << cut;
    EXPECT_EQ(m.error, ParseError::kTruncated) << cut;
  }
}

TEST(RequestParserTest, EmptyLinesBeforeTheRequestLineAreIgnored) {
  RequestParser parser;
  harness::Recorder<RequestParser> recorder;
  Progress p = parser.Feed("\r\n\n\r", recorder);
  EXPECT_EQ(p.state, State::kNeedMore);
  EXPECT_EQ(p.consumed, 3u);
  EXPECT_FALSE(parser.started());
  EXPECT_EQ(parser.FinishAtEof().state, State::kComplete);

  RecordedMessage m = Check::One("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(m.head.target, "/");
  EXPECT_EQ(m.consumed, 31u);
  EXPECT_EQ(Check::ErrorOf("\r\rGET / HTTP/1.1\r\nHost: h\r\n\r\n"), ParseError::kBadStartLine);
}

TEST(RequestParserTest, PipelinedRequests) {
  StreamRun run = Check::Parse(kPipelined);
  ASSERT_EQ(run.messages.size(), 3u);
  EXPECT_EQ(run.messages[0].head.target, "/a");
  EXPECT_EQ(run.messages[0].consumed, 28u);
  EXPECT_EQ(run.messages[1].head.target, "/b");
  EXPECT_TRUE(run.messages[1].head.keep_alive);
  EXPECT_EQ(run.messages[1].consumed, 2u + 40u);  // the stray CRLF before it, then the request
  EXPECT_EQ(run.messages[2].head.method, "POST");
  EXPECT_EQ(run.messages[2].body, "xyz");
  EXPECT_FALSE(run.messages[2].head.keep_alive);
  for (const RecordedMessage& m : run.messages)
    EXPECT_EQ(m.state, State::kComplete);
  EXPECT_EQ(run.leftover, "");

  // The parser stops at the end of the first request; the rest waits for Reset.
  RequestParser parser;
  harness::Recorder<RequestParser> recorder;
  Progress p = parser.Feed(kPipelined, recorder);
  EXPECT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.consumed, 28u);
  EXPECT_EQ(parser.Feed(kPipelined.substr(28), recorder).consumed, 0u);
  parser.Reset();
  p = parser.Feed(kPipelined.substr(28), recorder);
  EXPECT_EQ(p.state, State::kComplete);
  EXPECT_EQ(recorder.message.head.target, "/b");
}

TEST(RequestParserTest, EverySplitGivesTheSameResult) {
  for (std::string_view sample : {kGet, kPost, kChunked, kPipelined}) {
    SCOPED_TRACE(sample);
    Check::SplitInvariant(sample);
  }
  Check::SplitInvariant("\r\n\nGET / HTTP/1.1\r\nHost: h\r\n\r\n\r\n");
  Check::SplitInvariant(
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX");
  Limits limits;
  limits.max_body_bytes = 4;
  Check::SplitInvariant(kChunked, WithLimits(limits));
  Check::SplitInvariant(kPost, WithLimits(limits));
}

}  // namespace
}  // namespace hammer::http
