#include "hammer/load/grpc_answer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hammer/http/grpc_wire.h"

namespace hammer::load {
namespace {

using http::GrpcMessageReader;
using http::GrpcStatusName;
using http::PercentDecodeGrpcMessage;

// A length-prefixed message: flag 0, the length as 4 big-endian bytes, the message.
std::string Framed(std::string_view message, char flag = 0) {
  std::string out(1, flag);
  const uint32_t n = static_cast<uint32_t>(message.size());
  for (int shift : {24, 16, 8, 0})
    out.push_back(static_cast<char>((n >> shift) & 0xff));
  out.append(message);
  return out;
}

TEST(GrpcMessageReaderTest, CountsWholeMessagesFedInAnyPieces) {
  const std::string body = Framed("\x0a\x01\x61") + Framed("") + Framed(std::string(300, 'x'));
  for (size_t piece = 1; piece <= body.size(); ++piece) {
    GrpcMessageReader reader;
    for (size_t at = 0; at < body.size(); at += piece)
      reader.Feed(std::string_view(body).substr(at, piece));
    EXPECT_EQ(reader.messages(), 3u) << "pieces of " << piece;
    EXPECT_TRUE(reader.complete()) << "pieces of " << piece;
  }
}

TEST(GrpcMessageReaderTest, EmptyBodyIsCompleteWithNoMessage) {
  GrpcMessageReader reader;
  EXPECT_TRUE(reader.complete());
  EXPECT_EQ(reader.messages(), 0u);
}

TEST(GrpcMessageReaderTest, BodyCutInsidePrefixOrMessageIsIncomplete) {
  const std::string message = Framed("hello");
  for (size_t cut = 1; cut < message.size(); ++cut) {
    GrpcMessageReader reader;
    reader.Feed(std::string_view(message).substr(0, cut));
    EXPECT_FALSE(reader.complete()) << "cut at " << cut;
    EXPECT_EQ(reader.messages(), 0u);
    EXPECT_FALSE(reader.malformed());
  }
}

TEST(GrpcMessageReaderTest, CompressedFlagOneIsAcceptedOtherFlagsAreMalformed) {
  GrpcMessageReader compressed;
  compressed.Feed(Framed("zz", 1));
  EXPECT_TRUE(compressed.complete());
  EXPECT_EQ(compressed.messages(), 1u);

  GrpcMessageReader bad;
  bad.Feed(Framed("a") + Framed("b", 2) + Framed("c"));
  EXPECT_TRUE(bad.malformed());
  EXPECT_FALSE(bad.complete());
  EXPECT_EQ(bad.messages(), 1u);  // nothing counted after the bad prefix
}

TEST(GrpcMessageReaderTest, HugeClaimedLengthCostsNoMemoryAndStaysIncomplete) {
  GrpcMessageReader reader;
  reader.Feed(std::string("\x00\xff\xff\xff\xff", 5) + "abc");
  EXPECT_FALSE(reader.complete());
  EXPECT_FALSE(reader.malformed());
  reader.Reset();
  EXPECT_TRUE(reader.complete());
}

TEST(GrpcRequestTest, ContentTypeApplicationGrpcWithFormatOrParametersIsACall) {
  for (std::string type : {"application/grpc", "application/grpc+proto", "Application/GRPC+json",
                           "application/grpc;charset=utf-8"}) {
    EXPECT_TRUE(IsGrpcRequest({{"content-type", type}})) << type;
  }
  for (std::string type : {"application/grpc-web", "application/json", "application/grp", ""}) {
    EXPECT_FALSE(IsGrpcRequest({{"Content-Type", type}})) << type;
  }
  EXPECT_FALSE(IsGrpcRequest({{"Accept", "application/grpc"}}));
  EXPECT_FALSE(IsGrpcRequest({}));
}

TEST(GrpcStatusTest, NamesAreGrpcStatusCodes) {
  EXPECT_EQ(GrpcStatusName(0), "OK");
  EXPECT_EQ(GrpcStatusName(3), "INVALID_ARGUMENT");
  EXPECT_EQ(GrpcStatusName(14), "UNAVAILABLE");
  EXPECT_EQ(GrpcStatusName(16), "UNAUTHENTICATED");
  EXPECT_EQ(GrpcStatusName(17), "");
}

TEST(GrpcStatusTest, MessageIsPercentDecodedAndBadEscapesKept) {
  EXPECT_EQ(PercentDecodeGrpcMessage("no%20item%3A%20c"), "no item: c");
  EXPECT_EQ(PercentDecodeGrpcMessage("caf%C3%A9"), "caf\xc3\xa9");
  EXPECT_EQ(PercentDecodeGrpcMessage("100% sure %zz %4"), "100% sure %zz %4");
}

std::vector<http::Header> Fields(std::initializer_list<http::Header> fields) {
  return fields;
}

TEST(GrpcAnswerTest, StatusZeroInTrailersWithWholeMessageSucceeds) {
  GrpcAnswer answer;
  answer.OnHead(Fields({{"content-type", "application/grpc"}}));
  answer.OnBody(Framed("item a"));
  answer.OnTrailers(Fields({{"grpc-status", "0"}, {"grpc-message", ""}}));
  EXPECT_FALSE(answer.Judge());
  EXPECT_EQ(answer.status(), 0u);
}

TEST(GrpcAnswerTest, NonZeroStatusIsGrpcStatusFailureNamingCodeAndMessage) {
  GrpcAnswer answer;
  answer.OnHead(Fields({{"content-type", "application/grpc"}}));
  answer.OnTrailers(Fields({{"grpc-status", "14"}, {"grpc-message", "try%20later"}}));
  auto failed = answer.Judge();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->type, Failure::kGrpcStatus);
  EXPECT_EQ(failed->detail, "grpc-status 14 UNAVAILABLE: try later");
  EXPECT_EQ(answer.status(), 14u);
}

TEST(GrpcAnswerTest, TrailersOnlyAnswerIsJudgedFromItsHead) {
  GrpcAnswer answer;
  answer.OnHead(Fields(
      {{"content-type", "application/grpc"}, {"grpc-status", "3"}, {"grpc-message", "bad id"}}));
  auto failed = answer.Judge();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->type, Failure::kGrpcStatus);
  EXPECT_EQ(failed->detail, "grpc-status 3 INVALID_ARGUMENT: bad id");

  GrpcAnswer ok;
  ok.OnHead(Fields({{"grpc-status", "0"}}));
  EXPECT_FALSE(ok.Judge());
}

TEST(GrpcAnswerTest, TrailersWinOverAStatusInTheHead) {
  GrpcAnswer answer;
  answer.OnHead(Fields({{"grpc-status", "0"}}));
  answer.OnBody(Framed("x"));
  answer.OnTrailers(Fields({{"grpc-status", "13"}}));
  auto failed = answer.Judge();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->detail, "grpc-status 13 INTERNAL");
}

TEST(GrpcAnswerTest, MissingStatusIsProtocolFailure) {
  GrpcAnswer answer;
  answer.OnHead(Fields({{"content-type", "text/html"}}));
  answer.OnBody("<html>not gRPC</html>");
  auto failed = answer.Judge();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->type, Failure::kProtocol);
  EXPECT_EQ(failed->detail, "gRPC answer without grpc-status");
  EXPECT_FALSE(answer.status());
}

TEST(GrpcAnswerTest, StatusThatIsNotANumberIsProtocolFailure) {
  for (std::string_view value : {"", "OK", "-1", "1.0", "0x1", "12345678901", " 0"}) {
    GrpcAnswer answer;
    answer.OnTrailers(Fields({{"grpc-status", value}}));
    auto failed = answer.Judge();
    ASSERT_TRUE(failed) << value;
    EXPECT_EQ(failed->type, Failure::kProtocol) << value;
    EXPECT_FALSE(answer.status()) << value;
  }
}

TEST(GrpcAnswerTest, UnknownCodeIsStillAGrpcStatusFailure) {
  GrpcAnswer answer;
  answer.OnTrailers(Fields({{"grpc-status", "42"}}));
  auto failed = answer.Judge();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->type, Failure::kGrpcStatus);
  EXPECT_EQ(failed->detail, "grpc-status 42");
}

TEST(GrpcAnswerTest, OkWithBodyCutInsideAMessageOrBadFlagIsProtocolFailure) {
  GrpcAnswer cut;
  cut.OnBody(Framed("hello").substr(0, 7));
  cut.OnTrailers(Fields({{"grpc-status", "0"}}));
  auto failed = cut.Judge();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->type, Failure::kProtocol);
  EXPECT_EQ(failed->detail, "gRPC body ends inside a length-prefixed message");

  GrpcAnswer flag;
  flag.OnBody(Framed("hello", 7));
  flag.OnTrailers(Fields({{"grpc-status", "0"}}));
  failed = flag.Judge();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->type, Failure::kProtocol);
}

TEST(GrpcAnswerTest, LongMessageIsCutInTheDetail) {
  GrpcAnswer answer;
  answer.OnTrailers(Fields({{"grpc-status", "2"}, {"grpc-message", std::string(5000, 'm')}}));
  auto failed = answer.Judge();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->detail,
            "grpc-status 2 UNKNOWN: " + std::string(GrpcAnswer::kMaxMessageBytes, 'm'));
}

TEST(GrpcAnswerTest, ResetForgetsThePreviousAnswer) {
  GrpcAnswer answer;
  answer.OnBody("\x00\x00");
  answer.OnTrailers(Fields({{"grpc-status", "5"}, {"grpc-message", "gone"}}));
  answer.Reset();
  answer.OnBody(Framed("y"));
  answer.OnTrailers(Fields({{"grpc-status", "0"}}));
  EXPECT_FALSE(answer.Judge());
}

TEST(GrpcStatusCountsTest, CountsByCodeMergesAndNamesLargerCodesOther) {
  GrpcStatusCounts a, b;
  a.Record(0);
  a.Record(0);
  a.Record(14);
  b.Record(14);
  b.Record(99);
  a.Merge(b);
  EXPECT_EQ(a.total(), 5u);
  using Counted = std::vector<std::pair<std::string_view, uint64_t>>;
  EXPECT_EQ(a.Counted(), (Counted{{"OK", 2}, {"UNAVAILABLE", 2}, {"other", 1}}));
  EXPECT_EQ(GrpcStatusCounts().Counted(), Counted{});
}

}  // namespace
}  // namespace hammer::load
