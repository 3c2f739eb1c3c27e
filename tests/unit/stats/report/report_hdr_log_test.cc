#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "hammer/stats/report/hdr_log.h"

namespace hammer::stats {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

TEST(TimelineHdrLogTest, HeaderAndOneLinePerBucket) {
  constexpr int64_t kT0 = 1764428700000;  // Sat Nov 29 15:05:00 UTC 2025
  Timeline timeline;
  timeline.AddSuccess(kT0 + 250, 1500);
  timeline.AddSuccess(kT0 + 900, 12345);
  timeline.AddFailure(kT0 + 1100);
  timeline.AddSuccess(kT0 + 3999, 7);
  std::vector<std::string> lines = Lines(FormatHdrIntervalLog(timeline));
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[0], "#[Logged with hammer " HAMMER_VERSION "]");
  EXPECT_EQ(lines[1], "#[Histogram log format version 1.3]");
  EXPECT_EQ(lines[2],
            "#[StartTime: 1764428700.000 (seconds since epoch), Sat Nov 29 15:05:00 UTC 2025]");
  EXPECT_EQ(lines[3], "#[BaseTime: 1764428700.000 (seconds since epoch)]");
  EXPECT_EQ(lines[4],
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
            "\"Interval_Compressed_Histogram\"");
  const char* starts[] = {"0.000,1.000,12.351,", "1.000,1.000,0.000,", "2.000,1.000,0.000,",
                          "3.000,1.000,0.007,"};
  for (size_t i = 0; i < 4; ++i) {
    const std::string& line = lines[5 + i];
    ASSERT_TRUE(line.starts_with(starts[i])) << line;
    std::string encoded = line.substr(std::string(starts[i]).size());
    EXPECT_TRUE(encoded.starts_with("HISTFAAA")) << encoded;
    Result<Histogram> decoded = Histogram::DecodeBase64(encoded);
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    EXPECT_EQ(*decoded, timeline.bucket(i).latency);
  }
}

TEST(TimelineHdrLogTest, EmptyTimelineHasOnlyTheHeader) {
  std::vector<std::string> lines = Lines(FormatHdrIntervalLog(Timeline()));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(lines[2].starts_with("\"StartTimestamp\""));
}

}  // namespace
}  // namespace hammer::stats
