#include "hammer/stats/remote_write_codec.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace hammer::stats {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes)
    out.push_back(static_cast<char>(b));
  return out;
}

// Field numbers and types from prometheus/prompb/remote.proto (WriteRequest.timeseries = 1) and
// types.proto (TimeSeries.labels = 1, .samples = 2; Label.name = 1, .value = 2; Sample.value =
// 1 as double, .timestamp = 2 as int64), checked by hand against the protobuf encoding rules.
TEST(RemoteWriteCodecTest, EncodesOneSeriesAsProtobufWithSortedLabels) {
  const RemoteWriteSample sample{Pairs{{"job", "x"}, {"__name__", "up"}}, 1.0, 1000};
  const std::string expected = Bytes({
      0x0a, 0x28,                                             // WriteRequest.timeseries, 40 bytes
      0x0a, 0x0e,                                             //  TimeSeries.labels, 14 bytes
      0x0a, 0x08, '_',  '_', 'n', 'a', 'm', 'e',  '_',  '_',  //   Label.name "__name__"
      0x12, 0x02, 'u',  'p',                                  //   Label.value "up"
      0x0a, 0x08,                                             //  TimeSeries.labels, 8 bytes
      0x0a, 0x03, 'j',  'o', 'b',                             //   Label.name "job"
      0x12, 0x01, 'x',                                        //   Label.value "x"
      0x12, 0x0c,                                             //  TimeSeries.samples, 12 bytes
      0x09, 0,    0,    0,   0,   0,   0,   0xf0, 0x3f,       //   Sample.value 1.0 (fixed64, LE)
      0x10, 0xe8, 0x07,                                       //   Sample.timestamp 1000 (varint)
  });
  EXPECT_EQ(EncodeWriteRequest(std::vector<RemoteWriteSample>{sample}), expected);
  Result<std::vector<RemoteWriteSample>> decoded = DecodeWriteRequest(expected);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ASSERT_EQ(decoded->size(), 1u);
  EXPECT_EQ((*decoded)[0].labels, (Pairs{{"__name__", "up"}, {"job", "x"}}));
  EXPECT_EQ((*decoded)[0].value, 1.0);
  EXPECT_EQ((*decoded)[0].timestamp_ms, 1000);
}

TEST(RemoteWriteCodecTest, NoSeriesIsAnEmptyMessage) {
  EXPECT_EQ(EncodeWriteRequest({}), "");
  Result<std::vector<RemoteWriteSample>> decoded = DecodeWriteRequest("");
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded->empty());
}

TEST(RemoteWriteCodecTest, RoundTripsExtremeValuesAndLongStrings) {
  const std::vector<RemoteWriteSample> samples = {
      {Pairs{{"__name__", "a"}, {"key", std::string(300, 'k')}}, -0.5, -1},  // 10-byte varint
      {Pairs{{"__name__", "b"}}, std::numeric_limits<double>::infinity(), 1'764'468'000'123},
      {Pairs{{"__name__", "c"}, {"le", "+Inf"}}, 0, 0},
  };
  Result<std::vector<RemoteWriteSample>> decoded = DecodeWriteRequest(EncodeWriteRequest(samples));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, samples);
}

TEST(RemoteWriteCodecTest, DecoderSkipsUnknownFieldsAndRejectsTruncation) {
  // WriteRequest.metadata (field 3) is skipped; a series cut short is an error.
  Result<std::vector<RemoteWriteSample>> skipped =
      DecodeWriteRequest(Bytes({0x1a, 0x02, 0x08, 0x01}));
  ASSERT_TRUE(skipped.ok());
  EXPECT_TRUE(skipped->empty());
  const std::string whole =
      EncodeWriteRequest(std::vector<RemoteWriteSample>{{Pairs{{"__name__", "up"}}, 1.0, 5}});
  for (size_t cut = 1; cut < whole.size(); ++cut)
    EXPECT_FALSE(DecodeWriteRequest(whole.substr(0, cut)).ok()) << cut;
  EXPECT_FALSE(DecodeWriteRequest(Bytes({0x0b})).ok());        // wire type 3
  EXPECT_FALSE(DecodeWriteRequest(Bytes({0x08, 0x01})).ok());  // timeseries as a varint
}

TEST(RemoteWriteCodecTest, SnappyBlockFormat) {
  // A block is the uncompressed length as a varint, then elements; "abc" is one literal of 3
  // bytes (tag (3-1)<<2). https://github.com/google/snappy/blob/main/format_description.txt
  Result<std::string> literal = SnappyUncompress(Bytes({0x03, 0x08, 'a', 'b', 'c'}), 100);
  ASSERT_TRUE(literal.ok());
  EXPECT_EQ(*literal, "abc");
  const std::string text(10'000, 'z');
  const std::string compressed = SnappyCompress(text);
  EXPECT_LT(compressed.size(), 1'000u);
  Result<std::string> back = SnappyUncompress(compressed, text.size());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, text);
  EXPECT_FALSE(SnappyUncompress(compressed, text.size() - 1).ok());
  EXPECT_FALSE(SnappyUncompress(Bytes({0x05, 0x08, 'a'}), 100).ok());
}

}  // namespace
}  // namespace hammer::stats
