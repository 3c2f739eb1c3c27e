#include "hammer/dark/capture_writer.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "hammer/base/line_reader.h"
#include "hammer/base/zstd_frames.h"

namespace hammer::dark {
namespace {

class CaptureFile {
 public:
  CaptureFile() {
    char name[] = "/tmp/hammer_capture_XXXXXX";
    EXPECT_NE(mkdtemp(name), nullptr);
    dir_ = name;
    path_ = dir_ + "/capture.jsonl";
  }
  ~CaptureFile() {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }
  std::vector<std::string> Lines() const {
    std::ifstream in(path_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
    return lines;
  }

 private:
  std::string dir_;
  std::string path_;
};

std::unique_ptr<CapturedExchange> Exchange(std::string_view target) {
  auto e = std::make_unique<CapturedExchange>();
  e->protocol = "HTTP/1.1";
  e->authority = "h";
  e->head = "GET " + std::string(target) + " HTTP/1.1\r\nHost: up\r\n\r\n";
  e->status = 200;
  return e;
}

uint64_t Get(const std::atomic<uint64_t>& c) {
  return c.load();
}

TEST(CaptureWriterTest, WritesWholeLinesInOrderToAPrivateFile) {
  CaptureFile file;
  CaptureOptions options;
  options.path = file.path();
  Result<std::unique_ptr<CaptureWriter>> writer = CaptureWriter::Open(options);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  for (int i = 0; i < 100; ++i)
    (*writer)->Submit(Exchange("/n/" + std::to_string(i)));
  (*writer)->Close();
  struct stat st {};
  ASSERT_EQ(stat(file.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::vector<std::string> lines = file.Lines();
  ASSERT_EQ(lines.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    nlohmann::json j = nlohmann::json::parse(lines[static_cast<size_t>(i)]);
    EXPECT_EQ(j["url"], "http://h/n/" + std::to_string(i));
  }
  EXPECT_EQ(Get((*writer)->counters().lines), 100u);
  EXPECT_EQ(Get((*writer)->counters().bytes), static_cast<uint64_t>(st.st_size));
}

TEST(CaptureWriterTest, AnExistingFileIsAppendedToAndMadePrivate) {
  CaptureFile file;
  std::ofstream(file.path()) << "{\"method\":\"GET\",\"url\":\"http://h/old\"}\n";
  ASSERT_EQ(chmod(file.path().c_str(), 0644), 0);
  CaptureOptions options;
  options.path = file.path();
  Result<std::unique_ptr<CaptureWriter>> writer = CaptureWriter::Open(options);
  ASSERT_TRUE(writer.ok());
  (*writer)->Submit(Exchange("/new"));
  (*writer)->Close();
  struct stat st {};
  ASSERT_EQ(stat(file.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(file.Lines().size(), 2u);
}

TEST(CaptureWriterTest, AFullQueueDropsAndCounts) {
  CaptureFile file;
  CaptureOptions options;
  options.path = file.path();
  options.queue_max_lines = 0;  // nothing fits: every exchange is dropped
  Result<std::unique_ptr<CaptureWriter>> writer = CaptureWriter::Open(options);
  ASSERT_TRUE(writer.ok());
  (*writer)->Submit(Exchange("/a"));
  (*writer)->Submit(Exchange("/b"));
  (*writer)->Close();
  EXPECT_EQ(Get((*writer)->counters().dropped_queue_full), 2u);
  EXPECT_EQ(Get((*writer)->counters().lines), 0u);
  EXPECT_TRUE(file.Lines().empty());
  (*writer)->Submit(Exchange("/after-close"));
  EXPECT_EQ(Get((*writer)->counters().dropped_queue_full), 3u);
}

// A file size limit (RLIMIT_FSIZE) cuts a write short the way a full disk does.
TEST(CaptureWriterTest, AFailedWriteLeavesNoPartOfItsLines) {
  CaptureFile file;
  CaptureOptions options;
  options.path = file.path();
  Result<std::unique_ptr<CaptureWriter>> writer = CaptureWriter::Open(options);
  ASSERT_TRUE(writer.ok());
  (*writer)->Submit(Exchange("/first"));
  (*writer)->Flush();
  const uint64_t first = Get((*writer)->counters().bytes);
  ASSERT_GT(first, 0u);
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = first + first / 2;  // room for half a line more
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  for (int i = 0; i < 3; ++i)
    (*writer)->Submit(Exchange("/more"));
  (*writer)->Flush();
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);
  (*writer)->Close();
  EXPECT_EQ(Get((*writer)->counters().dropped_write_error), 3u);
  EXPECT_EQ(Get((*writer)->counters().lines), 1u);
  struct stat st {};
  ASSERT_EQ(stat(file.path().c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), first);  // the partial line was removed
  ASSERT_EQ(file.Lines().size(), 1u);
}

TEST(CaptureWriterTest, ChoosesByFilterRateAndPerSecondCap) {
  CaptureFile file;
  CaptureOptions options;
  options.path = file.path();
  options.filters = {"(GET|POST) /api/.*"};
  options.max_rps = 2;
  Result<std::unique_ptr<CaptureWriter>> writer = CaptureWriter::Open(options);
  ASSERT_TRUE(writer.ok());
  std::mt19937_64 rng(1);
  CaptureWriter& w = **writer;
  EXPECT_FALSE(w.Choose("DELETE", "/api/x", 1'000'000, rng));
  EXPECT_FALSE(w.Choose("GET", "/other?/api/", 1'000'000, rng));
  EXPECT_TRUE(w.Choose("GET", "/api/x?q=1", 1'000'000, rng));
  EXPECT_TRUE(w.Choose("POST", "/api/y", 1'500'000, rng));
  EXPECT_FALSE(w.Choose("GET", "/api/z", 1'999'999, rng));  // a third in the same second
  EXPECT_TRUE(w.Choose("GET", "/api/z", 2'000'000, rng));   // the next second
  EXPECT_EQ(Get(w.counters().skipped_filter), 2u);
  EXPECT_EQ(Get(w.counters().skipped_max_rps), 1u);

  CaptureFile sampled;
  CaptureOptions half;
  half.path = sampled.path();
  half.rate = 0.25;
  Result<std::unique_ptr<CaptureWriter>> quarter = CaptureWriter::Open(half);
  ASSERT_TRUE(quarter.ok());
  int chosen = 0;
  for (int i = 0; i < 4000; ++i)
    chosen += (*quarter)->Choose("GET", "/", 0, rng) ? 1 : 0;
  EXPECT_GT(chosen, 800);  // 1000 expected; 7 standard deviations either way
  EXPECT_LT(chosen, 1200);
  EXPECT_EQ(Get((*quarter)->counters().skipped_rate), static_cast<uint64_t>(4000 - chosen));
}

TEST(CaptureWriterTest, RotationCompletesFilesUnderDatedNamesWithoutOverwriting) {
  char name[] = "/tmp/hammer_rotate_XXXXXX";
  ASSERT_NE(mkdtemp(name), nullptr);
  const std::string dir = name;
  CaptureOptions options;
  options.path = dir + "/traffic.jsonl";
  options.rotate_bytes = 1;  // every write completes its file
  Result<std::unique_ptr<CaptureWriter>> writer = CaptureWriter::Open(options);
  ASSERT_TRUE(writer.ok());
  for (int i = 0; i < 3; ++i) {
    (*writer)->Submit(Exchange("/r/" + std::to_string(i)));
    (*writer)->Flush();  // one write each: three files
  }
  (*writer)->Close();
  EXPECT_EQ(Get((*writer)->counters().files_completed), 3u);
  std::vector<std::string> completed;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    completed.push_back(entry.path().filename().string());
  std::sort(completed.begin(), completed.end());
  // The three were begun within the same second or two: later ones get -2, -3.
  ASSERT_GE(completed.size(), 3u);
  size_t lines = 0;
  for (const std::string& file : completed) {
    if (file == "traffic.jsonl") continue;  // the active file, begun anew and empty
    EXPECT_TRUE(std::regex_match(file, std::regex(R"(traffic-\d{8}T\d{6}Z(-\d+)?\.jsonl)")))
        << file;
    struct stat st {};
    ASSERT_EQ(stat((dir + "/" + file).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    std::ifstream in(dir + "/" + file);
    for (std::string line; std::getline(in, line);)
      ++lines;
  }
  EXPECT_EQ(lines, 3u);
  std::filesystem::remove_all(dir);
}

TEST(CaptureWriterTest, ABadFilterIsRefusedByName) {
  CaptureOptions options;
  options.path = "/tmp/unused";
  options.filters = {"(unclosed"};
  Result<std::unique_ptr<CaptureWriter>> writer = CaptureWriter::Open(options);
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find("(unclosed"), std::string::npos);
}

std::vector<std::string> DecodedLines(const std::string& path) {
  Result<LineReader> reader = LineReader::Open(path, LineReader::WholeLines(1 << 20));
  EXPECT_TRUE(reader.ok());
  std::vector<std::string> lines;
  std::string_view line;
  while (reader.ok()) {
    Result<bool> more = reader->Next(&line);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    lines.emplace_back(line);
  }
  if (reader.ok()) {
    EXPECT_EQ(reader->cut_short(), "");
  }
  return lines;
}

// --capture-compress zstd: the same lines, as zstd frames of at most about one block each.
TEST(CaptureWriterTest, CompressedCapturesHoldTheSameLinesInZstdFrames) {
  CaptureFile plain_file;
  CaptureFile zstd_file;
  CaptureOptions plain;
  plain.path = plain_file.path();
  CaptureOptions compressed = plain;
  compressed.path = zstd_file.path();
  compressed.zstd = true;
  for (const CaptureOptions* options : {&plain, &compressed}) {
    Result<std::unique_ptr<CaptureWriter>> writer = CaptureWriter::Open(*options);
    ASSERT_TRUE(writer.ok());
    // About 600 KiB of lines, in one batch: several frames.
    for (int i = 0; i < 3000; ++i) {
      auto exchange = Exchange("/n/" + std::to_string(i));
      exchange->body = std::string(150, static_cast<char>('a' + i % 26));
      (*writer)->Submit(std::move(exchange));
    }
    (*writer)->Close();
    EXPECT_EQ(Get((*writer)->counters().lines), 3000u);
    struct stat st {};
    ASSERT_EQ(stat(options->path.c_str(), &st), 0);
    EXPECT_EQ(Get((*writer)->counters().bytes), static_cast<uint64_t>(st.st_size));
  }
  const std::vector<std::string> lines = plain_file.Lines();
  ASSERT_EQ(lines.size(), 3000u);
  EXPECT_EQ(DecodedLines(zstd_file.path()), lines);

  std::ifstream in(zstd_file.path(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(bytes.starts_with(kZstdMagic));
  size_t frames = 0;
  for (size_t at = bytes.find(kZstdMagic); at != std::string::npos;
       at = bytes.find(kZstdMagic, at + 1)) {
    ++frames;
  }
  EXPECT_GE(frames, 4u);  // ~600 KiB of lines in frames of ~128 KiB
  struct stat st {};
  ASSERT_EQ(stat(plain_file.path().c_str(), &st), 0);
  EXPECT_LT(bytes.size(), static_cast<size_t>(st.st_size) / 4);
}

TEST(CaptureWriterTest, CompressedCapturesRotateToDotJsonlDotZst) {
  char name[] = "/tmp/hammer_rotate_XXXXXX";
  ASSERT_NE(mkdtemp(name), nullptr);
  const std::string dir = name;
  CaptureOptions options;
  options.path = dir + "/traffic.jsonl.zst";
  options.zstd = true;
  options.rotate_bytes = 1;
  Result<std::unique_ptr<CaptureWriter>> writer = CaptureWriter::Open(options);
  ASSERT_TRUE(writer.ok());
  for (int i = 0; i < 2; ++i) {
    (*writer)->Submit(Exchange("/r/" + std::to_string(i)));
    (*writer)->Flush();
  }
  (*writer)->Close();
  size_t lines = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    if (file == "traffic.jsonl.zst") continue;
    EXPECT_TRUE(std::regex_match(file, std::regex(R"(traffic-\d{8}T\d{6}Z(-\d+)?\.jsonl\.zst)")))
        << file;
    lines += DecodedLines(entry.path().string()).size();
  }
  EXPECT_EQ(lines, 2u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hammer::dark
