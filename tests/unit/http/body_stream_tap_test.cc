// BodyStream::Tap: a copy of a body as it passes, then how it ended, without holding it up.
#include <gtest/gtest.h>

#include <string>

#include "hammer/http/body_stream.h"
#include "hammer/net/event_loop.h"

namespace hammer::http {
namespace {

struct Recorder final : BodyStream::Tap {
  void OnTapped(std::string_view data) override { copy.append(data); }
  void OnTapEnded(bool whole) override { ended = whole ? 1 : 0; }
  std::string copy;
  int ended = -1;  // -1: not yet; 1 whole; 0 not
};

TEST(BodyStreamTapTest, ATapSeesWhatWaitsThenEachPieceThenTheEnd) {
  net::EventLoop loop;
  auto stream = std::make_shared<BodyStream>(&loop, std::nullopt, 1024, nullptr);
  stream->Append("ab");
  Recorder tap;
  ASSERT_TRUE(stream->SetTap(&tap));
  EXPECT_EQ(tap.copy, "ab");
  stream->Append("cd");
  stream->Consume(3);  // the consumer takes bytes as it likes; the copy is not held back
  stream->Append("e");
  EXPECT_EQ(tap.copy, "abcde");
  EXPECT_EQ(tap.ended, -1);
  stream->End();
  EXPECT_EQ(tap.ended, 1);
  stream->Append("late");  // nothing after the end
  EXPECT_EQ(tap.copy, "abcde");
  EXPECT_EQ(stream->available(), "de");
}

TEST(BodyStreamTapTest, AFailureOrACancelEndsTheCopyUnfinished) {
  net::EventLoop loop;
  for (bool cancel : {false, true}) {
    auto stream = std::make_shared<BodyStream>(&loop, std::nullopt, 1024, nullptr);
    Recorder tap;
    ASSERT_TRUE(stream->SetTap(&tap));
    stream->Append("x");
    cancel ? stream->Cancel() : stream->Fail();
    EXPECT_EQ(tap.ended, 0) << cancel;
  }
}

TEST(BodyStreamTapTest, AStreamAlreadyTakenFromOrEndedIsTappedAccordingly) {
  net::EventLoop loop;
  auto taken = std::make_shared<BodyStream>(&loop, std::nullopt, 1024, nullptr);
  taken->Append("abc");
  taken->Consume(1);
  Recorder late;
  EXPECT_FALSE(taken->SetTap(&late));  // the copy would miss "a"
  EXPECT_EQ(late.copy, "");
  auto ended = std::make_shared<BodyStream>(&loop, std::nullopt, 1024, nullptr);
  ended->Append("whole");
  ended->End();
  Recorder tap;
  ASSERT_TRUE(ended->SetTap(&tap));
  EXPECT_EQ(tap.copy, "whole");
  EXPECT_EQ(tap.ended, 1);
}

}  // namespace
}  // namespace hammer::http
