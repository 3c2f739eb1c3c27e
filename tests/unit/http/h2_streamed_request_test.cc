// H2ServerSession passing request bodies on as they arrive (Settings::stream_body_above),
// against a real libnghttp2 client session (H2ClientSession) in memory: the client is held at
// its stream window until the body's consumer takes the bytes, a body of unknown length is
// handed over once past the threshold, a client reset fails the body, and an answer given
// before the body ended lets the client finish while the rest is dropped.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "client_loop.h"
#include "h2_session_pair.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/h2_client_session.h"
#include "hammer/http/h2_server_session.h"
#include "hammer/net/event_loop.h"

namespace hammer::http {
namespace {

using testing::Pattern;

constexpr uint64_t kThreshold = 64 * 1024;
constexpr int32_t kStreamWindow = 256 * 1024;  // H2ServerSession's default

struct Upload : testing::RecordedStream {
  std::string bytes;
};

// Keeps each streamed request's head and body; takes nothing unless the test does.
class Server : public H2ServerSession::Visitor {
 public:
  void OnRequest(int32_t, const RequestHead&, std::string_view, std::span<const Header>) override {
    ++whole;
  }
  void OnStreamedRequest(int32_t stream_id, const RequestHead& head,
                         std::shared_ptr<BodyStream> body, bool /*tunnel*/) override {
    ids.push_back(stream_id);
    framings.push_back(head.framing);
    bodies.push_back(std::move(body));
  }
  void OnRefused(H2Refusal) override {}

  int whole = 0;
  std::vector<int32_t> ids;
  std::vector<BodyFraming> framings;
  std::vector<std::shared_ptr<BodyStream>> bodies;
};

class H2StreamedRequest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(loop_.Init().ok());
    auto c = H2ClientSession::Create(&client_visitor_, H2ClientSession::Settings{}, false);
    ASSERT_TRUE(c.ok()) << c.status().message();
    client_ = std::move(*c);
    H2ServerSession::Settings settings;
    settings.stream_body_above = kThreshold;
    settings.loop = &loop_;
    auto s = H2ServerSession::Create(&server_visitor_, settings);
    ASSERT_TRUE(s.ok()) << s.status().message();
    server_ = std::move(*s);
  }

  // Moves bytes both ways until neither side has anything to say.
  void Exchange() { EXPECT_EQ(testing::ExchangeUntilQuiet(*client_, *server_, 1000), ""); }

  // Runs the wake-ups the BodyStreams deferred (an EventLoop runs once: its Stop stays).
  void RunWakeUps() {
    loop_.Defer([this] { loop_.Stop(); });
    loop_.Run();
  }

  Upload* Post(uint64_t size, bool announce_length) {
    uploads_.push_back(std::make_unique<Upload>());
    Upload* upload = uploads_.back().get();
    upload->bytes = Pattern(size);
    upload->body = H2RequestBody(std::string_view(upload->bytes));
    std::string head = "POST /upload HTTP/1.1\r\nHost: a\r\n";
    if (announce_length) head += "Content-Length: " + std::to_string(size) + "\r\n";
    Status s = client_->Submit(upload, head + "\r\n");
    EXPECT_TRUE(s.ok()) << s.message();
    return upload;
  }

  net::EventLoop loop_;
  testing::RecordingClient client_visitor_;
  Server server_visitor_;
  std::unique_ptr<H2ClientSession> client_;
  std::unique_ptr<H2ServerSession> server_;
  std::vector<std::unique_ptr<Upload>> uploads_;
};

TEST_F(H2StreamedRequest, TheClientIsHeldAtItsStreamWindowUntilTheBodyIsTaken) {
  const uint64_t size = 1024 * 1024;
  Upload* upload = Post(size, /*announce_length=*/true);
  Exchange();
  ASSERT_EQ(server_visitor_.bodies.size(), 1u);  // handed over at its HEADERS
  EXPECT_EQ(server_visitor_.whole, 0);
  EXPECT_EQ(server_visitor_.framings[0], BodyFraming::kContentLength);
  BodyStream& body = *server_visitor_.bodies[0];
  EXPECT_EQ(body.length(), size);
  // Nothing taken: the client sent its stream window and waits.
  EXPECT_EQ(upload->body.sent(), static_cast<uint64_t>(kStreamWindow));
  EXPECT_EQ(body.available(), std::string_view(upload->bytes).substr(0, kStreamWindow));
  EXPECT_TRUE(body.full());

  // Taking under half the window reopens nothing yet (nghttp2 updates from half)...
  body.Consume(100 * 1024);
  Exchange();
  EXPECT_EQ(upload->body.sent(), static_cast<uint64_t>(kStreamWindow));
  // ...taking it all does, from the stream's wake-up: the client sends another window.
  body.Consume(body.available().size());
  RunWakeUps();
  Exchange();
  EXPECT_EQ(upload->body.sent(), 2u * kStreamWindow);
  EXPECT_EQ(body.available(), std::string_view(upload->bytes).substr(kStreamWindow, kStreamWindow));
  EXPECT_FALSE(upload->closed);
}

TEST_F(H2StreamedRequest, ABodyOfUnknownLengthIsHandedOverOncePastTheThreshold) {
  const uint64_t size = kThreshold + 40 * 1024;
  Upload* upload = Post(size, /*announce_length=*/false);
  Exchange();
  ASSERT_EQ(server_visitor_.bodies.size(), 1u);
  EXPECT_EQ(server_visitor_.framings[0], BodyFraming::kChunked);
  BodyStream& body = *server_visitor_.bodies[0];
  EXPECT_FALSE(body.length());
  EXPECT_TRUE(body.ended());
  EXPECT_EQ(body.available(), upload->bytes);

  Post(kThreshold, /*announce_length=*/false);  // not over it: held whole
  Exchange();
  EXPECT_EQ(server_visitor_.bodies.size(), 1u);
  EXPECT_EQ(server_visitor_.whole, 1);
}

TEST_F(H2StreamedRequest, AClientResetFailsTheBody) {
  Upload* upload = Post(1024 * 1024, /*announce_length=*/true);
  Exchange();
  ASSERT_EQ(server_visitor_.bodies.size(), 1u);
  EXPECT_FALSE(client_->Cancel(upload));
  Exchange();
  EXPECT_TRUE(upload->closed);
  EXPECT_TRUE(server_visitor_.bodies[0]->failed());
  EXPECT_EQ(server_->open_streams(), 0u);
}

TEST_F(H2StreamedRequest, AnAnswerBeforeTheBodyEndedLetsTheClientFinishAndDropsTheRest) {
  const uint64_t size = 1024 * 1024;
  Upload* upload = Post(size, /*announce_length=*/true);
  Exchange();
  ASSERT_EQ(server_visitor_.bodies.size(), 1u);
  BodyStream& body = *server_visitor_.bodies[0];
  ASSERT_TRUE(server_->Respond(server_visitor_.ids[0], 413, {}, "too large\n"));
  Exchange();
  EXPECT_TRUE(body.failed());  // its consumer hears the rest will not come
  ASSERT_TRUE(upload->closed);
  EXPECT_EQ(upload->close_code, 0u);
  EXPECT_EQ(upload->status, 413);
  EXPECT_EQ(upload->body.sent(), size);  // the windows were reopened for what was dropped
  EXPECT_EQ(server_->open_streams(), 0u);
}

TEST_F(H2StreamedRequest, TrailersAreSetOnTheBodyBeforeItEnds) {
  // A client's streamed body with trailers: they go in a HEADERS frame after its DATA.
  auto sent = std::make_shared<BodyStream>(&loop_, std::nullopt, 256 * 1024, nullptr);
  const std::string bytes = Pattern(100 * 1024);
  sent->Append(bytes);
  const Header trailers[] = {{"X-Checksum", "sha1=abc"}};
  sent->SetTrailers(trailers);
  sent->End();
  uploads_.push_back(std::make_unique<Upload>());
  Upload* upload = uploads_.back().get();
  upload->body = H2RequestBody(sent.get());
  ASSERT_TRUE(client_->Submit(upload, "POST /upload HTTP/1.1\r\nHost: a\r\n\r\n").ok());
  Exchange();
  ASSERT_EQ(server_visitor_.bodies.size(), 1u);  // past the threshold: streamed
  BodyStream& body = *server_visitor_.bodies[0];
  std::string received(body.available());
  body.Consume(received.size());
  EXPECT_EQ(received, bytes);
  ASSERT_TRUE(body.finished());
  ASSERT_EQ(body.trailers().size(), 1u);
  EXPECT_EQ(body.trailers()[0].name, "x-checksum");
  EXPECT_EQ(body.trailers()[0].value, "sha1=abc");
}

}  // namespace
}  // namespace hammer::http
