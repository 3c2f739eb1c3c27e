// HttpClient's streaming: a request body sent from a BodyStream as it fills (with a length, or
// chunked), and a response whose reading is paused, resumed or aborted through a ResponseFlow.
// Against the real `hammer serve` routes (TargetServerGroup) over loopback; the client's loop
// runs on the test thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "client_loop.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/client.h"
#include "hammer/http/url.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/resolver.h"
#include "hammer/serve/serve_group.h"

namespace hammer::http {
namespace {

using testing::Pattern;
using testing::PatternSource;

constexpr Nanos kGuard = 20 * kSecond;
constexpr size_t kWindow = 256 * 1024;

using StreamExchange = testing::RecordingExchange;

class ClientStreamTest : public testing::TargetClientTest {
 protected:
  ClientStreamTest() : TargetClientTest(kGuard) {}

  std::string Head(std::string_view method, std::string_view path, std::string_view framing) {
    return std::string(method) + " " + std::string(path) +
           " HTTP/1.1\r\nHost: " + origin_->host_header + "\r\n" + std::string(framing) + "\r\n";
  }

  // Sends `head` with a body streamed from a PatternSource and returns the exchange.
  std::unique_ptr<StreamExchange> SendStreamed(const std::string& head, BodyStream* stream,
                                               PatternSource* source) {
    auto exchange = std::make_unique<StreamExchange>();
    exchange->then = [this] { loop_.Stop(); };
    ClientRequest request;
    request.origin = origin_;
    request.head = head;
    request.body_stream = stream;
    request.idempotent = false;
    client_->Send(request, exchange.get());
    source->Start();
    return exchange;
  }
};

TEST_F(ClientStreamTest, BodyWithALengthArrivesWhole) {
  const uint64_t size = 3 * 1024 * 1024 + 17;
  BufferBudget budget;
  auto stream = std::make_shared<BodyStream>(&loop_, size, kWindow, &budget);
  PatternSource source(&loop_, stream.get(), size);
  std::string head = Head("POST", "/echo", "Content-Length: " + std::to_string(size) + "\r\n");
  auto exchange = SendStreamed(head, stream.get(), &source);
  ASSERT_TRUE(RunLoop());
  ASSERT_EQ(exchange->completions, 1);
  ASSERT_FALSE(exchange->result.failure) << exchange->result.detail;
  EXPECT_EQ(exchange->status, 200);
  nlohmann::json echo = nlohmann::json::parse(exchange->body);
  EXPECT_EQ(echo["headers"]["Content-Length"], std::to_string(size));
  EXPECT_TRUE(echo["body"] == Pattern(size));
  EXPECT_EQ(exchange->result.bytes_sent, head.size() + size);
  EXPECT_TRUE(stream->finished());
  // Back-pressure: the source never got more than a window (plus its last piece) ahead.
  EXPECT_LE(source.most_waiting, kWindow + PatternSource::kPiece);
  EXPECT_GT(budget.used(), 0u);  // the stream's buffer is charged while it lives
  source.Detach();
  stream.reset();
  EXPECT_EQ(budget.used(), 0u);
}

TEST_F(ClientStreamTest, BodyOfUnknownLengthIsSentChunked) {
  const uint64_t size = 1024 * 1024 + 5;
  auto stream = std::make_shared<BodyStream>(&loop_, std::nullopt, kWindow, nullptr);
  PatternSource source(&loop_, stream.get(), size);
  std::string head = Head("POST", "/echo", "Transfer-Encoding: chunked\r\n");
  auto exchange = SendStreamed(head, stream.get(), &source);
  ASSERT_TRUE(RunLoop());
  ASSERT_EQ(exchange->completions, 1);
  ASSERT_FALSE(exchange->result.failure) << exchange->result.detail;
  nlohmann::json echo = nlohmann::json::parse(exchange->body);
  EXPECT_EQ(echo["headers"]["Transfer-Encoding"], "chunked");
  EXPECT_TRUE(echo["body"] == Pattern(size));
  // Chunk framing went on the wire besides the body.
  EXPECT_GT(exchange->result.bytes_sent, head.size() + size);
  EXPECT_LE(source.most_waiting, kWindow + PatternSource::kPiece);
}

TEST_F(ClientStreamTest, SourceGivingUpMidBodyFailsTheExchange) {
  const uint64_t size = 2 * 1024 * 1024;
  auto stream = std::make_shared<BodyStream>(&loop_, size, kWindow, nullptr);
  PatternSource source(&loop_, stream.get(), size, /*fail_after=*/512 * 1024);
  std::string head = Head("POST", "/echo", "Content-Length: " + std::to_string(size) + "\r\n");
  auto exchange = SendStreamed(head, stream.get(), &source);
  ASSERT_TRUE(RunLoop());
  ASSERT_EQ(exchange->completions, 1);
  ASSERT_TRUE(exchange->result.failure);
  EXPECT_EQ(*exchange->result.failure, Failure::kOther);
  EXPECT_EQ(exchange->result.detail, "request body abandoned by its source");
  EXPECT_EQ(exchange->status, 0);
  EXPECT_EQ(client_->open_connections(), 0u);  // never pooled: the server waits for the rest
}

TEST_F(ClientStreamTest, EarlyAnswerCancelsTheRestOfTheBody) {
  // hammer serve refuses a body over 16 MiB from its head (413) while the client still sends.
  const uint64_t size = 20 * 1024 * 1024;
  auto stream = std::make_shared<BodyStream>(&loop_, size, kWindow, nullptr);
  PatternSource source(&loop_, stream.get(), size);
  std::string head = Head("POST", "/echo", "Content-Length: " + std::to_string(size) + "\r\n");
  auto exchange = SendStreamed(head, stream.get(), &source);
  ASSERT_TRUE(RunLoop());
  ASSERT_EQ(exchange->completions, 1);
  if (exchange->result.failure) {
    // The server may close before the client reads its answer: then the write fails.
    EXPECT_EQ(*exchange->result.failure, Failure::kReset) << exchange->result.detail;
  } else {
    EXPECT_EQ(exchange->status, 413);
  }
  EXPECT_TRUE(stream->cancelled());
  EXPECT_LT(stream->consumed(), size);
  EXPECT_EQ(client_->open_connections(), 0u);  // out of step: never pooled
  // The source hears of it on a later iteration and stops.
  loop_.Defer([this] { loop_.Defer([this] { loop_.Stop(); }); });
  ASSERT_TRUE(RunLoop());
  EXPECT_TRUE(source.saw_cancel);
}

TEST_F(ClientStreamTest, PausedResponseIsNotReadUntilResumed) {
  const size_t size = 8 * 1024 * 1024;
  ResponseFlow flow;
  StreamExchange exchange;
  size_t at_pause = 0;
  size_t at_resume = 0;
  // A second for the first piece to come (slow sanitizer builds on a busy machine).
  const MonoNanos deadline = loop_.UpdateNow() + kSecond;
  net::Timer resume(&loop_, [&] {
    at_resume = exchange.body.size();
    flow.Resume();
  });
  exchange.on_body = [&](std::string_view) {
    if (at_pause != 0) return;
    at_pause = exchange.body.size();
    flow.Pause();
    EXPECT_TRUE(flow.paused());
    // While paused, the server's bytes wait in the socket; resumed 200 ms after the deadline
    // has passed (ample for the 8 MiB to arrive over loopback if the client kept reading),
    // however long the first piece took to come.
    resume.ArmAt(std::max(loop_.UpdateNow(), deadline) + 200 * kMillisecond);
  };
  exchange.then = [this] { loop_.Stop(); };
  std::string head = Head("GET", "/bytes/" + std::to_string(size), "");
  ClientRequest request;
  request.origin = origin_;
  request.head = head;
  request.flow = &flow;
  request.deadline = deadline;  // passes during the pause
  client_->Send(request, &exchange);
  EXPECT_TRUE(flow.bound());
  ASSERT_TRUE(RunLoop());
  ASSERT_EQ(exchange.completions, 1);
  ASSERT_FALSE(exchange.result.failure) << exchange.result.detail;  // paused time not counted
  EXPECT_GT(at_pause, 0u);
  EXPECT_EQ(at_resume, at_pause);  // nothing was read while paused
  EXPECT_EQ(exchange.body.size(), size);
  EXPECT_EQ(exchange.body, std::string(size, 'x'));
  EXPECT_FALSE(flow.bound());  // unbound at completion
}

TEST_F(ClientStreamTest, AbortEndsTheExchangeWithoutCallingBack) {
  ResponseFlow flow;
  StreamExchange exchange;
  exchange.on_body = [&](std::string_view) {
    if (!flow.bound()) return;
    EXPECT_TRUE(flow.Abort());
    loop_.Defer([this] { loop_.Stop(); });
  };
  exchange.then = [this] { loop_.Stop(); };
  std::string head = Head("GET", "/bytes/" + std::to_string(16 * 1024 * 1024), "");
  ClientRequest request;
  request.origin = origin_;
  request.head = head;
  request.flow = &flow;
  client_->Send(request, &exchange);
  ASSERT_TRUE(RunLoop());
  EXPECT_EQ(exchange.completions, 0);
  EXPECT_EQ(exchange.pieces, 1);  // nothing delivered after the abort, even from that read
  EXPECT_FALSE(flow.bound());
  EXPECT_FALSE(flow.Abort());
  EXPECT_EQ(client_->open_connections(), 0u);
}

TEST_F(ClientStreamTest, BodyStreamCountsAndWakesBothSides) {
  struct Side : BodyStream::Producer, BodyStream::Consumer {
    int drained = 0;
    int ready = 0;
    void OnBodyStreamDrained() override { ++drained; }
    void OnBodyStreamReady() override { ++ready; }
  } side;
  BufferBudget budget;
  auto stream = std::make_shared<BodyStream>(&loop_, std::nullopt, 8, &budget);
  stream->SetProducer(&side);
  stream->SetConsumer(&side);
  stream->Append("0123456789");
  EXPECT_TRUE(stream->full());
  EXPECT_EQ(side.ready, 0);  // deferred, never inline
  loop_.Defer([this] { loop_.Stop(); });
  ASSERT_TRUE(RunLoop());
  EXPECT_EQ(side.ready, 1);
  stream->Consume(4);
  EXPECT_EQ(stream->available(), "456789");
  stream->End();
  EXPECT_FALSE(stream->finished());
  stream->Consume(6);
  EXPECT_TRUE(stream->finished());
  loop_.Defer([this] { loop_.Stop(); });
  ASSERT_TRUE(RunLoop());
  EXPECT_EQ(side.drained, 1);
  EXPECT_EQ(stream->appended(), 10u);
  EXPECT_EQ(stream->consumed(), 10u);
  std::string chunk;
  AppendChunk(chunk, std::string(26, 'z'));
  EXPECT_EQ(chunk, "1a\r\n" + std::string(26, 'z') + "\r\n");
  stream->SetProducer(nullptr);
  stream->SetConsumer(nullptr);
}

TEST_F(ClientStreamTest, BodyStreamKeepsWhatWasConsumedWithinItsLimit) {
  BufferBudget budget;
  auto kept = std::make_shared<BodyStream>(&loop_, std::nullopt, 64, &budget);
  kept->KeepConsumed(10);
  kept->Append("01234");
  kept->Consume(3);
  EXPECT_EQ(kept->consumed_copy(), nullptr);  // not all consumed yet
  kept->Append("56789");
  kept->End();
  kept->Consume(7);
  ASSERT_NE(kept->consumed_copy(), nullptr);
  EXPECT_EQ(*kept->consumed_copy(), "0123456789");
  EXPECT_GE(budget.used(), 10u);  // the copy is charged
  auto over = std::make_shared<BodyStream>(&loop_, std::nullopt, 64, &budget);
  over->KeepConsumed(4);
  over->Append("01234");
  over->End();
  over->Consume(5);
  EXPECT_TRUE(over->finished());
  EXPECT_EQ(over->consumed_copy(), nullptr);  // past the limit: not kept at all
  auto plain = std::make_shared<BodyStream>(&loop_, std::nullopt, 64, &budget);
  plain->Append("x");
  plain->End();
  plain->Consume(1);
  EXPECT_EQ(plain->consumed_copy(), nullptr);  // nothing asked to keep it
}

}  // namespace
}  // namespace hammer::http
