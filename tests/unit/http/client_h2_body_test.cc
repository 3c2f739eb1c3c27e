// HttpClient sending request bodies from a BodyStream over HTTP/2: each is one stream whose
// DATA follows the stream as it fills, with its length as content-length when known; a source
// that gives up resets only its own stream; an answer that ends the stream early cancels the
// rest of the body. Against the real `hammer serve` routes (TargetServerGroup, h2c prior
// knowledge) over loopback; the client's loop runs on the test thread.
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "client_loop.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/client.h"
#include "hammer/net/event_loop.h"

namespace hammer::http {
namespace {

using testing::Pattern;
using testing::PatternSource;

constexpr Nanos kGuard = 20 * kSecond;
constexpr size_t kWindow = 256 * 1024;

using BodyExchange = testing::RecordingExchange;

class ClientH2BodyTest : public testing::TargetClientTest {
 protected:
  ClientH2BodyTest() : TargetClientTest(kGuard) {}

  ClientOptions MakeClientOptions() const override {
    ClientOptions options;
    options.http2.enabled = true;
    return options;
  }

  // A POST head to /echo, kept by the fixture (requests hold a view of it).
  const std::string& Head(std::optional<uint64_t> length) {
    std::string head = "POST /echo HTTP/1.1\r\nHost: " + origin_->host_header + "\r\n";
    head += length ? "Content-Length: " + std::to_string(*length) + "\r\n"
                   : std::string("Transfer-Encoding: chunked\r\n");
    return heads_.emplace_back(head + "\r\n");
  }

  // Sends `head` with a body streamed from `source`; the loop stops after `stop_after`
  // completions.
  std::unique_ptr<BodyExchange> SendStreamed(const std::string& head, BodyStream* stream,
                                             PatternSource* source, int stop_after = 1) {
    auto exchange = std::make_unique<BodyExchange>();
    exchange->then = [this, stop_after] {
      if (++completed_ == stop_after) loop_.Stop();
    };
    ClientRequest request;
    request.origin = origin_;
    request.head = head;
    request.body_stream = stream;
    request.idempotent = false;
    client_->Send(request, exchange.get());
    source->Start();
    return exchange;
  }

  int completed_ = 0;
  std::deque<std::string> heads_;
};

TEST_F(ClientH2BodyTest, BodyWithALengthArrivesWholeAsOneStream) {
  const uint64_t size = 3 * 1024 * 1024 + 17;
  BufferBudget budget;
  auto stream = std::make_shared<BodyStream>(&loop_, size, kWindow, &budget);
  PatternSource source(&loop_, stream.get(), size);
  const std::string& head = Head(size);
  auto exchange = SendStreamed(head, stream.get(), &source);
  ASSERT_TRUE(RunLoop());
  ASSERT_EQ(exchange->completions, 1);
  ASSERT_FALSE(exchange->result.failure) << exchange->result.detail;
  EXPECT_EQ(exchange->status, 200);
  EXPECT_EQ(exchange->major_version, 2);
  nlohmann::json echo = nlohmann::json::parse(exchange->body);
  EXPECT_EQ(echo["headers"]["content-length"], std::to_string(size)) << echo["headers"];
  EXPECT_TRUE(echo["body"] == Pattern(size));
  EXPECT_EQ(exchange->result.bytes_sent, head.size() + size);
  EXPECT_TRUE(stream->finished());
  EXPECT_LE(source.most_waiting, kWindow + PatternSource::kPiece);
  EXPECT_EQ(client_->counters().connections_opened, 1u);
  source.Detach();
  stream.reset();
  EXPECT_EQ(budget.used(), 0u);
}

TEST_F(ClientH2BodyTest, BodyOfUnknownLengthEndsWithTheStream) {
  const uint64_t size = 1024 * 1024 + 5;
  auto stream = std::make_shared<BodyStream>(&loop_, std::nullopt, kWindow, nullptr);
  PatternSource source(&loop_, stream.get(), size);
  auto exchange = SendStreamed(Head(std::nullopt), stream.get(), &source);
  ASSERT_TRUE(RunLoop());
  ASSERT_EQ(exchange->completions, 1);
  ASSERT_FALSE(exchange->result.failure) << exchange->result.detail;
  nlohmann::json echo = nlohmann::json::parse(exchange->body);
  // HTTP/2 has no chunked coding: DATA frames carry the body, END_STREAM ends it.
  EXPECT_FALSE(echo["headers"].contains("transfer-encoding")) << echo["headers"];
  EXPECT_TRUE(echo["body"] == Pattern(size));
}

TEST_F(ClientH2BodyTest, ASourceGivingUpResetsOnlyItsStream) {
  const uint64_t size = 2 * 1024 * 1024;
  auto failing = std::make_shared<BodyStream>(&loop_, size, kWindow, nullptr);
  PatternSource failing_source(&loop_, failing.get(), size, /*fail_after=*/512 * 1024);
  auto whole = std::make_shared<BodyStream>(&loop_, size, kWindow, nullptr);
  PatternSource whole_source(&loop_, whole.get(), size);
  const std::string& head = Head(size);
  auto failed = SendStreamed(head, failing.get(), &failing_source, /*stop_after=*/2);
  auto other = SendStreamed(head, whole.get(), &whole_source, /*stop_after=*/2);
  ASSERT_TRUE(RunLoop());
  ASSERT_EQ(failed->completions, 1);
  ASSERT_TRUE(failed->result.failure);
  EXPECT_EQ(*failed->result.failure, Failure::kOther);
  EXPECT_EQ(failed->result.detail, "request body abandoned by its source");
  EXPECT_EQ(failed->status, 0);
  ASSERT_EQ(other->completions, 1);
  ASSERT_FALSE(other->result.failure) << other->result.detail;
  EXPECT_TRUE(nlohmann::json::parse(other->body)["body"] == Pattern(size));
  // Both streams shared one connection, which outlived the reset.
  EXPECT_EQ(client_->counters().connections_opened, 1u);
  EXPECT_EQ(client_->open_connections(), 1u);
}

TEST_F(ClientH2BodyTest, AnAnswerEndingTheStreamEarlyCancelsTheRestOfTheBody) {
  // hammer serve refuses a stream's body over 16 MiB (413, then resets the stream) while the
  // client still sends.
  const uint64_t size = 20 * 1024 * 1024;
  auto stream = std::make_shared<BodyStream>(&loop_, size, kWindow, nullptr);
  PatternSource source(&loop_, stream.get(), size);
  auto exchange = SendStreamed(Head(size), stream.get(), &source);
  ASSERT_TRUE(RunLoop());
  ASSERT_EQ(exchange->completions, 1);
  EXPECT_EQ(exchange->status, 413) << exchange->result.detail;
  EXPECT_TRUE(stream->cancelled());
  EXPECT_LT(stream->consumed(), size);
  // The source hears of it on a later iteration and stops.
  loop_.Defer([this] { loop_.Defer([this] { loop_.Stop(); }); });
  ASSERT_TRUE(RunLoop());
  EXPECT_TRUE(source.saw_cancel);
}

}  // namespace
}  // namespace hammer::http
