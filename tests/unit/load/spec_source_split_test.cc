// SpecSource with --targets-format access-log (its schedule) and --split (each part keeps the
// whole file's offsets).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "hammer/load/spec_source.h"

namespace hammer::load {
namespace {

class TargetsFile {
 public:
  explicit TargetsFile(const std::string& text) {
    char name[] = "/tmp/hammer_split_XXXXXX";
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

std::string LogLine(const std::string& client, const std::string& time, const std::string& path,
                    const std::string& method = "GET") {
  return client + " - - [07/Dec/2026:18:00:" + time + " +0000] \"" + method + " " + path +
         " HTTP/1.1\" 200 5 \"-\" \"curl/8\"\n";
}

std::string Capture(const std::string& path, int64_t ts_us, int conn) {
  return "{\"method\":\"GET\",\"url\":\"https://prod.example" + path +
         "\",\"ts\":" + std::to_string(ts_us) + ",\"conn\":" + std::to_string(conn) + "}\n";
}

SpecOptions Timed(double speed = 1) {
  SpecOptions options;
  options.timed = true;
  options.speed = speed;
  options.base_url = *BaseUrl::Parse("http://127.0.0.1:8080");
  return options;
}

std::vector<RequestSpec> ReadAll(const std::string& path, TargetsFormat format,
                                 const SpecOptions& options,
                                 std::map<std::string, uint64_t>* skipped = nullptr) {
  Result<std::unique_ptr<SpecSource>> source = SpecSource::Open(path, format, options);
  EXPECT_TRUE(source.ok()) << source.status().message();
  std::vector<RequestSpec> all, batch;
  while ((*source)->NextBatch(batch, 3))
    all.insert(all.end(), batch.begin(), batch.end());
  std::optional<Status> error = (*source)->error();
  EXPECT_FALSE(error) << error->message();
  if (skipped != nullptr) *skipped = (*source)->skipped();
  return all;
}

TEST(SpecSourceAccessLogTest, EntriesOfASecondAreSpreadEvenlyOverIt) {
  // Three requests logged in second :00 (one out of order, from :01), one in :01, two in :03.
  TargetsFile file(LogLine("a", "00", "/1") + LogLine("a", "00", "/2") + LogLine("b", "01", "/4") +
                   LogLine("a", "00", "/3") + LogLine("c", "03", "/5") +
                   LogLine("c", "03", "/6", "POST") + LogLine("c", "03", "/7"));
  std::map<std::string, uint64_t> skipped;
  std::vector<RequestSpec> specs =
      ReadAll(file.path(), TargetsFormat::kAccessLog, Timed(), &skipped);
  ASSERT_EQ(specs.size(), 6u);
  std::vector<std::string> urls;
  for (const RequestSpec& s : specs)
    urls.push_back(s.url.substr(std::string("http://127.0.0.1:8080").size()));
  EXPECT_EQ(urls, (std::vector<std::string>{"/1", "/2", "/3", "/4", "/5", "/7"}));
  const Nanos third = kSecond / 3;
  EXPECT_EQ(specs[0].offset, 0);
  EXPECT_EQ(specs[1].offset, (1'000'000 / 3) * kMicrosecond);
  EXPECT_EQ(specs[2].offset, (2'000'000 / 3) * kMicrosecond);
  EXPECT_NEAR(static_cast<double>(specs[2].offset), 2.0 * third, 1000);
  EXPECT_EQ(specs[3].offset, kSecond);
  EXPECT_EQ(specs[4].offset, 3 * kSecond);
  EXPECT_EQ(specs[5].offset, 3 * kSecond + kSecond / 2);  // the POST was skipped, not spread
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped.begin()->second, 1u);

  // At speed 2 every offset halves.
  specs = ReadAll(file.path(), TargetsFormat::kAccessLog, Timed(2));
  ASSERT_EQ(specs.size(), 6u);
  EXPECT_EQ(specs[5].offset, (3 * kSecond + kSecond / 2) / 2);
}

TEST(SpecSourceAccessLogTest, NeedsABaseUrl) {
  TargetsFile file(LogLine("a", "00", "/1"));
  SpecOptions options;
  Result<std::unique_ptr<SpecSource>> source =
      SpecSource::Open(file.path(), TargetsFormat::kAccessLog, options);
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.status().message().find("needs --base-url"), std::string::npos);
}

TEST(SpecSourceSplitTest, PartsKeepTheWholeFilesOffsetsAndTogetherAreTheFile) {
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += Capture("/r" + std::to_string(i), 5'000'000 + i * 10'000, i % 13);
  TargetsFile file(text);
  for (SplitBy by : {SplitBy::kConnection, SplitBy::kUrl}) {
    SpecOptions whole = Timed(2);
    std::vector<RequestSpec> all = ReadAll(file.path(), TargetsFormat::kJsonl, whole);
    ASSERT_EQ(all.size(), 200u);
    std::vector<std::pair<Nanos, std::string>> expected, united;
    for (const RequestSpec& s : all)
      expected.emplace_back(s.offset, s.url);
    std::map<std::string, int> part_of_connection;
    for (int part = 0; part < 4; ++part) {
      SpecOptions options = Timed(2);
      options.split = ReplaySplit(part, 4, by);
      std::map<std::string, uint64_t> skipped;
      std::vector<RequestSpec> mine =
          ReadAll(file.path(), TargetsFormat::kJsonl, options, &skipped);
      EXPECT_GT(mine.size(), 0u);
      ASSERT_EQ(skipped.size(), 1u);
      EXPECT_EQ(skipped.begin()->first, "in the other parts of --split (4 parts)");
      EXPECT_EQ(mine.size() + skipped.begin()->second, 200u);
      for (const RequestSpec& s : mine) {
        united.emplace_back(s.offset, s.url);
        if (by == SplitBy::kConnection) {
          // Every request of a connection is in one part.
          auto [it, added] = part_of_connection.emplace(s.client, part);
          EXPECT_EQ(it->second, part) << s.client;
        }
      }
    }
    std::sort(united.begin(), united.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(united, expected);
  }
}

}  // namespace
}  // namespace hammer::load
