// For tests that run an HttpClient on the test thread against servers on threads of their own:
// the client's loop, resolver and client with a guarded RunLoop (ClientLoopTest), `hammer
// serve`'s routes as the server (StartTargetServer), and bodies of a byte pattern that a
// misplaced or lost piece breaks, produced into a BodyStream as it has room (PatternSource).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hammer/base/clock.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/client.h"
#include "hammer/http/url.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/resolver.h"
#include "hammer/serve/serve_group.h"

namespace hammer::http::testing {

// Byte `i` of a pattern body.
inline char PatternByte(uint64_t i) {
  return static_cast<char>('a' + (i * 7 + i / 4099) % 26);
}

// The first `size` bytes of the pattern.
inline std::string Pattern(uint64_t size) {
  std::string out(size, '\0');
  for (uint64_t i = 0; i < size; ++i)
    out[i] = PatternByte(i);
  return out;
}

// Produces `total` bytes of the pattern into a stream, one piece (kPiece) per loop iteration
// while the stream has room, and stops when it is full (as a server connection stops reading
// its client). Records the most bytes it ever saw waiting. `fail_after`: gives up (Fail) once
// that many bytes were appended. Loop thread only.
class PatternSource final : public BodyStream::Producer {
 public:
  static constexpr size_t kPiece = 64 * 1024;

  PatternSource(net::EventLoop* loop, BodyStream* stream, uint64_t total,
                std::optional<uint64_t> fail_after = std::nullopt)
      : loop_(loop), stream_(stream), total_(total), fail_after_(fail_after) {
    stream_->SetProducer(this);
  }
  ~PatternSource() override { Detach(); }
  void Detach() {
    if (stream_ != nullptr) stream_->SetProducer(nullptr);
    stream_ = nullptr;
  }

  void Start() { Schedule(); }
  void OnBodyStreamDrained() override { Schedule(); }

  size_t most_waiting = 0;
  bool saw_cancel = false;

 private:
  void Schedule() {
    if (scheduled_) return;
    scheduled_ = true;
    loop_->Defer([this] {
      scheduled_ = false;
      Produce();
    });
  }
  void Produce() {
    if (stream_ == nullptr) return;
    if (stream_->cancelled()) {
      saw_cancel = true;
      return;
    }
    if (fail_after_ && sent_ >= *fail_after_) {
      stream_->Fail();
      return;
    }
    if (sent_ == total_ || stream_->full()) return;  // done, or OnBodyStreamDrained resumes
    std::string piece(std::min<uint64_t>(kPiece, total_ - sent_), '\0');
    for (size_t i = 0; i < piece.size(); ++i)
      piece[i] = PatternByte(sent_ + i);
    stream_->Append(piece);
    sent_ += piece.size();
    most_waiting = std::max(most_waiting, stream_->available().size());
    if (sent_ == total_) {
      stream_->End();
      return;
    }
    Schedule();
  }

  net::EventLoop* loop_;
  BodyStream* stream_;
  uint64_t total_;
  std::optional<uint64_t> fail_after_;
  uint64_t sent_ = 0;
  bool scheduled_ = false;
};

// `hammer serve`'s routes (TargetServerGroup) on one thread of their own, on 127.0.0.1 and a
// port the kernel chose; an error if they cannot start.
inline Result<std::unique_ptr<serve::TargetServerGroup>> StartTargetServer() {
  serve::ServeOptions options;
  options.listen = "127.0.0.1:0";
  options.threads = 1;
  return serve::TargetServerGroup::Start(options);
}

// The client side: SetUp makes loop_ and client_ (default ClientOptions); a derived fixture
// starts its server first and then calls ClientLoopTest::SetUp.
class ClientLoopTest : public ::testing::Test {
 protected:
  // `guard`: the safety net of every test: a loop still running then is stopped and the test
  // fails. Tests end their loops themselves, on real events.
  explicit ClientLoopTest(Nanos guard) : guard_(guard) {}

  void SetUp() override {
    ASSERT_TRUE(loop_.Init().ok());
    client_ = std::make_unique<HttpClient>(&loop_, &resolver_, MakeClientOptions());
  }

  // The options client_ is made with (defaults unless a fixture overrides this).
  virtual ClientOptions MakeClientOptions() const { return {}; }

  // Runs the loop until the test stops it; false if the guard had to.
  bool RunLoop() {
    bool guard_fired = false;
    net::Timer guard(&loop_, [&] {
      guard_fired = true;
      loop_.Stop();
    });
    guard.ArmAt(loop_.UpdateNow() + guard_);
    loop_.Run();
    return !guard_fired;
  }

  net::EventLoop loop_;
  net::Resolver resolver_{1};
  std::unique_ptr<HttpClient> client_;

 private:
  Nanos guard_;
};

// A client against `hammer serve`'s routes: SetUp starts them (server_), then the loop and the
// client, and resolves origin_, the server's origin.
class TargetClientTest : public ClientLoopTest {
 protected:
  using ClientLoopTest::ClientLoopTest;

  void SetUp() override {
    Result<std::unique_ptr<serve::TargetServerGroup>> server = StartTargetServer();
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(*server);
    ClientLoopTest::SetUp();
    if (HasFatalFailure()) return;
    Result<http::Url> url = ParseUrl(TargetUrl("/"));
    ASSERT_TRUE(url.ok());
    origin_ = client_->GetOrigin(*url);
  }

  // "http://127.0.0.1:PORT" + `path`.
  std::string TargetUrl(std::string_view path) const {
    return "http://" + server_->address().ToString() + std::string(path);
  }

  std::unique_ptr<serve::TargetServerGroup> server_;
  const Origin* origin_ = nullptr;
};

// One exchange and what its handler saw; `on_body` runs on each piece of the response and
// `then` on completion (a test stops its loop or sends the next request there).
class RecordingExchange final : public ResponseHandler {
 public:
  void OnResponseHead(const ResponseHead& head) override {
    status = head.status;
    major_version = head.major_version;
  }
  void OnResponseBody(std::string_view data) override {
    body.append(data);
    ++pieces;
    if (on_body) on_body(data);
  }
  void OnResponseComplete(const ExchangeResult& r) override {
    ++completions;
    result = r;
    if (then) then();
  }
  int status = 0;
  int major_version = 0;
  int pieces = 0;
  int completions = 0;
  std::string body;
  ExchangeResult result;
  std::function<void(std::string_view)> on_body;
  std::function<void()> then;
};

}  // namespace hammer::http::testing
