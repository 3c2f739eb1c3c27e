// H2ClientSession against H2ServerSession in memory: the bytes each produces are handed to the
// other, so both sides are real libnghttp2 sessions and only the socket is left out. One test
// writes frames by hand (named below) for the one fault no HTTP/2 client library will send.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "h2_session_pair.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/buffer_budget.h"
#include "hammer/http/h2_client_session.h"
#include "hammer/http/h2_fields.h"
#include "hammer/http/h2_server_session.h"
#include "hammer/net/event_loop.h"

namespace hammer::http {
namespace {

struct ClientStream : testing::RecordedStream {
  std::string request_body;
};

struct ServedRequest {
  int32_t stream_id;
  std::string method, target, host, body;
  std::map<std::string, std::string> headers, trailers;
};

class Server : public H2ServerSession::Visitor {
 public:
  void OnRequest(int32_t stream_id, const RequestHead& head, std::string_view body,
                 std::span<const Header> trailers) override {
    ServedRequest r{stream_id, std::string(head.method), std::string(head.target),
                    "",        std::string(body),        {},
                    {}};
    for (const Header& h : head.headers)
      r.headers[std::string(h.name)] = std::string(h.value);
    for (const Header& h : trailers)
      r.trailers[std::string(h.name)] = std::string(h.value);
    r.host = r.headers["host"];
    requests.push_back(r);
    if (answer_at_once) Answer(stream_id, body.empty() ? "hello" : std::string(body));
  }
  void OnRequestCancelled(int32_t) override { ++cancelled; }
  void OnRefused(H2Refusal refusal) override { ++refusals[refusal]; }
  void OnAnswerReady() override { ++answers_ready; }

  void Answer(int32_t stream_id, const std::string& body) {
    const Header extra[] = {{"X-Served-By", "test"}, {"Connection", "keep-alive"}};
    EXPECT_TRUE(session->Respond(stream_id, 200, extra, body));
  }

  H2ServerSession* session = nullptr;
  bool answer_at_once = true;
  std::vector<ServedRequest> requests;
  int cancelled = 0;
  int answers_ready = 0;
  std::map<H2Refusal, int> refusals;
};

class H2SessionPair : public ::testing::Test {
 protected:
  void SetUp() override { Make(H2ServerSession::Settings{}); }

  void Make(const H2ServerSession::Settings& server_settings) {
    auto c = H2ClientSession::Create(&client_visitor, H2ClientSession::Settings{}, false);
    ASSERT_TRUE(c.ok()) << c.status().message();
    client = std::move(*c);
    auto s = H2ServerSession::Create(&server_visitor, server_settings);
    ASSERT_TRUE(s.ok()) << s.status().message();
    server = std::move(*s);
    server_visitor.session = server.get();
  }

  // Moves bytes both ways until neither side has anything to say.
  void Exchange() {
    std::string error = testing::ExchangeUntilQuiet(*client, *server, 1000);
    if (!error.empty()) server_error = error;
  }

  ClientStream* Submit(const std::string& head, std::string_view body = {}) {
    streams.push_back(std::make_unique<ClientStream>());
    ClientStream* stream = streams.back().get();
    stream->request_body = std::string(body);
    stream->body = H2RequestBody(stream->request_body);
    Status s = client->Submit(stream, head);
    EXPECT_TRUE(s.ok()) << s.message();
    return stream;
  }

  testing::RecordingClient client_visitor;
  Server server_visitor;
  std::unique_ptr<H2ClientSession> client;
  std::unique_ptr<H2ServerSession> server;
  std::vector<std::unique_ptr<ClientStream>> streams;
  std::string server_error;
};

TEST(H2RequestFieldsTest, TranslatesAnHttp11HeadIntoPseudoAndLowerCaseFields) {
  H2RequestFields fields;
  ASSERT_TRUE(fields
                  .Assign("POST /a?b=1 HTTP/1.1\r\nHost: example.test:8080\r\nUser-Agent: x\r\n"
                          "Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: 5\r\n"
                          "Transfer-Encoding: chunked\r\nTE: trailers\r\nContent-Length: 3\r\n\r\n",
                          true)
                  .ok());
  std::vector<std::pair<std::string, std::string>> got;
  for (const nghttp2_nv& nv : fields.fields()) {
    got.emplace_back(std::string(reinterpret_cast<const char*>(nv.name), nv.namelen),
                     std::string(reinterpret_cast<const char*>(nv.value), nv.valuelen));
  }
  std::vector<std::pair<std::string, std::string>> want = {
      {":method", "POST"},    {":scheme", "https"}, {":authority", "example.test:8080"},
      {":path", "/a?b=1"},    {"user-agent", "x"},  {"te", "trailers"},
      {"content-length", "3"}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(fields.method(), "POST");
  // What the dark proxy writes for a gRPC client: "Connection: TE" does not take "te" away.
  ASSERT_TRUE(fields
                  .Assign("POST /s.G/M HTTP/1.1\r\nHost: h\r\nTE: trailers\r\n"
                          "Connection: TE\r\n\r\n",
                          false)
                  .ok());
  ASSERT_EQ(fields.fields().size(), 5u);
  const nghttp2_nv& te = fields.fields()[4];
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(te.name), te.namelen), "te");
}

TEST(H2RequestFieldsTest, RefusesHeadsItCannotTranslate) {
  H2RequestFields fields;
  EXPECT_FALSE(fields.Assign("GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n", false).ok());  // no Host
  EXPECT_FALSE(fields.Assign("GET\r\n\r\n", false).ok());
  EXPECT_FALSE(fields.Assign("GET / HTTP/1.1\r\nHost a\r\n\r\n", false).ok());
  EXPECT_FALSE(fields.Assign("CONNECT host:443 HTTP/1.1\r\nHost: host\r\n\r\n", false).ok());
  // absolute-form: the authority comes from the target
  ASSERT_TRUE(fields.Assign("GET http://a.test/x HTTP/1.1\r\n\r\n", false).ok());
  EXPECT_EQ(fields.fields().size(), 4u);
}

// The same head assigned again keeps the list; another head, the other scheme or a refused head
// in between never leaves a stale list behind.
TEST(H2RequestFieldsTest, ReassigningTheSameHeadKeepsTheListAndAnyOtherRebuildsIt) {
  const std::string a = "GET /a HTTP/1.1\r\nHost: a.test\r\n\r\n";
  const std::string b = "PUT /b HTTP/1.1\r\nHost: b.test\r\nX-B: 1\r\n\r\n";
  auto text = [](const H2RequestFields& f) {
    std::string out;
    for (const nghttp2_nv& nv : f.fields()) {
      out.append(reinterpret_cast<const char*>(nv.name), nv.namelen).append("=");
      out.append(reinterpret_cast<const char*>(nv.value), nv.valuelen).append(";");
    }
    return out;
  };
  H2RequestFields fields;
  ASSERT_TRUE(fields.Assign(a, false).ok());
  const std::string first = text(fields);
  const nghttp2_nv* storage = fields.fields().data();
  ASSERT_TRUE(fields.Assign(std::string(a), false).ok());  // equal bytes, another buffer
  EXPECT_EQ(fields.fields().data(), storage);
  EXPECT_EQ(text(fields), first);
  ASSERT_TRUE(fields.Assign(a, true).ok());
  EXPECT_EQ(text(fields), ":method=GET;:scheme=https;:authority=a.test;:path=/a;");
  ASSERT_TRUE(fields.Assign(b, true).ok());
  EXPECT_EQ(text(fields), ":method=PUT;:scheme=https;:authority=b.test;:path=/b;x-b=1;");
  EXPECT_EQ(fields.method(), "PUT");
  EXPECT_FALSE(fields.Assign("GET / HTTP/1.1\r\n\r\n", true).ok());
  ASSERT_TRUE(fields.Assign(b, true).ok());
  EXPECT_EQ(text(fields), ":method=PUT;:scheme=https;:authority=b.test;:path=/b;x-b=1;");
  ASSERT_TRUE(fields.Assign(a, false).ok());
  EXPECT_EQ(text(fields), first);
}

TEST(H2ErrorNameTest, NamesRfc9113CodesAndHexForOthers) {
  EXPECT_EQ(H2ErrorName(0), "NO_ERROR");
  EXPECT_EQ(H2ErrorName(7), "REFUSED_STREAM");
  EXPECT_EQ(H2ErrorName(11), "ENHANCE_YOUR_CALM");
  EXPECT_EQ(H2ErrorName(0x1a), "0x1a");
}

TEST_F(H2SessionPair, GetIsAnsweredWithHeadersAndBody) {
  ClientStream* s = Submit("GET /x?y=1 HTTP/1.1\r\nHost: a.test\r\nAccept: */*\r\n\r\n");
  Exchange();
  ASSERT_EQ(server_visitor.requests.size(), 1u);
  const ServedRequest& r = server_visitor.requests[0];
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.target, "/x?y=1");
  EXPECT_EQ(r.host, "a.test");
  EXPECT_EQ(r.headers.at("accept"), "*/*");
  ASSERT_TRUE(s->closed);
  EXPECT_EQ(s->close_code, 0u);
  EXPECT_EQ(s->status, 200);
  EXPECT_EQ(s->response, "hello");
  EXPECT_EQ(s->headers["x-served-by"], "test");
  EXPECT_EQ(s->headers["content-length"], "5");
  EXPECT_EQ(s->headers.count("connection"), 0u);  // connection-specific: left out
  EXPECT_EQ(server->awaiting_answers(), 0u);
  EXPECT_EQ(client->open_streams(), 0u);
}

TEST_F(H2SessionPair, PostBodyArrivesWholeAndLargeAnswersFlowAcrossWindows) {
  std::string big(1 << 20, 'b');  // four times the server's stream window
  ClientStream* s =
      Submit("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1048576\r\n\r\n", big);
  Exchange();
  ASSERT_EQ(server_visitor.requests.size(), 1u);
  EXPECT_EQ(server_visitor.requests[0].body.size(), big.size());
  ASSERT_TRUE(s->closed);
  EXPECT_EQ(s->response, big);
  EXPECT_EQ(server->buffered_bytes(), 0u);  // everything released with the stream
}

TEST_F(H2SessionPair, ManyStreamsAreAnsweredInAnyOrder) {
  server_visitor.answer_at_once = false;
  for (int i = 0; i < 50; ++i)
    Submit("GET /" + std::to_string(i) + " HTTP/1.1\r\nHost: a\r\n\r\n");
  Exchange();
  ASSERT_EQ(server_visitor.requests.size(), 50u);
  EXPECT_EQ(server->awaiting_answers(), 50u);
  for (auto it = server_visitor.requests.rbegin(); it != server_visitor.requests.rend(); ++it)
    server_visitor.Answer(it->stream_id, it->target);
  Exchange();
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(streams[i]->closed);
    EXPECT_EQ(streams[i]->response, "/" + std::to_string(i));
  }
}

TEST_F(H2SessionPair, HeadAnswerKeepsContentLengthWithoutBody) {
  ClientStream* s = Submit("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n");
  Exchange();
  ASSERT_TRUE(s->closed);
  EXPECT_EQ(s->close_code, 0u);
  EXPECT_EQ(s->headers["content-length"], "5");
  EXPECT_EQ(s->response, "");
}

TEST_F(H2SessionPair, ServerResetIsSeenAsAPeerResetWithItsCode) {
  server_visitor.answer_at_once = false;
  ClientStream* s = Submit("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  Exchange();
  server->ResetStream(server_visitor.requests.at(0).stream_id, NGHTTP2_INTERNAL_ERROR);
  Exchange();
  ASSERT_TRUE(s->closed);
  EXPECT_TRUE(s->peer_reset);
  EXPECT_EQ(s->close_code, static_cast<uint32_t>(NGHTTP2_INTERNAL_ERROR));
}

TEST_F(H2SessionPair, OversizedHeadIsAnswered431) {
  std::string big(70 * 1024, 'h');
  ClientStream* s = Submit("GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + big + "\r\n\r\n");
  Exchange();
  EXPECT_TRUE(server_visitor.requests.empty());
  ASSERT_TRUE(s->closed);
  EXPECT_EQ(s->status, 431);
  EXPECT_EQ(server_visitor.refusals[H2Refusal::kHeadTooLarge], 1);
}

TEST_F(H2SessionPair, HpackBombOfSmallReferencesToOneBigEntryIsAnswered431) {
  // 3 KB value: it fits HPACK's 4 KiB dynamic table once, then each repetition is a one-byte
  // reference on the wire that expands to 3 KB: 100 of them are 300 KB of fields.
  std::string value(3000, 'v');
  std::string head = "GET / HTTP/1.1\r\nHost: a\r\n";
  for (int i = 0; i < 100; ++i)
    head += "X-Bomb: " + value + "\r\n";
  std::string to_server;
  ClientStream* s = Submit(head + "\r\n");
  ASSERT_TRUE(client->Produce(to_server).ok());
  EXPECT_LT(to_server.size(), 8 * 1024u);  // small on the wire
  ASSERT_TRUE(server->Receive(to_server).ok());
  Exchange();
  EXPECT_TRUE(server_visitor.requests.empty());
  ASSERT_TRUE(s->closed);
  EXPECT_EQ(s->status, 431);
  EXPECT_EQ(server_visitor.refusals[H2Refusal::kHeadTooLarge], 1);
  EXPECT_EQ(server->buffered_bytes(), 0u);
}

TEST_F(H2SessionPair, OversizedBodyIsAnswered413) {
  H2ServerSession::Settings settings;
  settings.max_body_bytes = 1000;
  Make(settings);
  ClientStream* s = Submit("POST / HTTP/1.1\r\nHost: a\r\n\r\n", std::string(5000, 'x'));
  Exchange();
  EXPECT_TRUE(server_visitor.requests.empty());
  ASSERT_TRUE(s->closed);
  EXPECT_EQ(s->status, 413);
  EXPECT_EQ(server_visitor.refusals[H2Refusal::kBodyTooLarge], 1);
}

TEST_F(H2SessionPair, BodiesBeyondTheConnectionBudgetAreRefusedStreams) {
  H2ServerSession::Settings settings;
  settings.max_buffered_bytes = 100 * 1024;
  Make(settings);
  server_visitor.answer_at_once = false;
  for (int i = 0; i < 4; ++i)
    Submit("POST / HTTP/1.1\r\nHost: a\r\n\r\n", std::string(40 * 1024, 'x'));
  Exchange();
  EXPECT_EQ(server_visitor.requests.size(), 2u);  // two fit in 100 KiB, the others do not
  EXPECT_GE(server_visitor.refusals[H2Refusal::kBufferFull], 1);
  int refused = 0;
  for (auto& s : streams)
    refused += s->closed && s->close_code == NGHTTP2_REFUSED_STREAM;
  EXPECT_EQ(refused, 2);
  EXPECT_LE(server->buffered_bytes(), 100u * 1024);
}

TEST_F(H2SessionPair, RequestsWhileTheServerBudgetIsExhaustedAreAnswered503) {
  BufferBudget budget(1000);
  BufferCharge someone_else(&budget);
  H2ServerSession::Settings settings;
  settings.budget = &budget;
  Make(settings);
  ClientStream* first = Submit("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  Exchange();
  EXPECT_EQ(first->status, 200);
  someone_else.Set(1000);  // another connection holds the whole budget
  ClientStream* second = Submit("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  Exchange();
  EXPECT_EQ(second->status, 503);
  EXPECT_EQ(server_visitor.requests.size(), 1u);
  EXPECT_EQ(server_visitor.refusals[H2Refusal::kOverBudget], 1);
  someone_else.Set(0);
  ClientStream* third = Submit("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  Exchange();
  EXPECT_EQ(third->status, 200);
}

TEST_F(H2SessionPair, ABodyStillArrivingWhenTheBudgetRunsOutIsAnswered503) {
  BufferBudget budget(1000);
  BufferCharge someone_else(&budget);
  H2ServerSession::Settings settings;
  settings.budget = &budget;
  Make(settings);
  std::string big(1 << 20, 'b');  // more than the first flow-control window
  ClientStream* s =
      Submit("POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 1048576\r\n\r\n", big);
  std::string to_server;
  ASSERT_TRUE(client->Produce(to_server).ok());  // the head and the body's first window
  ASSERT_TRUE(server->Receive(to_server).ok());
  EXPECT_GT(server->buffered_bytes(), 0u);
  someone_else.Set(1000);  // another connection takes the whole budget meanwhile
  Exchange();
  EXPECT_EQ(s->status, 503);
  EXPECT_TRUE(server_visitor.requests.empty());
  EXPECT_EQ(server_visitor.refusals[H2Refusal::kOverBudget], 1);
  EXPECT_EQ(server->buffered_bytes(), 0u);  // what the stream held is released
}

TEST_F(H2SessionPair, RapidResetEndsTheConnectionWithEnhanceYourCalm) {
  server_visitor.answer_at_once = false;
  for (int i = 0; i < 150; ++i) {
    ClientStream* s = Submit("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    Exchange();
    client->Cancel(s);
    Exchange();
    if (client_visitor.goaways > 0) break;
  }
  EXPECT_EQ(server_visitor.refusals[H2Refusal::kRapidReset], 1);
  EXPECT_EQ(client_visitor.goaway_code, static_cast<uint32_t>(NGHTTP2_ENHANCE_YOUR_CALM));
  EXPECT_EQ(server_visitor.requests.size(), 100u);  // judged once 100 were reset
  EXPECT_EQ(server_visitor.cancelled, 100);
  EXPECT_TRUE(server->finished());
}

// An HTTP/2 frame written by hand (RFC 9113 §4.1), for the faults no HTTP/2 library sends.
// `length` other than the payload's: a frame announced longer than what follows (yet).
std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, std::string_view payload,
                  size_t length = std::string::npos) {
  if (length == std::string::npos) length = payload.size();
  std::string f;
  f.push_back(static_cast<char>(length >> 16));
  f.push_back(static_cast<char>(length >> 8));
  f.push_back(static_cast<char>(length));
  f.push_back(static_cast<char>(type));
  f.push_back(static_cast<char>(flags));
  f.push_back(static_cast<char>(stream >> 24));
  f.push_back(static_cast<char>(stream >> 16));
  f.push_back(static_cast<char>(stream >> 8));
  f.push_back(static_cast<char>(stream));
  f.append(payload);
  return f;
}

// A hand-written client: a head that has begun and not ended, then a body that has begun and
// not ended; the server tells them apart (its owner runs the head deadline, then the body's).
TEST_F(H2SessionPair, AHeadOrABodyStillArrivingIsTold) {
  server_visitor.answer_at_once = false;
  std::string bytes = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + Frame(0x4, 0, 0, "");
  // HEADERS (END_HEADERS, no END_STREAM), 6 bytes of HPACK: :method GET, :scheme http, :path /
  // (static table entries 2, 6, 4) and :authority "a" (a literal); 3 come first.
  bytes += Frame(0x1, 0x4, 1, "\x82\x86\x84", 6);
  ASSERT_TRUE(server->Receive(bytes).ok());
  EXPECT_TRUE(server->receiving_head());
  EXPECT_EQ(server->receiving_streams(), 1u);
  ASSERT_TRUE(server
                  ->Receive(std::string_view("\x41\x01"
                                             "a",
                                             3))
                  .ok());
  EXPECT_FALSE(server->receiving_head());
  EXPECT_EQ(server->receiving_streams(), 1u);  // the body is arriving
  EXPECT_EQ(server->open_streams(), 1u);
  ASSERT_TRUE(server->Receive(Frame(0x0, 0x1, 1, "xy")).ok());  // DATA, END_STREAM
  EXPECT_EQ(server->receiving_streams(), 0u);
  EXPECT_EQ(server->awaiting_answers(), 1u);
  ASSERT_EQ(server_visitor.requests.size(), 1u);
  EXPECT_EQ(server_visitor.requests[0].body, "xy");
  EXPECT_EQ(server_visitor.requests[0].host, "a");
}

// A hand-written client (the frames below) for the one fault no HTTP/2 library sends: a header
// block that never ends, spread over CONTINUATION frames (CVE-2024-28182).
TEST_F(H2SessionPair, ContinuationFloodEndsTheConnection) {
  std::string bytes = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  bytes += Frame(0x4, 0, 0, "");  // SETTINGS
  // HEADERS without END_HEADERS: ":method: GET" (static index 2), then CONTINUATIONs each with
  // one literal field "x: y" without indexing.
  bytes += Frame(0x1, 0x1, 1, "\x82");
  const std::string literal("\x00\x01x\x01y", 5);
  for (int i = 0; i < 100; ++i)
    bytes += Frame(0x9, 0, 1, literal);
  Status s = server->Receive(bytes);
  std::string out;
  ASSERT_TRUE(server->Produce(out).ok());
  EXPECT_TRUE(!s.ok() || server->finished()) << "the server kept reading";
  EXPECT_TRUE(server_visitor.requests.empty());
}

// Streamed answers (RespondStream): the BodyStream's wake-ups are deferred tasks of an event
// loop, run here by RunWakeUps.
class H2StreamedAnswer : public H2SessionPair {
 protected:
  void SetUp() override {
    H2SessionPair::SetUp();
    ASSERT_TRUE(loop.Init().ok());
    loop.Stop();  // Run() then only runs the tasks deferred so far, and returns
    server_visitor.answer_at_once = false;
  }
  void RunWakeUps() { loop.Run(); }

  // A GET whose answer is streamed from `body`.
  ClientStream* Start(std::shared_ptr<BodyStream> body) {
    ClientStream* s = Submit("GET /big HTTP/1.1\r\nHost: a\r\n\r\n");
    Exchange();
    const Header fields[] = {{"Transfer-Encoding", "chunked"}, {"X-Streamed", "yes"}};
    EXPECT_TRUE(server->RespondStream(server_visitor.requests.at(0).stream_id, 200, fields,
                                      std::move(body)));
    Exchange();
    return s;
  }

  net::EventLoop loop;
};

TEST_F(H2StreamedAnswer, FollowsItsBodyStreamToTheEnd) {
  auto body = std::make_shared<BodyStream>(&loop, std::nullopt, 64 * 1024, nullptr);
  ClientStream* s = Start(body);
  EXPECT_EQ(s->status, 200);  // the head went at once
  EXPECT_FALSE(s->closed);
  EXPECT_EQ(s->headers["x-streamed"], "yes");
  EXPECT_EQ(s->headers.count("transfer-encoding"), 0u);  // HTTP/2 frames the body itself
  EXPECT_EQ(s->headers.count("content-length"), 0u);     // the length is unknown
  std::string expected;
  for (int i = 0; i < 20; ++i) {  // 600 KB: more than the stream's flow-control window
    std::string piece(30000, static_cast<char>('a' + i));
    body->Append(piece);
    expected += piece;
    RunWakeUps();
    Exchange();
    EXPECT_EQ(body->available().size(), 0u) << "piece " << i << " waits in the stream";
  }
  body->End();
  RunWakeUps();
  Exchange();
  ASSERT_TRUE(s->closed);
  EXPECT_EQ(s->close_code, 0u);
  EXPECT_EQ(s->response, expected);
  EXPECT_GE(server_visitor.answers_ready, 21);
  EXPECT_FALSE(body->cancelled());
}

TEST_F(H2StreamedAnswer, AKnownLengthIsAnnounced) {
  auto body = std::make_shared<BodyStream>(&loop, 5, 64 * 1024, nullptr);
  ClientStream* s = Start(body);
  body->Append("hello");
  body->End();
  RunWakeUps();
  Exchange();
  ASSERT_TRUE(s->closed);
  EXPECT_EQ(s->headers["content-length"], "5");
  EXPECT_EQ(s->response, "hello");
}

TEST_F(H2StreamedAnswer, ABodyThatFailsResetsTheStream) {
  auto body = std::make_shared<BodyStream>(&loop, std::nullopt, 64 * 1024, nullptr);
  ClientStream* s = Start(body);
  body->Append("partial");
  RunWakeUps();
  Exchange();
  body->Fail();  // the upstream broke mid-body
  RunWakeUps();
  Exchange();
  ASSERT_TRUE(s->closed);
  EXPECT_TRUE(s->peer_reset);
  EXPECT_EQ(s->close_code, static_cast<uint32_t>(NGHTTP2_INTERNAL_ERROR));
  EXPECT_EQ(s->response, "partial");
}

TEST_F(H2StreamedAnswer, TheClientLeavingCancelsTheBody) {
  auto body = std::make_shared<BodyStream>(&loop, std::nullopt, 64 * 1024, nullptr);
  ClientStream* s = Start(body);
  client->Cancel(s);
  Exchange();
  EXPECT_TRUE(body->cancelled());  // its producer is told to stop
  auto other = std::make_shared<BodyStream>(&loop, std::nullopt, 64 * 1024, nullptr);
  server_visitor.requests.clear();
  Start(other);
  server->CancelStreamedAnswers();  // the connection closing
  EXPECT_TRUE(other->cancelled());
}

// Request trailers: a streamed request body's trailers (BodyStream::trailers) go in a HEADERS
// frame after its DATA, and the server hands them over with the request.
class H2RequestTrailers : public H2StreamedAnswer {
 protected:
  ClientStream* Post(std::span<const Header> trailers) {
    body = std::make_shared<BodyStream>(&loop, std::nullopt, 64 * 1024, nullptr);
    body->Append("hello");
    body->SetTrailers(trailers);
    body->End();
    streams.push_back(std::make_unique<ClientStream>());
    ClientStream* s = streams.back().get();
    s->body = H2RequestBody(body.get());
    Status status = client->Submit(s, "POST /t HTTP/1.1\r\nHost: a\r\n\r\n");
    EXPECT_TRUE(status.ok()) << status.message();
    Exchange();
    return s;
  }

  std::shared_ptr<BodyStream> body;
};

TEST_F(H2RequestTrailers, FollowTheBodyToTheServer) {
  server_visitor.answer_at_once = true;
  // Fields that frame a message or are connection-specific never go in HTTP/2 trailers.
  const Header trailers[] = {
      {"X-Checksum", "sha1=abc"}, {"Content-Length", "5"}, {"TE", "x"}, {"Connection", "close"}};
  ClientStream* s = Post(trailers);
  ASSERT_EQ(server_visitor.requests.size(), 1u);
  const ServedRequest& r = server_visitor.requests[0];
  EXPECT_EQ(r.body, "hello");
  EXPECT_EQ(r.trailers, (std::map<std::string, std::string>{{"x-checksum", "sha1=abc"}}));
  ASSERT_TRUE(s->closed);
  EXPECT_EQ(s->status, 200);
  EXPECT_EQ(server->buffered_bytes(), 0u);
}

TEST_F(H2RequestTrailers, MoreFieldsThanAHeadMayHaveAreAnswered431) {
  server_visitor.answer_at_once = true;
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i)
    names.push_back("x-t" + std::to_string(i));
  std::vector<Header> trailers;
  for (const std::string& name : names)
    trailers.push_back({name, "v"});
  ClientStream* s = Post(trailers);
  EXPECT_TRUE(server_visitor.requests.empty());
  ASSERT_TRUE(s->closed);
  EXPECT_EQ(s->status, 431);
  EXPECT_EQ(server_visitor.refusals[H2Refusal::kHeadTooLarge], 1);
}

}  // namespace
}  // namespace hammer::http
