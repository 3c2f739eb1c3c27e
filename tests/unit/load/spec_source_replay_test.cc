// SpecSource with --replay, --speed, --loop and --base-url over JSON lines.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "hammer/load/base_url.h"
#include "hammer/load/spec_source.h"

namespace hammer::load {
namespace {

class TargetsFile {
 public:
  explicit TargetsFile(const std::string& text) {
    char name[] = "/tmp/hammer_replay_XXXXXX";
    int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~TargetsFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Entry(const std::string& path, int64_t ts_us) {
  return "{\"method\":\"GET\",\"url\":\"https://prod.example" + path +
         "\",\"header\":{\"Host\":[\"x\"],\"Accept\":[\"*/*\"]},\"ts\":" + std::to_string(ts_us) +
         "}\n";
}

std::vector<RequestSpec> ReadAll(const std::string& path, const SpecOptions& options,
                                 size_t limit = 1000) {
  Result<std::unique_ptr<SpecSource>> source =
      SpecSource::Open(path, TargetsFormat::kJsonl, options);
  EXPECT_TRUE(source.ok()) << source.status().message();
  std::vector<RequestSpec> all, batch;
  while (all.size() < limit && (*source)->NextBatch(batch, 2))
    all.insert(all.end(), batch.begin(), batch.end());
  std::optional<Status> error = (*source)->error();
  EXPECT_FALSE(error) << error->message();
  return all;
}

TEST(SpecSourceReplayTest, OffsetsAreFromTheEarliestArrivalDividedBySpeed) {
  // Written as exchanges ended: /b arrived first but answered last.
  TargetsFile file(Entry("/a", 1'000'500'000) + Entry("/c", 1'002'000'000) +
                   Entry("/b", 1'000'000'000));
  SpecOptions options;
  options.timed = true;
  std::vector<RequestSpec> specs = ReadAll(file.path(), options);
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].url, "https://prod.example/b");
  EXPECT_EQ(specs[0].offset, 0);
  EXPECT_EQ(specs[1].url, "https://prod.example/a");
  EXPECT_EQ(specs[1].offset, 500 * kMillisecond);
  EXPECT_EQ(specs[2].offset, 2 * kSecond);

  options.speed = 4;
  specs = ReadAll(file.path(), options);
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[1].offset, 125 * kMillisecond);
  EXPECT_EQ(specs[2].offset, 500 * kMillisecond);
}

TEST(SpecSourceReplayTest, LoopRepeatsTheScheduleAfterTheLastEntry) {
  TargetsFile file(Entry("/a", 10'000'000) + Entry("/b", 10'300'000));
  SpecOptions options;
  options.timed = true;
  options.loop = true;
  options.speed = 2;
  std::vector<RequestSpec> specs = ReadAll(file.path(), options, 6);
  ASSERT_EQ(specs.size(), 6u);
  const Nanos pass = 150 * kMillisecond + kMillisecond;
  const Nanos expected[] = {0,        150 * kMillisecond,           pass, pass + 150 * kMillisecond,
                            2 * pass, 2 * pass + 150 * kMillisecond};
  for (size_t i = 0; i < 6; ++i)
    EXPECT_EQ(specs[i].offset, expected[i]) << i;
}

TEST(SpecSourceReplayTest, AnEntryWithoutTsStopsAReplay) {
  TargetsFile file(Entry("/a", 5) + "{\"method\":\"GET\",\"url\":\"http://h/n\"}\n");
  SpecOptions options;
  options.timed = true;
  Result<std::unique_ptr<SpecSource>> source =
      SpecSource::Open(file.path(), TargetsFormat::kJsonl, options);
  ASSERT_TRUE(source.ok());
  std::vector<RequestSpec> batch;
  while ((*source)->NextBatch(batch, 10)) {
  }
  std::optional<Status> error = (*source)->error();
  ASSERT_TRUE(error);
  EXPECT_NE(error->message().find(":2: --replay needs every entry's 'ts'"), std::string::npos)
      << error->message();
}

TEST(SpecSourceReplayTest, TruncatedBodiesAreSkippedUnlessAsked) {
  TargetsFile file(Entry("/a", 1) +
                   "{\"method\":\"POST\",\"url\":\"http://h/cut\",\"body\":\"YQ==\","
                   "\"body_truncated\":true,\"ts\":2}\n");
  SpecOptions options;
  Result<std::unique_ptr<SpecSource>> source =
      SpecSource::Open(file.path(), TargetsFormat::kJsonl, options);
  ASSERT_TRUE(source.ok());
  std::vector<RequestSpec> batch;
  ASSERT_TRUE((*source)->NextBatch(batch, 10));
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ((*source)->skipped().begin()->second, 1u);
  options.send_truncated = true;
  std::vector<RequestSpec> all = ReadAll(file.path(), options);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].body, "a");
}

TEST(SpecSourceReplayTest, BaseUrlKeepsPathAndQueryAndMovesTheHost) {
  Result<BaseUrl> base = BaseUrl::Parse("http://127.0.0.1:8081");
  ASSERT_TRUE(base.ok());
  RequestSpec spec;
  spec.url = "https://prod.example:8443/users/7?x=1&y=2";
  spec.headers = {{"host", "prod.example:8443"}, {"Accept", "*/*"}};
  RequestSpec kept = spec;
  base->Apply(&spec, false);
  EXPECT_EQ(spec.url, "http://127.0.0.1:8081/users/7?x=1&y=2");
  ASSERT_EQ(spec.headers.size(), 1u);  // Host follows the new URL
  EXPECT_EQ(spec.headers[0].first, "Accept");

  base->Apply(&kept, true);
  EXPECT_EQ(kept.headers.size(), 2u);  // its own Host stays
  RequestSpec bare;
  bare.url = "https://prod.example:8443?q";
  base->Apply(&bare, true);
  EXPECT_EQ(bare.url, "http://127.0.0.1:8081/?q");
  ASSERT_EQ(bare.headers.size(), 1u);
  EXPECT_EQ(bare.headers[0].second, "prod.example:8443");

  EXPECT_FALSE(BaseUrl::Parse("http://h/prefix").ok());
  EXPECT_FALSE(BaseUrl::Parse("ftp://h").ok());
}

}  // namespace
}  // namespace hammer::load
