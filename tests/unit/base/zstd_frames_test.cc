#include "hammer/base/zstd_frames.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace hammer {
namespace {

// Decodes all of `input`, fed `step` bytes at a time, into a buffer of `capacity` at a time.
std::string DecodeAll(ZstdStreamDecoder& decoder, std::string_view input, size_t step,
                      size_t capacity) {
  std::string out;
  std::string chunk(capacity, '\0');
  while (true) {
    const size_t offered = std::min(step, input.size());
    std::string_view feed = input.substr(0, offered);
    Result<size_t> n = decoder.Decode(&feed, chunk.data(), chunk.size());
    EXPECT_TRUE(n.ok()) << n.status().message();
    if (!n.ok()) break;
    const size_t used = offered - feed.size();
    input.remove_prefix(used);
    out.append(chunk.data(), *n);
    if (*n == 0 && used == 0) break;  // nothing more to decode
  }
  return out;
}

TEST(ZstdFramesTest, ConcatenatedFramesDecodeToTheirBytesWhateverTheSlices) {
  ZstdFrameEncoder encoder(1);
  std::string file;
  std::string expected;
  for (int i = 0; i < 3; ++i) {
    std::string lines;
    for (int j = 0; j < 200; ++j)
      lines += "{\"frame\":" + std::to_string(i) + ",\"line\":" + std::to_string(j) + "}\n";
    ASSERT_TRUE(encoder.AppendFrame(lines, file).ok());
    expected += lines;
  }
  ASSERT_TRUE(file.starts_with(kZstdMagic));
  ASSERT_LT(file.size(), expected.size() / 4);  // the lines repeat: they compress
  for (size_t step : {size_t{1}, size_t{7}, file.size()}) {
    for (size_t capacity : {size_t{5}, size_t{64 * 1024}}) {
      ZstdStreamDecoder decoder;
      EXPECT_EQ(DecodeAll(decoder, file, step, capacity), expected)
          << "step " << step << " capacity " << capacity;
      EXPECT_FALSE(decoder.inside_frame());
    }
  }
}

TEST(ZstdFramesTest, AnInputCutInsideAFrameLeavesTheDecoderInsideIt) {
  ZstdFrameEncoder encoder(1);
  std::string file;
  ASSERT_TRUE(encoder.AppendFrame("first\n", file).ok());
  const size_t first = file.size();
  ASSERT_TRUE(encoder.AppendFrame("second\n", file).ok());
  ZstdStreamDecoder decoder;
  std::string_view cut = std::string_view(file).substr(0, first + 5);
  EXPECT_EQ(DecodeAll(decoder, cut, cut.size(), 1024), "first\n");
  EXPECT_TRUE(decoder.inside_frame());
  decoder.Reset();
  EXPECT_FALSE(decoder.inside_frame());
  EXPECT_EQ(DecodeAll(decoder, file, file.size(), 1024), "first\nsecond\n");
}

TEST(ZstdFramesTest, BytesThatAreNotZstdOrCorruptAreErrors) {
  char out[64];
  ZstdStreamDecoder decoder;
  std::string_view text = "not zstd at all\n";
  Result<size_t> n = decoder.Decode(&text, out, sizeof(out));
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("zstd: "), std::string::npos) << n.status().message();

  ZstdFrameEncoder encoder(3);
  std::string file;
  ASSERT_TRUE(encoder.AppendFrame(std::string(1000, 'x') + "\n", file).ok());
  file[file.size() - 2] ^= 0x55;  // in the content checksum
  std::string_view corrupt = file;
  decoder.Reset();
  Result<size_t> got = decoder.Decode(&corrupt, out, sizeof(out));
  while (got.ok() && *got > 0)
    got = decoder.Decode(&corrupt, out, sizeof(out));
  EXPECT_FALSE(got.ok());
}

}  // namespace
}  // namespace hammer
