// HttpClient's ResponseFlow over HTTP/2: pausing one stream holds it at its window while the
// other streams of the connection go on, its deadline waits, resuming delivers the answer
// whole, and aborting resets only that stream. Against the real `hammer serve` routes
// (TargetServerGroup, h2c prior knowledge) over loopback; the client's loop runs on the test
// thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "client_loop.h"
#include "hammer/http/client.h"
#include "hammer/http/url.h"
#include "hammer/net/event_loop.h"
#include "hammer/serve/serve_group.h"

namespace hammer::http {
namespace {

constexpr Nanos kGuard = 20 * kSecond;

using FlowExchange = testing::RecordingExchange;

class ClientH2FlowTest : public testing::TargetClientTest {
 protected:
  ClientH2FlowTest() : TargetClientTest(kGuard) {}

  ClientOptions MakeClientOptions() const override {
    ClientOptions options;
    options.http2.enabled = true;
    options.http2.window_bytes = 64 * 1024;
    return options;
  }

  void Send(const std::string& head, FlowExchange* exchange, ResponseFlow* flow,
            MonoNanos deadline = 0) {
    ClientRequest request;
    request.origin = origin_;
    request.head = head;
    request.flow = flow;
    request.deadline = deadline;
    client_->Send(request, exchange);
  }

  std::string Get(size_t bytes) {
    return "GET /bytes/" + std::to_string(bytes) + " HTTP/1.1\r\nHost: " + origin_->host_header +
           "\r\n\r\n";
  }
};

TEST_F(ClientH2FlowTest, APausedStreamWaitsWhileTheOthersFinishAndThenArrivesWhole) {
  const size_t size = 8 * 1024 * 1024;
  const size_t other_size = 2 * 1024 * 1024;
  std::string head = Get(size);
  std::string other_head = Get(other_size);
  ResponseFlow flow;
  FlowExchange paused, other;
  size_t at_pause = 0;
  size_t at_resume = 0;
  net::Timer resume(&loop_, [&] {
    at_resume = paused.body.size();
    flow.Resume();
  });
  paused.on_body = [&](std::string_view) {
    if (at_pause != 0) return;
    at_pause = paused.body.size();
    flow.Pause();
    EXPECT_TRUE(flow.paused());
  };
  // Resumed after the other stream ended and after the paused one's deadline has passed,
  // however long the first piece took to come (a second: slow sanitizer builds on a busy
  // machine took over 300 ms).
  const MonoNanos deadline = loop_.UpdateNow() + kSecond;
  other.then = [&] { resume.ArmAt(std::max(loop_.UpdateNow(), deadline) + 200 * kMillisecond); };
  paused.then = [this] { loop_.Stop(); };
  Send(head, &paused, &flow, deadline);
  Send(other_head, &other, nullptr);
  EXPECT_TRUE(flow.bound());
  ASSERT_TRUE(RunLoop());

  ASSERT_EQ(other.completions, 1);
  ASSERT_FALSE(other.result.failure) << other.result.detail;
  EXPECT_EQ(other.body, std::string(other_size, 'x'));
  ASSERT_EQ(paused.completions, 1);
  ASSERT_FALSE(paused.result.failure) << paused.result.detail;  // paused time not counted
  EXPECT_EQ(paused.major_version, 2);
  EXPECT_GT(at_pause, 0u);
  EXPECT_EQ(at_resume, at_pause);  // nothing was delivered while paused
  EXPECT_LT(at_pause, size);
  EXPECT_EQ(paused.body, std::string(size, 'x'));
  EXPECT_FALSE(flow.bound());                  // unbound at completion
  EXPECT_EQ(client_->open_connections(), 1u);  // both were streams of one connection
}

TEST_F(ClientH2FlowTest, AbortResetsOnlyThatStream) {
  std::string head = Get(16 * 1024 * 1024);
  std::string after_head = Get(1000);
  ResponseFlow flow;
  FlowExchange aborted, after;
  aborted.on_body = [&](std::string_view) {
    if (!flow.bound()) return;
    EXPECT_TRUE(flow.Abort());
    loop_.Defer([&] { Send(after_head, &after, nullptr); });
  };
  aborted.then = [this] { loop_.Stop(); };
  after.then = [this] { loop_.Stop(); };
  Send(head, &aborted, &flow);
  ASSERT_TRUE(RunLoop());
  EXPECT_EQ(aborted.completions, 0);
  EXPECT_EQ(aborted.pieces, 1);  // nothing delivered after the abort
  EXPECT_FALSE(flow.bound());
  EXPECT_FALSE(flow.Abort());
  ASSERT_EQ(after.completions, 1);
  ASSERT_FALSE(after.result.failure) << after.result.detail;
  EXPECT_EQ(after.body, std::string(1000, 'x'));
  EXPECT_TRUE(after.result.reused_connection);  // the connection outlived the reset stream
  EXPECT_EQ(client_->open_connections(), 1u);
}

}  // namespace
}  // namespace hammer::http
