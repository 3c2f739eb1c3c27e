// H2ClientSession's per-stream pause against a real libnghttp2 server session (H2ServerSession),
// the bytes each produces handed to the other in memory: a paused stream holds at most its
// window while the server waits for WINDOW_UPDATE, and resuming delivers the answer whole.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "h2_session_pair.h"
#include "hammer/http/h2_client_session.h"
#include "hammer/http/h2_server_session.h"

namespace hammer::http {
namespace {

constexpr int32_t kWindow = 65535;  // the client's stream window (RFC 9113's initial size)

struct FlowStream : testing::RecordedStream {
  int deliveries = 0;
  bool pause_on_data = false;  // pause again after each piece, as a slow reader would
};

class PausingClient : public testing::RecordingClient {
 public:
  void OnStreamData(H2ClientSession::Stream* s, std::string_view data) override {
    RecordingClient::OnStreamData(s, data);
    auto* stream = static_cast<FlowStream*>(s);
    ++stream->deliveries;
    if (stream->pause_on_data) session->Pause(stream);
  }

  H2ClientSession* session = nullptr;
};

class AnsweringServer : public H2ServerSession::Visitor {
 public:
  void OnRequest(int32_t stream_id, const RequestHead& head, std::string_view,
                 std::span<const Header>) override {
    std::string size(head.target.substr(1));  // "/<bytes>"
    EXPECT_TRUE(session->Respond(stream_id, 200, {}, Pattern(std::stoul(size))));
  }
  void OnRequestCancelled(int32_t) override {}
  void OnRefused(H2Refusal) override {}
  void OnAnswerReady() override {}

  static std::string Pattern(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i)
      s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
    return s;
  }

  H2ServerSession* session = nullptr;
};

class H2ClientFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    H2ClientSession::Settings settings;
    settings.window_bytes = kWindow;
    auto c = H2ClientSession::Create(&client_visitor, settings, false);
    ASSERT_TRUE(c.ok()) << c.status().message();
    client = std::move(*c);
    client_visitor.session = client.get();
    auto s = H2ServerSession::Create(&server_visitor, H2ServerSession::Settings{});
    ASSERT_TRUE(s.ok()) << s.status().message();
    server = std::move(*s);
    server_visitor.session = server.get();
  }

  // Moves bytes both ways until neither side has anything to say.
  void Exchange() { EXPECT_EQ(testing::ExchangeUntilQuiet(*client, *server), ""); }

  FlowStream* Get(size_t bytes) {
    streams.push_back(std::make_unique<FlowStream>());
    FlowStream* stream = streams.back().get();
    std::string head = "GET /" + std::to_string(bytes) + " HTTP/1.1\r\nHost: a\r\n\r\n";
    Status s = client->Submit(stream, head);
    EXPECT_TRUE(s.ok()) << s.message();
    return stream;
  }

  PausingClient client_visitor;
  AnsweringServer server_visitor;
  std::unique_ptr<H2ClientSession> client;
  std::unique_ptr<H2ServerSession> server;
  std::vector<std::unique_ptr<FlowStream>> streams;
};

TEST_F(H2ClientFlow, APausedStreamStopsTheServerAtItsWindowAndResumesWhole) {
  const size_t size = 1 << 20;  // sixteen windows
  FlowStream* paused = Get(size);
  FlowStream* other = Get(size);
  client->Pause(paused);
  Exchange();

  // The server sent the window and waits; nothing reached the visitor.
  EXPECT_EQ(paused->held.data.size(), static_cast<size_t>(kWindow));
  EXPECT_TRUE(paused->response.empty());
  EXPECT_FALSE(paused->closed);
  EXPECT_FALSE(server->wants_write());
  // The connection window was reopened: the other stream on the connection finished.
  ASSERT_TRUE(other->closed);
  EXPECT_EQ(other->close_code, 0u);
  EXPECT_EQ(other->response, AnsweringServer::Pattern(size));
  EXPECT_EQ(client->open_streams(), 1u);

  client->Resume(paused);
  EXPECT_EQ(paused->response.size(), static_cast<size_t>(kWindow));  // what it held, at once
  Exchange();
  ASSERT_TRUE(paused->closed);
  EXPECT_EQ(paused->close_code, 0u);
  EXPECT_EQ(paused->response, AnsweringServer::Pattern(size));
  EXPECT_EQ(client->open_streams(), 0u);
}

TEST_F(H2ClientFlow, AReaderPausingAfterEveryPieceGetsTheWholeAnswerWithinItsWindow) {
  const size_t size = 300 * 1000;
  FlowStream* stream = Get(size);
  stream->pause_on_data = true;
  int rounds = 0;
  while (!stream->closed && rounds < 1000) {
    Exchange();
    EXPECT_LE(stream->held.data.size(), static_cast<size_t>(kWindow));
    client->Resume(stream);
    ++rounds;
  }
  ASSERT_TRUE(stream->closed);
  EXPECT_EQ(stream->close_code, 0u);
  EXPECT_EQ(stream->response, AnsweringServer::Pattern(size));
  EXPECT_GT(rounds, static_cast<int>(size / kWindow));  // it really waited for each window
}

TEST_F(H2ClientFlow, AnEndReachedWhilePausedIsHeldUntilResume) {
  FlowStream* stream = Get(100);
  client->Pause(stream);
  Exchange();
  EXPECT_EQ(stream->held.data.size(), 100u);
  EXPECT_TRUE(stream->held.closed);
  EXPECT_FALSE(stream->closed);
  EXPECT_EQ(client->open_streams(), 1u);

  client->Resume(stream);
  ASSERT_TRUE(stream->closed);
  EXPECT_EQ(stream->close_code, 0u);
  EXPECT_EQ(stream->response, AnsweringServer::Pattern(100));
  EXPECT_EQ(client->open_streams(), 0u);
}

TEST_F(H2ClientFlow, CancellingAStreamThatEndedWhilePausedEndsItThere) {
  FlowStream* ended = Get(100);
  FlowStream* waiting = Get(1 << 20);
  client->Pause(ended);
  client->Pause(waiting);
  Exchange();
  ASSERT_TRUE(ended->held.closed);

  EXPECT_TRUE(client->Cancel(ended));  // over now; no OnStreamClose follows
  EXPECT_FALSE(ended->closed);
  EXPECT_TRUE(ended->held.data.empty());

  EXPECT_FALSE(client->Cancel(waiting));  // still open: reset, and its close comes
  Exchange();
  EXPECT_TRUE(waiting->closed);
  EXPECT_TRUE(waiting->response.empty());
  EXPECT_EQ(client->open_streams(), 0u);
}

}  // namespace
}  // namespace hammer::http
