#include "hammer/base/line_reader.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hammer/base/zstd_frames.h"

namespace hammer {
namespace {

// A reader over `input` held in an anonymous in-memory file (memfd), so that reads of
// options.block_bytes make line ends fall at chosen places relative to the blocks.
LineReader ReaderOver(const std::string& input, const LineReader::Options& options) {
  int fd = memfd_create("line_reader_test", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  size_t written = 0;
  while (written < input.size()) {
    ssize_t n = write(fd, input.data() + written, input.size() - written);
    EXPECT_GT(n, 0);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  EXPECT_EQ(lseek(fd, 0, SEEK_SET), 0);
  return LineReader::FromFd(fd, /*owns_fd=*/true, "memfd", options);
}

LineReader::Options Cut(size_t max_line_bytes, size_t block_bytes = 64 * 1024) {
  LineReader::Options options;
  options.max_line_bytes = max_line_bytes;
  options.block_bytes = block_bytes;
  return options;
}

// Pull mode, whole lines (request files, NDJSON): lines with their numbers.
struct NumberedLine {
  std::string text;
  uint64_t number;
  bool operator==(const NumberedLine&) const = default;
};

std::vector<NumberedLine> ReadNumbered(LineReader& reader) {
  std::vector<NumberedLine> out;
  std::string_view line;
  while (true) {
    Result<bool> more = reader.Next(&line);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    out.push_back({std::string(line), reader.line_number()});
  }
  return out;
}

TEST(LineReaderTest, SplitsLinesAndStripsCarriageReturns) {
  LineReader reader = LineReader::FromString("a\r\n\nb\rc\nlast", "x", LineReader::WholeLines(100));
  EXPECT_EQ(ReadNumbered(reader),
            (std::vector<NumberedLine>{{"a", 1}, {"", 2}, {"b\rc", 3}, {"last", 4}}));
  LineReader trailing = LineReader::FromString("a\n", "x", LineReader::WholeLines(100));
  EXPECT_EQ(ReadNumbered(trailing), (std::vector<NumberedLine>{{"a", 1}}));
  LineReader empty = LineReader::FromString("", "x", LineReader::WholeLines(100));
  EXPECT_TRUE(ReadNumbered(empty).empty());
}

TEST(LineReaderTest, LineLimitIncludesExactlyMaxBytes) {
  LineReader ok = LineReader::FromString("abcd\nabcd\r\n", "x", LineReader::WholeLines(4));
  EXPECT_EQ(ReadNumbered(ok), (std::vector<NumberedLine>{{"abcd", 1}, {"abcd", 2}}));
  LineReader bad = LineReader::FromString("abcd\nabcde\n", "x", LineReader::WholeLines(4));
  std::string_view line;
  ASSERT_TRUE(*bad.Next(&line));
  Result<bool> more = bad.Next(&line);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().message(), "x:2: line longer than 4 bytes");
  Result<bool> after = bad.Next(&line);
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(*after);
}

TEST(LineReaderTest, ReadsFilesLargerThanABlockWithBoundedLines) {
  char name[] = "/tmp/hammer_line_reader_XXXXXX";
  int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  close(fd);
  constexpr size_t kBlock = 64 * 1024;
  std::string expected_long(kBlock + 123, 'z');
  {
    std::ofstream out(name);
    for (int i = 0; i < 50000; ++i)
      out << "line " << i << "\n";
    out << expected_long << "\n";
    out << "end";
  }
  Result<LineReader> reader = LineReader::Open(name, LineReader::WholeLines(2 * kBlock));
  ASSERT_TRUE(reader.ok());
  std::vector<NumberedLine> all = ReadNumbered(*reader);
  unlink(name);
  ASSERT_EQ(all.size(), 50002u);
  EXPECT_EQ(all[0], (NumberedLine{"line 0", 1}));
  EXPECT_EQ(all[49999], (NumberedLine{"line 49999", 50000}));
  EXPECT_EQ(all[50000], (NumberedLine{expected_long, 50001}));
  EXPECT_EQ(all[50001], (NumberedLine{"end", 50002}));

  // The same file with a smaller limit stops at the long line.
  std::ofstream(name) << "a\n" << expected_long << "\n";
  Result<LineReader> limited = LineReader::Open(name, LineReader::WholeLines(1000));
  ASSERT_TRUE(limited.ok());
  std::string_view line;
  ASSERT_TRUE(*limited->Next(&line));
  Result<bool> more = limited->Next(&line);
  unlink(name);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().message(), std::string(name) + ":2: line longer than 1000 bytes");
}

TEST(LineReaderTest, OpenErrorsAndMove) {
  Result<LineReader> missing = LineReader::Open("/nonexistent/x", LineReader::WholeLines(10));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "open /nonexistent/x: No such file or directory");

  LineReader a = LineReader::FromString("1\n2\n", "a", LineReader::WholeLines(10));
  std::string_view line;
  ASSERT_TRUE(*a.Next(&line));
  LineReader b = std::move(a);
  ASSERT_TRUE(*b.Next(&line));
  EXPECT_EQ(line, "2");
  EXPECT_EQ(b.line_number(), 2u);
  EXPECT_EQ(b.name(), "a");
}

// Pull mode, overlong lines cut (URL lists): the cut line is marked and the next one is whole.
TEST(LineReaderTest, CutsOverlongLinesAndSkipsTheirRest) {
  for (size_t block : {size_t{1}, size_t{3}, size_t{7}, size_t{4096}}) {
    LineReader reader =
        ReaderOver("12345678\n123456789\nok\n" + std::string(20, 'T'), Cut(8, block));
    std::vector<std::pair<std::string, bool>> lines;
    LineReader::Line line;
    while (*reader.Next(&line))
      lines.emplace_back(line.text, line.overlong);
    EXPECT_EQ(lines,
              (std::vector<std::pair<std::string, bool>>{
                  {"12345678", false}, {"12345678", true}, {"ok", false}, {"TTTTTTTT", true}}))
        << "block " << block;
  }
}

TEST(LineReaderTest, RewindsTextAndRegularFilesButNotPipes) {
  LineReader text = LineReader::FromString("a\nb", "t", Cut(10));
  EXPECT_EQ(ReadNumbered(text).size(), 2u);
  ASSERT_TRUE(text.Rewind());
  EXPECT_EQ(ReadNumbered(text), (std::vector<NumberedLine>{{"a", 1}, {"b", 2}}));

  LineReader file = ReaderOver("x\ny\n", Cut(10, 1));
  EXPECT_EQ(ReadNumbered(file).size(), 2u);
  ASSERT_TRUE(file.Rewind());
  EXPECT_EQ(ReadNumbered(file), (std::vector<NumberedLine>{{"x", 1}, {"y", 2}}));

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "p\n", 2), 2);
  close(fds[1]);
  LineReader pipe_reader = LineReader::FromFd(fds[0], /*owns_fd=*/true, "pipe", Cut(10));
  EXPECT_EQ(ReadNumbered(pipe_reader).size(), 1u);
  EXPECT_FALSE(pipe_reader.Rewind());
}

TEST(LineReaderTest, KeepsACopyOfWhatItReadUpToALimit) {
  LineReader small = ReaderOver("ab\ncd", Cut(10, 2));
  small.KeepCopy(5);
  EXPECT_EQ(ReadNumbered(small).size(), 2u);
  std::optional<std::string> copy = small.TakeCopy();
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(*copy, "ab\ncd");

  LineReader large = ReaderOver("ab\ncd\n", Cut(10, 2));
  large.KeepCopy(5);
  EXPECT_EQ(ReadNumbered(large).size(), 2u);
  EXPECT_FALSE(large.TakeCopy().has_value());
}

// Push mode (record streams): every line to OnLine, overlong ones to OnOverlongLine.
struct Collector : LineHandler {
  std::vector<std::string> lines;
  int overlong = 0;
  void OnLine(std::string_view line) override { lines.emplace_back(line); }
  void OnOverlongLine() override {
    ++overlong;
    lines.emplace_back("<overlong>");
  }
};

TEST(LineReaderTest, SplitsAcrossArbitraryBlocks) {
  const std::string input = "a\tb\n\nccc\r\nlast without newline";
  const std::vector<std::string> expected = {"a\tb", "", "ccc\r", "last without newline"};
  for (size_t block = 1; block <= 6; ++block) {
    LineReader reader = ReaderOver(input, Cut(100, block));
    Collector collector;
    ASSERT_TRUE(reader.ReadAll(collector).ok());
    EXPECT_EQ(collector.lines, expected) << "block " << block;
  }
}

TEST(LineReaderTest, SkipsOverlongLinesOnce) {
  const std::string input = "short\n" + std::string(25, 'x') + std::string(3000000, 'y') +
                            "\nexactly10!\nelevenchars\nok";
  for (size_t block : {size_t{7}, size_t{64 * 1024}}) {
    LineReader reader = ReaderOver(input, Cut(10, block));
    Collector collector;
    ASSERT_TRUE(reader.ReadAll(collector).ok());
    EXPECT_EQ(collector.lines,
              (std::vector<std::string>{"short", "<overlong>", "exactly10!", "<overlong>", "ok"}));
  }

  LineReader tail = ReaderOver("abcdefgh", Cut(4));
  Collector tail_collector;
  ASSERT_TRUE(tail.ReadAll(tail_collector).ok());
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
  LineReader reader = LineReader::FromFd(fds[0], /*owns_fd=*/true, "pipe", Cut(1000, 1 << 20));
  Collector collector;
  Status status = reader.ReadAll(collector);
  writer.join();
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(collector.lines.size(), 300000u);
  EXPECT_EQ(collector.lines[123456], "http://host/123456\t0.001234");
  EXPECT_FALSE(LineReader::FromFd(-1, false, "nothing", Cut(10)).ReadAll(collector).ok());
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
  for (size_t block : {size_t{1}, size_t{7}, size_t{4096}, input.size()}) {
    LineReader reader = ReaderOver(input, Cut(30, block));
    FastCollector collector;
    ASSERT_TRUE(reader.ReadAll(collector).ok());
    // Overlong lines starting with 'f' may be taken whole by this (lenient) fast path.
    ASSERT_EQ(collector.lines.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      if (expected[i] == "<overlong>" && collector.lines[i] != "<overlong>") {
        EXPECT_EQ(collector.lines[i][0], 'f');
      } else {
        EXPECT_EQ(collector.lines[i], expected[i]) << "block " << block << " line " << i;
      }
    }
    if (block >= 4096) {
      EXPECT_GT(collector.fast, 1000u);
    }
  }
}

// zstd input, recognised by its first bytes: several frames read as one text, in small blocks.
TEST(LineReaderTest, DecodesZstdFramesAsTheirLines) {
  ZstdFrameEncoder encoder(1);
  std::string file;
  std::vector<std::string> expected;
  for (int frame = 0; frame < 4; ++frame) {
    std::string lines;
    for (int i = 0; i < 300; ++i) {
      expected.push_back("line " + std::to_string(frame) + "." + std::to_string(i));
      lines += expected.back() + "\r\n";
    }
    ASSERT_TRUE(encoder.AppendFrame(lines, file).ok());
  }
  LineReader reader = ReaderOver(file, LineReader::Options{64, 100, true, true});
  reader.KeepCopy(1 << 20);
  std::vector<NumberedLine> lines = ReadNumbered(reader);
  ASSERT_EQ(lines.size(), expected.size());
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_EQ(lines[i], (NumberedLine{expected[i], i + 1}));
  EXPECT_EQ(reader.cut_short(), "");
  // What is kept is the text, not the compressed bytes.
  std::optional<std::string> copy = reader.TakeCopy();
  ASSERT_TRUE(copy.has_value());
  EXPECT_TRUE(copy->starts_with("line 0.0\r\n"));
  ASSERT_TRUE(reader.Rewind());
  EXPECT_EQ(ReadNumbered(reader).size(), expected.size());
}

// A file cut inside its last frame (a writer killed mid-write): every line handed out is whole,
// the cut one is dropped, and the reader says so.
TEST(LineReaderTest, AZstdInputCutInsideAFrameEndsAtItsLastCompleteLine) {
  ZstdFrameEncoder encoder(1);
  std::string file;
  ASSERT_TRUE(encoder.AppendFrame("first\nsecond\n", file).ok());
  // Over one zstd block (128 KiB) of lines that do not repeat: the decoder hands out the first
  // block before the end of the frame, the last of its lines cut at the block's end.
  std::mt19937_64 rng(7);
  std::string big;
  std::vector<std::string> expected = {"first", "second"};
  while (big.size() < 300 * 1024) {
    std::string line = std::to_string(rng()) + std::to_string(rng()) + std::to_string(rng());
    expected.push_back(line);
    big += line + "\n";
  }
  ASSERT_TRUE(encoder.AppendFrame(big, file).ok());
  file.resize(file.size() - 1000);
  LineReader reader = ReaderOver(file, LineReader::WholeLines(1024));
  std::vector<NumberedLine> lines = ReadNumbered(reader);
  ASSERT_GT(lines.size(), 2u);               // the first block of the cut frame was read
  ASSERT_LT(lines.size(), expected.size());  // and not the rest
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_EQ(lines[i].text, expected[i]) << i;
  EXPECT_NE(reader.cut_short().find("memfd ends inside a zstd frame"), std::string::npos)
      << reader.cut_short();
}

TEST(LineReaderTest, TextThatBeginsLikeZstdIsText) {
  LineReader reader = ReaderOver("(\xb5x\n(\n", LineReader::WholeLines(64));
  std::vector<NumberedLine> lines = ReadNumbered(reader);
  EXPECT_EQ(lines, (std::vector<NumberedLine>{{"(\xb5x", 1}, {"(", 2}}));
  LineReader short_one = ReaderOver("(", LineReader::WholeLines(64));
  EXPECT_EQ(ReadNumbered(short_one), (std::vector<NumberedLine>{{"(", 1}}));
}

TEST(LineReaderTest, CorruptZstdIsAReadError) {
  ZstdFrameEncoder encoder(1);
  std::string file;
  ASSERT_TRUE(encoder.AppendFrame("a\n", file).ok());
  file += "trailing bytes that are not a frame";
  LineReader reader = ReaderOver(file, LineReader::WholeLines(64));
  std::string_view line;
  Result<bool> more = reader.Next(&line);
  while (more.ok() && *more)
    more = reader.Next(&line);
  ASSERT_FALSE(more.ok());
  EXPECT_TRUE(more.status().message().starts_with("read memfd: zstd: ")) << more.status().message();
}

}  // namespace
}  // namespace hammer
