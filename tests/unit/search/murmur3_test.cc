#include "hammer/search/murmur3.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace hammer::search {
namespace {

std::span<const uint8_t> Bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// Known MurmurHash3_x86_32 values for raw bytes and explicit seeds, as widely circulated with
// the algorithm (e.g. the test-vector table on the Stack Overflow question "MurmurHash3 test
// vectors"). They agree with SMHasher's verification value below and with the engine vectors in
// routing_test.cc, which this implementation also reproduces.
struct RawVector {
  std::string_view input;
  uint32_t seed;
  uint32_t expected;
};

TEST(Murmur3X86_32Test, KnownVectors) {
  using namespace std::string_view_literals;
  const RawVector vectors[] = {
      {""sv, 0, 0x00000000},
      {""sv, 1, 0x514E28B7},
      {""sv, 0xffffffff, 0x81F16F39},
      {"\xff\xff\xff\xff"sv, 0, 0x76293B50},
      {"\x21\x43\x65\x87"sv, 0, 0xF55B516B},
      {"\x21\x43\x65\x87"sv, 0x5082EDEE, 0x2362F9DE},
      {"\x21\x43\x65"sv, 0, 0x7E4A8634},
      {"\x21\x43"sv, 0, 0xA0F7B07A},
      {"\x21"sv, 0, 0x72661CF4},
      {"\0\0\0\0"sv, 0, 0x2362F9DE},
      {"\0\0\0"sv, 0, 0x85F0B427},
      {"\0\0"sv, 0, 0x30F4C306},
      {"\0"sv, 0, 0x514E28B7},
      {"aaaa"sv, 0x9747b28c, 0x5A97808A},
      {"aaa"sv, 0x9747b28c, 0x283E0130},
      {"aa"sv, 0x9747b28c, 0x5D211726},
      {"a"sv, 0x9747b28c, 0x7FA09EA6},
      {"abcd"sv, 0x9747b28c, 0xF0478627},
      {"abc"sv, 0x9747b28c, 0xC84A62DD},
      {"ab"sv, 0x9747b28c, 0x74875592},
      {"Hello, world!"sv, 0x9747b28c, 0x24884CBA},
      {"The quick brown fox jumps over the lazy dog"sv, 0x9747b28c, 0x2FA826CD},
  };
  for (const RawVector& v : vectors) {
    SCOPED_TRACE(testing::Message() << "length " << v.input.size() << " seed " << v.seed);
    EXPECT_EQ(Murmur3X86_32(Bytes(v.input), v.seed), v.expected);
  }
}

// SMHasher's self-check for MurmurHash3_x86_32: hash the prefixes 0, 0..1, ..., 0..254 of the
// bytes 0..255 with seed 256 - length, then hash the 256 little-endian results with seed 0.
// SMHasher lists the expected verification value 0xB0F57EE3.
TEST(Murmur3X86_32Test, SmHasherVerificationValue) {
  std::vector<uint8_t> key(256);
  std::vector<uint8_t> hashes(256 * 4);
  for (int i = 0; i < 256; ++i) {
    key[i] = static_cast<uint8_t>(i);
    const uint32_t h = Murmur3X86_32(std::span(key.data(), static_cast<size_t>(i)), 256 - i);
    for (int b = 0; b < 4; ++b)
      hashes[i * 4 + b] = static_cast<uint8_t>(h >> (8 * b));
  }
  EXPECT_EQ(Murmur3X86_32(hashes, 0), 0xB0F57EE3u);
}

TEST(Murmur3X86_32HasherTest, EverySplitMatchesOneShot) {
  const std::string_view input = "The quick brown fox jumps over the lazy dog";
  const uint32_t expected = Murmur3X86_32(Bytes(input), 0x9747b28c);
  for (size_t first = 0; first <= input.size(); ++first) {
    for (size_t second = first; second <= input.size(); ++second) {
      Murmur3X86_32Hasher hasher(0x9747b28c);
      hasher.Update(Bytes(input.substr(0, first)));
      hasher.Update(Bytes(input.substr(first, second - first)));
      hasher.Update(Bytes(input.substr(second)));
      ASSERT_EQ(hasher.Finish(), expected) << "split at " << first << ", " << second;
    }
  }
}

TEST(Murmur3X86_32HasherTest, ByteAtATimeAndFinishTwice) {
  const std::string_view input = "hello world!";
  Murmur3X86_32Hasher hasher;
  EXPECT_EQ(hasher.Finish(), 0u);  // empty input, seed 0
  for (char c : input)
    hasher.Update(Bytes(std::string_view(&c, 1)));
  EXPECT_EQ(hasher.Finish(), Murmur3X86_32(Bytes(input)));
  EXPECT_EQ(hasher.Finish(), Murmur3X86_32(Bytes(input)));  // Finish() does not consume
  hasher.Update(Bytes("?"));
  EXPECT_EQ(hasher.Finish(), Murmur3X86_32(Bytes("hello world!?")));
}

}  // namespace
}  // namespace hammer::search
