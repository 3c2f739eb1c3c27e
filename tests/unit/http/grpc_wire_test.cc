// The gRPC wire vocabulary: content types, grpc-status values, message framing.
#include "hammer/http/grpc_wire.h"

#include <gtest/gtest.h>

#include <string>

namespace hammer::http {
namespace {

std::string Framed(std::string_view message, char flag = 0) {
  std::string out(1, flag);
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((message.size() >> shift) & 0xff));
  return out.append(message);
}

TEST(GrpcWireTest, ContentTypes) {
  for (std::string_view type : {"application/grpc", "application/grpc+proto",
                                "Application/GRPC+json", "application/grpc;charset=x"}) {
    EXPECT_TRUE(IsGrpcContentType(type)) << type;
  }
  for (std::string_view type : {"application/grpc-web", "application/json", "", "grpc"}) {
    EXPECT_FALSE(IsGrpcContentType(type)) << type;
  }
  const Header headers[] = {{"Content-Type", "application/grpc"}};
  EXPECT_TRUE(IsGrpc(headers));
  EXPECT_FALSE(IsGrpc({}));
}

TEST(GrpcWireTest, StatusValuesAndTheLastOneWins) {
  EXPECT_EQ(ParseGrpcStatus("0"), 0u);
  EXPECT_EQ(ParseGrpcStatus("14"), 14u);
  EXPECT_EQ(ParseGrpcStatus("4294967295"), 4294967295u);
  for (std::string_view bad : {"", "-1", "1x", "4294967296", "12345678901"})
    EXPECT_FALSE(ParseGrpcStatus(bad)) << bad;
  const Header fields[] = {{"grpc-status", "0"}, {"x", "y"}, {"Grpc-Status", "14"}};
  EXPECT_EQ(GrpcStatusOf(fields), 14u);
  EXPECT_FALSE(GrpcStatusOf({}));
  EXPECT_TRUE(GrpcStatusIsServerError(kGrpcUnavailable));
  EXPECT_TRUE(GrpcStatusIsServerError(13));
  EXPECT_FALSE(GrpcStatusIsServerError(0));
  EXPECT_FALSE(GrpcStatusIsServerError(5));  // NOT_FOUND is the caller's, as a 404
}

TEST(GrpcWireTest, SplitKeepsEachMessageAndRefusesABrokenBody) {
  const std::string body = Framed("ab") + Framed("") + Framed("xyz", 1);
  bool compressed = false;
  auto messages = SplitGrpcMessages(body, &compressed);
  ASSERT_TRUE(messages);
  EXPECT_EQ(*messages, (std::vector<std::string_view>{"ab", "", "xyz"}));
  EXPECT_TRUE(compressed);
  EXPECT_EQ(SplitGrpcMessages("")->size(), 0u);
  EXPECT_FALSE(SplitGrpcMessages(body.substr(0, body.size() - 1)));  // cut inside a message
  EXPECT_FALSE(SplitGrpcMessages(body.substr(0, 3)));                // cut inside a prefix
  EXPECT_FALSE(SplitGrpcMessages(Framed("ab", 2)));                  // an unknown flag
}

}  // namespace
}  // namespace hammer::http
