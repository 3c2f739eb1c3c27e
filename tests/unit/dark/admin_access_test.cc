#include "hammer/dark/admin_access.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace hammer::dark {
namespace {

TEST(AdminAccessTest, APortAloneMeansLoopback) {
  Result<net::SocketAddress> address = AdminAddress("9900", /*has_token=*/false);
  ASSERT_TRUE(address.ok()) << address.status().message();
  EXPECT_EQ(address->ToString(), "127.0.0.1:9900");
  EXPECT_TRUE(AdminAddress("127.0.0.1:0", false).ok());
  EXPECT_TRUE(AdminAddress("[::1]:0", false).ok());
}

TEST(AdminAccessTest, ANonLoopbackAddressNeedsAToken) {
  for (const char* text : {"0.0.0.0:9900", "[::]:9900", "192.0.2.1:9900"}) {
    Result<net::SocketAddress> refused = AdminAddress(text, /*has_token=*/false);
    ASSERT_FALSE(refused.ok()) << text;
    EXPECT_NE(refused.status().message().find("requires --admin-token-file"), std::string::npos)
        << refused.status().message();
    EXPECT_TRUE(AdminAddress(text, /*has_token=*/true).ok()) << text;
  }
  EXPECT_FALSE(AdminAddress("not an address", true).ok());
}

std::string WriteTemp(const std::string& content) {
  char path[] = "/tmp/hammer-admin-token-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(AdminAccessTest, ReadsOneTokenPerFile) {
  std::string good = WriteTemp("s3cr3t-T0ken\n");
  Result<std::string> token = ReadAdminToken(good);
  ASSERT_TRUE(token.ok()) << token.status().message();
  EXPECT_EQ(*token, "s3cr3t-T0ken");
  for (const char* bad : {"", "\n", "two words\n", "tab\there"}) {
    std::string path = WriteTemp(bad);
    EXPECT_FALSE(ReadAdminToken(path).ok()) << bad;
    std::remove(path.c_str());
  }
  EXPECT_FALSE(ReadAdminToken("/nonexistent/token").ok());
  std::remove(good.c_str());
}

TEST(AdminAccessTest, BearerMatchesOnlyTheExactToken) {
  using Header = std::optional<std::string_view>;
  EXPECT_TRUE(BearerMatches(Header("Bearer abc123"), "abc123"));
  EXPECT_TRUE(BearerMatches(Header("bearer abc123"), "abc123"));
  EXPECT_FALSE(BearerMatches(std::nullopt, "abc123"));
  EXPECT_FALSE(BearerMatches(Header("Bearer abc12"), "abc123"));
  EXPECT_FALSE(BearerMatches(Header("Bearer abc1234"), "abc123"));
  EXPECT_FALSE(BearerMatches(Header("Bearer abc124"), "abc123"));
  EXPECT_FALSE(BearerMatches(Header("Basic abc123"), "abc123"));
  EXPECT_FALSE(BearerMatches(Header("abc123"), "abc123"));
  EXPECT_FALSE(BearerMatches(Header("Bearer "), "abc123"));
}

}  // namespace
}  // namespace hammer::dark
