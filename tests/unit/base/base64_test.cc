// Tests src/hammer/base/base64 (kept with the stats tests, its first user).
#include "hammer/base/base64.h"

#include <gtest/gtest.h>

#include <random>

namespace hammer {
namespace {

TEST(Base64Test, Rfc4648Vectors) {
  const std::pair<std::string_view, std::string_view> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    Result<std::string> decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded.ok()) << encoded;
    EXPECT_EQ(*decoded, plain);
  }
  EXPECT_EQ(Base64EncodedSize(4), 8u);
}

TEST(Base64Test, RoundTripsEveryByte) {
  std::mt19937 rng(1);
  for (size_t n = 0; n < 300; ++n) {
    std::string bytes(n, '\0');
    for (char& c : bytes)
      c = static_cast<char>(rng());
    Result<std::string> decoded = Base64Decode(Base64Encode(bytes));
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, bytes);
  }
}

TEST(Base64Test, RejectsNonCanonicalText) {
  for (std::string_view bad : {"Zg=", "Zg", "Z===", "====", "Zm9v\n", "Zm 9", "Zm9-", "Zm9_",
                               "Zh==", "Zm9=Zm9v", "=Zm9", "Zm=v"}) {
    EXPECT_FALSE(Base64Decode(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace hammer
