// H2ServerCodec over a real socket: a client that stops taking a streamed answer (it opens
// no flow-control window) is closed after idle_timeout, and the answer's body is cancelled so
// that its producer stops. The client is a raw socket writing frames by hand: no HTTP/2
// library lets its user withhold every WINDOW_UPDATE.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "hammer/http/body_stream.h"
#include "hammer/http/server.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/socket.h"

namespace hammer::http {
namespace {

// Answers every request with a streamed body of unknown length and keeps it filled.
class EndlessAnswer final : public RequestHandler, public BodyStream::Producer {
 public:
  explicit EndlessAnswer(net::EventLoop* loop) : loop_(loop) {}
  ~EndlessAnswer() override {
    if (body_) body_->SetProducer(nullptr);
  }
  void OnRequest(const IncomingRequest&, Responder responder) override {
    body_ = std::make_shared<BodyStream>(loop_, std::nullopt, 64 * 1024, nullptr);
    body_->SetProducer(this);
    body_->Append(std::string(64 * 1024, 'x'));  // full: waits for the client
    responder.RespondStream("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body_, true);
    answered.store(true);
  }
  void OnBodyStreamDrained() override {
    if (body_->cancelled()) cancelled.store(true);
  }
  std::atomic<bool> answered{false};
  std::atomic<bool> cancelled{false};

 private:
  net::EventLoop* loop_;
  std::shared_ptr<BodyStream> body_;
};

std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload) {
  std::string f;
  f.push_back(static_cast<char>(payload.size() >> 16));
  f.push_back(static_cast<char>(payload.size() >> 8));
  f.push_back(static_cast<char>(payload.size()));
  f.push_back(static_cast<char>(type));
  f.push_back(static_cast<char>(flags));
  for (int shift : {24, 16, 8, 0})
    f.push_back(static_cast<char>(stream >> shift));
  return f + payload;
}

template <typename Predicate>
bool Eventually(Predicate done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

TEST(H2ServerCodecTest, AClientThatTakesNothingOfAStreamedAnswerIsClosed) {
  net::LoopGroup loops(1);
  ASSERT_TRUE(loops.Init().ok());
  EndlessAnswer handler(loops.loop(0));
  ServerOptions options;
  options.http2.enabled = true;
  options.idle_timeout = 200 * kMillisecond;
  HttpListener listener(loops.loop(0), &handler, options);
  ASSERT_TRUE(listener.Listen(*net::SocketAddress::Parse("127.0.0.1:0"), false).ok());
  loops.Start();

  Result<net::Fd> fd = net::StartConnect(listener.local_address());
  ASSERT_TRUE(fd.ok()) << fd.status().message();
  int s = fd->get();
  pollfd connected{s, POLLOUT, 0};
  ASSERT_EQ(poll(&connected, 1, 20000), 1);  // the non-blocking connect finished
  // The preface; SETTINGS_INITIAL_WINDOW_SIZE 0 (no DATA may come); HEADERS for GET / (HPACK
  // static entries :method GET, :scheme http, :path /, then :authority "a" without indexing).
  std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  out += Frame(0x4, 0, 0, std::string("\x00\x04\x00\x00\x00\x00", 6));
  out += Frame(0x1, 0x5, 1,
               std::string("\x82\x86\x84\x01\x01"
                           "a",
                           6));
  ASSERT_EQ(send(s, out.data(), out.size(), MSG_NOSIGNAL), static_cast<ssize_t>(out.size()));
  ASSERT_TRUE(Eventually([&] { return handler.answered.load(); }));
  // Nothing more is sent or read: the server closes after idle_timeout with nothing written,
  // and the body is cancelled.
  EXPECT_TRUE(Eventually([&] { return handler.cancelled.load(); }));
  // The close may come just after the cancel (the flag is set on the loop's thread): what was
  // sent is read until the connection ends (EOF or reset), within Eventually's bound.
  char buf[65536];
  EXPECT_TRUE(Eventually([&] {
    ssize_t n;
    while ((n = recv(s, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
    }
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  })) << "the connection is still open";
  loops.StopAll();
  loops.Join();
}

}  // namespace
}  // namespace hammer::http
