// H2ClientSession sending a request body from a BodyStream (H2RequestBody) against a real
// libnghttp2 server session that reads slowly: its application takes the bytes only when the
// test says so, and nghttp2 sends WINDOW_UPDATE for what it took (no automatic window
// updates), as a slow upstream does. The bytes each session produces are handed to the other in
// memory. The test plays the BodyStream's producer: it appends while the stream has room, and
// resumes the stream's DATA as HttpClient's connection does on the stream's wake-up.
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client_loop.h"
#include "h2_session_pair.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/h2_client_session.h"
#include "hammer/net/event_loop.h"

namespace hammer::http {
namespace {

using testing::PatternByte;

constexpr size_t kStreamWindow = 256 * 1024;   // the BodyStream's (the dark proxy's)
constexpr size_t kPiece = 64 * 1024;           // what the producer appends at a time
constexpr int32_t kServerWindow = 128 * 1024;  // the server's stream and connection windows

using BodyStreamState = testing::RecordedStream;

// The slow-reading peer: a libnghttp2 server session whose application reads request bodies
// only through Read. It checks every byte against the pattern, answers 200 once a request has
// ended, and remembers the content-length each request announced and the code each stream
// closed with.
class SlowReadingServer {
 public:
  struct Request {
    std::string content_length;
    uint64_t received = 0;   // DATA bytes arrived
    uint64_t read = 0;       // of which the application has taken
    uint64_t misplaced = 0;  // bytes that are not the pattern's at their offset
    bool ended = false;
    bool closed = false;
    uint32_t close_code = 0;
  };

  SlowReadingServer() {
    nghttp2_session_callbacks* callbacks = nullptr;
    EXPECT_EQ(nghttp2_session_callbacks_new(&callbacks), 0);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, OnHeader);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, OnData);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, OnFrame);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, OnClose);
    nghttp2_option* option = nullptr;
    EXPECT_EQ(nghttp2_option_new(&option), 0);
    nghttp2_option_set_no_auto_window_update(option, 1);
    EXPECT_EQ(nghttp2_session_server_new2(&session_, callbacks, this, option), 0);
    nghttp2_option_del(option);
    nghttp2_session_callbacks_del(callbacks);
    const nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<uint32_t>(kServerWindow)}};
    EXPECT_EQ(nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, 1), 0);
    EXPECT_EQ(nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, kServerWindow),
              0);
  }
  ~SlowReadingServer() { nghttp2_session_del(session_); }

  void Receive(std::string_view bytes) {
    ASSERT_EQ(nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(bytes.data()),
                                       bytes.size()),
              static_cast<ssize_t>(bytes.size()));
  }
  std::string Produce() {
    std::string out;
    const uint8_t* data = nullptr;
    for (ssize_t n; (n = nghttp2_session_mem_send(session_, &data)) > 0;)
      out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
    return out;
  }
  // The application takes up to `bytes` of what arrived on `id`: its windows reopen by that.
  void Read(int32_t id, uint64_t bytes) {
    Request& r = requests[id];
    uint64_t n = std::min(bytes, r.received - r.read);
    if (n == 0) return;
    r.read += n;
    EXPECT_EQ(nghttp2_session_consume(session_, id, n), 0);
  }

  std::map<int32_t, Request> requests;

 private:
  static SlowReadingServer* Self(void* user_data) {
    return static_cast<SlowReadingServer*>(user_data);
  }
  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t name_size, const uint8_t* value, size_t value_size, uint8_t,
                      void* user_data) {
    std::string_view field(reinterpret_cast<const char*>(name), name_size);
    if (field == "content-length") {
      Self(user_data)->requests[frame->hd.stream_id].content_length.assign(
          reinterpret_cast<const char*>(value), value_size);
    }
    return 0;
  }
  static int OnData(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t size,
                    void* user_data) {
    Request& r = Self(user_data)->requests[id];
    for (size_t i = 0; i < size; ++i) {
      if (static_cast<char>(data[i]) != PatternByte(r.received + i)) ++r.misplaced;
    }
    r.received += size;
    return 0;
  }
  static int OnFrame(nghttp2_session* session, const nghttp2_frame* frame, void* user_data) {
    bool ends = (frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) &&
                (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (!ends) return 0;
    Self(user_data)->requests[frame->hd.stream_id].ended = true;
    uint8_t name[] = ":status";
    uint8_t value[] = "200";
    const nghttp2_nv status{name, value, sizeof(name) - 1, sizeof(value) - 1, NGHTTP2_NV_FLAG_NONE};
    return nghttp2_submit_response(session, frame->hd.stream_id, &status, 1, nullptr);
  }
  static int OnClose(nghttp2_session*, int32_t id, uint32_t code, void* user_data) {
    Request& r = Self(user_data)->requests[id];
    r.closed = true;
    r.close_code = code;
    return 0;
  }

  nghttp2_session* session_ = nullptr;
};

class H2ClientBody : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(loop_.Init().ok());
    auto c = H2ClientSession::Create(&client_visitor_, H2ClientSession::Settings{}, false);
    ASSERT_TRUE(c.ok()) << c.status().message();
    client_ = std::move(*c);
  }

  // Submits a POST whose body comes from `body` (its length announced when it has one).
  BodyStreamState* Post(BodyStream* body) {
    streams_.push_back(std::make_unique<BodyStreamState>());
    BodyStreamState* stream = streams_.back().get();
    stream->body = H2RequestBody(body);
    std::string head = "POST /upload HTTP/1.1\r\nHost: a\r\n";
    if (body->length()) head += "Content-Length: " + std::to_string(*body->length()) + "\r\n";
    head += "\r\n";
    Status s = client_->Submit(stream, head);
    EXPECT_TRUE(s.ok()) << s.message();
    return stream;
  }

  // The producer's turn: appends pattern pieces while the stream has room (ending it after
  // `total` bytes), then resumes the stream's DATA. True if it found the stream full.
  bool ProduceInto(BodyStream* body, BodyStreamState* stream, uint64_t total) {
    bool found_full = false;
    while (body->appended() < total && !body->ended()) {
      if (body->full()) {
        found_full = true;
        break;
      }
      uint64_t start = body->appended();
      std::string piece(std::min<uint64_t>(kPiece, total - start), '\0');
      for (size_t i = 0; i < piece.size(); ++i)
        piece[i] = PatternByte(start + i);
      body->Append(piece);
    }
    if (body->appended() == total) body->End();
    client_->ResumeBody(stream);
    return found_full;
  }

  // One round trip: what the client has goes to the server and back. True if anything moved.
  bool Round() {
    std::string to_server;
    EXPECT_TRUE(client_->Produce(to_server).ok());
    if (!to_server.empty()) server_.Receive(to_server);
    std::string to_client = server_.Produce();
    if (!to_client.empty()) {
      EXPECT_TRUE(client_->Receive(to_client).ok());
    }
    return !to_server.empty() || !to_client.empty();
  }

  // Rounds until neither side has anything to say.
  void Settle() {
    for (int i = 0; i < 1000 && Round(); ++i) {
    }
  }

  net::EventLoop loop_;  // the BodyStreams' wake-ups are queued here and never run
  testing::RecordingClient client_visitor_;
  std::unique_ptr<H2ClientSession> client_;
  SlowReadingServer server_;
  std::vector<std::unique_ptr<BodyStreamState>> streams_;
};

TEST_F(H2ClientBody, A32MiBBodyThroughASlowReaderHoldsAtMostTheWindowsInMemory) {
  const uint64_t size = 32 * 1024 * 1024;
  auto body = std::make_shared<BodyStream>(&loop_, size, kStreamWindow, nullptr);
  BodyStreamState* stream = Post(body.get());
  uint64_t most_held = 0;
  int rounds_full = 0;
  int rounds = 0;
  for (; !stream->closed && rounds < 100000; ++rounds) {
    if (ProduceInto(body.get(), stream, size)) ++rounds_full;
    Settle();
    // What the client side took on and the server's application has not read yet: in the
    // BodyStream, or sent and waiting at the server within its window.
    most_held = std::max(most_held, body->appended() - server_.requests[stream->id].read);
    server_.Read(stream->id, kServerWindow / 2);  // half a window a round
  }
  ASSERT_TRUE(stream->closed);
  EXPECT_EQ(stream->close_code, 0u);
  EXPECT_EQ(stream->status, 200);
  const SlowReadingServer::Request& seen = server_.requests[stream->id];
  EXPECT_EQ(seen.content_length, std::to_string(size));
  EXPECT_EQ(seen.received, size);
  EXPECT_EQ(seen.misplaced, 0u);
  EXPECT_TRUE(seen.ended);
  EXPECT_TRUE(body->finished());
  EXPECT_EQ(stream->body.sent(), size);
  // Memory: the BodyStream's window (and the piece that overshot it) plus the server's window.
  EXPECT_LE(most_held, kStreamWindow + kPiece + kServerWindow);
  // The reader was the bottleneck: the producer found the stream full nearly every round.
  EXPECT_GE(most_held, kStreamWindow);
  EXPECT_GT(rounds_full, rounds / 2);
  // Past the first window, the server's reads paced it.
  EXPECT_GE(rounds, static_cast<int>((size - kServerWindow) / (kServerWindow / 2)));
}

TEST_F(H2ClientBody, TheProducerStopsWhileTheWindowIsShutAndGoesOnWhenItOpens) {
  const uint64_t size = 4 * 1024 * 1024;
  auto body = std::make_shared<BodyStream>(&loop_, std::nullopt, kStreamWindow, nullptr);
  BodyStreamState* stream = Post(body.get());
  // The server reads nothing: the client sends its window, and the BodyStream fills up.
  for (int i = 0; i < 10; ++i) {
    ProduceInto(body.get(), stream, size);
    Settle();
  }
  const SlowReadingServer::Request& seen = server_.requests[stream->id];
  EXPECT_TRUE(seen.content_length.empty());  // unknown length: DATA until END_STREAM
  EXPECT_EQ(seen.received, static_cast<uint64_t>(kServerWindow));
  EXPECT_EQ(body->consumed(), static_cast<uint64_t>(kServerWindow));
  EXPECT_TRUE(body->full());  // the producer stops here
  EXPECT_LT(body->appended(), static_cast<uint64_t>(kServerWindow) + kStreamWindow + kPiece);
  EXPECT_TRUE(stream->body.deferred() || !client_->wants_write());
  EXPECT_FALSE(Round());  // nothing moves

  // The server reads: WINDOW_UPDATE, more DATA, room in the stream, the producer goes on.
  server_.Read(stream->id, kServerWindow);
  Settle();
  EXPECT_EQ(seen.received, 2u * kServerWindow);
  EXPECT_FALSE(body->full());
  uint64_t appended = body->appended();
  ProduceInto(body.get(), stream, size);
  EXPECT_GT(body->appended(), appended);

  for (int i = 0; i < 10000 && !stream->closed; ++i) {
    server_.Read(stream->id, kServerWindow);
    ProduceInto(body.get(), stream, size);
    Settle();
  }
  ASSERT_TRUE(stream->closed);
  EXPECT_EQ(stream->close_code, 0u);
  EXPECT_EQ(seen.received, size);
  EXPECT_EQ(seen.misplaced, 0u);
  EXPECT_TRUE(seen.ended);
}

TEST_F(H2ClientBody, ACancelledBodyResetsItsStreamWithoutEndingIt) {
  const uint64_t size = 1024 * 1024;
  auto failing = std::make_shared<BodyStream>(&loop_, size, kStreamWindow, nullptr);
  auto whole = std::make_shared<BodyStream>(&loop_, 1000, kStreamWindow, nullptr);
  BodyStreamState* failed = Post(failing.get());
  BodyStreamState* other = Post(whole.get());
  ProduceInto(failing.get(), failed, size);
  Settle();
  // Its producer gives up; its owner cancels the stream, as HttpClient's connection does.
  failing->Fail();
  client_->ResumeBody(failed);  // a failed body never ends its stream...
  Settle();
  EXPECT_FALSE(server_.requests[failed->id].ended);
  EXPECT_FALSE(client_->Cancel(failed));  // ...the reset does
  ProduceInto(whole.get(), other, 1000);
  for (int i = 0; i < 100 && !(failed->closed && other->closed); ++i) {
    server_.Read(failed->id, kServerWindow);
    server_.Read(other->id, kServerWindow);
    Settle();
  }
  ASSERT_TRUE(failed->closed);
  EXPECT_EQ(failed->close_code, static_cast<uint32_t>(NGHTTP2_CANCEL));
  EXPECT_EQ(server_.requests[failed->id].close_code, static_cast<uint32_t>(NGHTTP2_CANCEL));
  EXPECT_FALSE(server_.requests[failed->id].ended);
  ASSERT_TRUE(other->closed);
  EXPECT_EQ(other->close_code, 0u);
  EXPECT_EQ(other->status, 200);
  EXPECT_EQ(server_.requests[other->id].received, 1000u);
  EXPECT_TRUE(server_.requests[other->id].ended);
}

}  // namespace
}  // namespace hammer::http
