#include "hammer/stats/line_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

namespace hammer::stats {
namespace {

struct Collector : LineHandler {
  std::vector<std::string> lines;
  int overlong = 0;
  void OnLine(std::string_view line) override { lines.emplace_back(line); }
  void OnOverlongLine() override {
    ++overlong;
    lines.emplace_back("<overlong>");
  }
};

TEST(LineReaderTest, SplitsAcrossArbitraryChunks) {
  const std::string input = "a\tb\n\nccc\r\nlast without newline";
  const std::vector<std::string> expected = {"a\tb", "", "ccc\r", "last without newline"};
  std::mt19937 rng(2);
  for (int round = 0; round < 200; ++round) {
    LineReader reader(100);
    Collector collector;
    size_t pos = 0;
    while (pos < input.size()) {
      size_t n = std::min<size_t>(input.size() - pos, rng() % 6);
      reader.Feed(std::string_view(input).substr(pos, n), collector);
      pos += n;
    }
    reader.Finish(collector);
    EXPECT_EQ(collector.lines, expected);
  }
}

TEST(LineReaderTest, SkipsOverlongLinesOnce) {
  LineReader reader(10);
  Collector collector;
  reader.Feed("short\n", collector);
  reader.Feed(std::string(25, 'x'), collector);  // overlong before its newline arrives
  reader.Feed(std::string(3000000, 'y'), collector);
  reader.Feed("\nexactly10!\nelevenchars\nok", collector);
  reader.Finish(collector);
  EXPECT_EQ(collector.lines,
            (std::vector<std::string>{"short", "<overlong>", "exactly10!", "<overlong>", "ok"}));

  LineReader tail(4);
  Collector tail_collector;
  tail.Feed("abcdefgh", tail_collector);
  tail.Finish(tail_collector);
  EXPECT_EQ(tail_collector.lines, std::vector<std::string>{"<overlong>"});
}

TEST(LineReaderTest, ReadsLargeInputFromAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::string input;
  for (int i = 0; i < 300000; ++i)
    input += "http://host/" + std::to_string(i) + "\t0.001234\n";
  std::thread writer([&] {
    size_t done = 0;
    while (done < input.size()) {
      ssize_t n = write(fds[1], input.data() + done, std::min<size_t>(input.size() - done, 65536));
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
  });
  LineReader reader(1000);
  Collector collector;
  Status status = reader.ReadAll(fds[0], "pipe", collector);
  writer.join();
  close(fds[0]);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(collector.lines.size(), 300000u);
  EXPECT_EQ(collector.lines[123456], "http://host/123456\t0.001234");
  EXPECT_FALSE(LineReader(10).ReadAll(-1, "nothing", collector).ok());
}

// Takes, through the fast path, every leading line that starts with 'f'.
struct FastCollector : Collector {
  size_t fast = 0;
  size_t OnLines(std::string_view text) override {
    size_t taken = 0;
    while (taken < text.size() && text[taken] == 'f') {
      size_t end = text.find('\n', taken);
      EXPECT_NE(end, std::string_view::npos);
      lines.emplace_back(text.substr(taken, end - taken));
      ++fast;
      taken = end + 1;
    }
    return taken;
  }
};

TEST(LineReaderTest, FastPathTakesWholeLinesInOrder) {
  std::string input;
  std::vector<std::string> expected;
  std::mt19937 rng(9);
  for (int i = 0; i < 2000; ++i) {
    std::string line = (rng() % 3 ? "f" : "s") + std::to_string(i);
    if (rng() % 100 == 0) line += std::string(40, 'x');  // overlong
    input += line + "\n";
    expected.push_back(line.size() > 30 ? "<overlong>" : line);
  }
  input += "flast";  // no final newline: the slow path
  expected.push_back("flast");
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}, input.size()}) {
    LineReader reader(30);
    FastCollector collector;
    for (size_t pos = 0; pos < input.size(); pos += chunk)
      reader.Feed(std::string_view(input).substr(pos, chunk), collector);
    reader.Finish(collector);
    // Overlong lines starting with 'f' may be taken whole by this (lenient) fast path.
    ASSERT_EQ(collector.lines.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      if (expected[i] == "<overlong>" && collector.lines[i] != "<overlong>") {
        EXPECT_EQ(collector.lines[i][0], 'f');
      } else {
        EXPECT_EQ(collector.lines[i], expected[i]) << "chunk " << chunk << " line " << i;
      }
    }
    if (chunk >= 4096) {
      EXPECT_GT(collector.fast, 1000u);
    }
  }
}

}  // namespace
}  // namespace hammer::stats
