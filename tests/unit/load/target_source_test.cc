#include "hammer/load/target_source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace hammer::load {
namespace {

// A file in /tmp holding `content`, removed with the test.
class TempFile {
 public:
  explicit TempFile(std::string_view content) {
    char name[] = "/tmp/hammer_target_source_XXXXXX";
    int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    path_ = name;
    size_t written = 0;
    while (written < content.size()) {
      ssize_t n = write(fd, content.data() + written, content.size() - written);
      EXPECT_GT(n, 0);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    close(fd);
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::unique_ptr<TargetSource> MustOpen(const std::string& path, const SourceOptions& options) {
  Result<std::unique_ptr<TargetSource>> source = TargetSource::Open(path, options);
  EXPECT_TRUE(source.ok()) << source.status().message();
  return source.ok() ? std::move(*source) : nullptr;
}

// NextBatch for a reader with nothing else to do: waits for the lines of a pipe whose writer is
// slower than the reader. False at the end.
bool NextWaiting(TargetSource& source, std::vector<SourceLine>& out, size_t max) {
  while (true) {
    TargetSource::Batch got = source.NextBatch(out, max);
    if (got != TargetSource::Batch::kNotYet) return got == TargetSource::Batch::kLines;
    source.AwaitInput(-1);
  }
}

// Every line the source gives, in batches of `batch`, stopping after `limit` lines (a safety
// net for --loop sources).
std::vector<std::string> Drain(TargetSource& source, size_t batch = 3, size_t limit = 100000) {
  std::vector<std::string> lines;
  std::vector<SourceLine> out;
  while (lines.size() < limit && NextWaiting(source, out, batch)) {
    EXPECT_LE(out.size(), batch);
    EXPECT_GT(out.size(), 0u);
    for (SourceLine& line : out)
      lines.push_back(line.text);
  }
  return lines;
}

std::vector<std::string> Numbered(int n, std::string_view prefix = "http://h/") {
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i)
    lines.push_back(std::string(prefix) + std::to_string(i));
  return lines;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines)
    text.append(line).append("\n");
  return text;
}

TEST(TargetSourceTest, StreamsAFileInBatches) {
  TempFile file("http://h/a\nPOST http://h/b\n\n# comment\nhttp://h/c\r\n");
  auto source = MustOpen(file.path(), {});
  ASSERT_NE(source, nullptr);
  std::vector<SourceLine> out;
  ASSERT_EQ(source->NextBatch(out, 2), TargetSource::Batch::kLines);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].text, "http://h/a");
  EXPECT_EQ(out[1].text, "POST http://h/b");
  EXPECT_FALSE(out[0].oversized);
  ASSERT_EQ(source->NextBatch(out, 2), TargetSource::Batch::kLines);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].text, "");  // blank and comment lines are passed on; the worker skips them
  EXPECT_EQ(out[1].text, "# comment");
  ASSERT_EQ(source->NextBatch(out, 2), TargetSource::Batch::kLines);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "http://h/c\r");  // CR is the parser's business
  EXPECT_EQ(source->NextBatch(out, 2), TargetSource::Batch::kEnd);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(source->NextBatch(out, 2), TargetSource::Batch::kEnd);  // and stays ended
  EXPECT_EQ(source->lines_read(), 5u);
  EXPECT_EQ(source->warning(), "");
}

TEST(TargetSourceTest, LastLineWithoutNewline) {
  TempFile file("http://h/a\nhttp://h/b");
  auto source = MustOpen(file.path(), {});
  EXPECT_EQ(Drain(*source), (std::vector<std::string>{"http://h/a", "http://h/b"}));
}

TEST(TargetSourceTest, EmptyFileHasNoLines) {
  TempFile file("");
  auto source = MustOpen(file.path(), {});
  std::vector<SourceLine> out;
  EXPECT_EQ(source->NextBatch(out, 10), TargetSource::Batch::kEnd);
  EXPECT_EQ(source->lines_read(), 0u);
}

TEST(TargetSourceTest, LinesSpanningReadBlocksArriveWhole) {
  // Lines of many lengths, so line ends fall everywhere relative to the 64 KiB read blocks.
  std::vector<std::string> lines;
  for (int i = 0; i < 3000; ++i)
    lines.push_back("http://h/" + std::string(static_cast<size_t>(i * 37 % 400), 'p'));
  TempFile file(Joined(lines));
  auto source = MustOpen(file.path(), {});
  EXPECT_EQ(Drain(*source, 256), lines);
  EXPECT_EQ(source->lines_read(), lines.size());
}

TEST(TargetSourceTest, FromTextWithAndWithoutFinalNewline) {
  auto a = TargetSource::FromText("x\ny\n", {});
  EXPECT_EQ(Drain(*a), (std::vector<std::string>{"x", "y"}));
  auto b = TargetSource::FromText("x\ny", {});
  EXPECT_EQ(Drain(*b), (std::vector<std::string>{"x", "y"}));
}

TEST(TargetSourceTest, OpenErrorsNameThePath) {
  Result<std::unique_ptr<TargetSource>> missing =
      TargetSource::Open("/tmp/hammer-no-such-file-here", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "cannot open '/tmp/hammer-no-such-file-here': No such file or directory");
  Result<std::unique_ptr<TargetSource>> directory = TargetSource::Open("/tmp", {});
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().message(), "'/tmp' is a directory, not a URL list");
}

TEST(TargetSourceTest, LoopRereadsAFile) {
  TempFile file("a\nb\nc\n");
  SourceOptions options;
  options.loop = true;
  auto source = MustOpen(file.path(), options);
  std::vector<std::string> lines = Drain(*source, 4, 10);
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b", "c", "a", "b", "c", "a", "b", "c", "a", "b",
                                             "c"}));  // 3 batches of 4
  EXPECT_EQ(source->lines_read(), 12u);
}

TEST(TargetSourceTest, LoopRereadsAFileWithoutFinalNewline) {
  TempFile file("a\nb");
  SourceOptions options;
  options.loop = true;
  auto source = MustOpen(file.path(), options);
  EXPECT_EQ(Drain(*source, 5, 5), (std::vector<std::string>{"a", "b", "a", "b", "a"}));
}

TEST(TargetSourceTest, LoopOverText) {
  SourceOptions options;
  options.loop = true;
  auto source = TargetSource::FromText("x\ny\nz", options);
  EXPECT_EQ(Drain(*source, 2, 7),
            (std::vector<std::string>{"x", "y", "z", "x", "y", "z", "x", "y"}));  // 4 batches
}

TEST(TargetSourceTest, LoopOverAPipeReplaysFromMemory) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "p\nq\n", 4), 4);
  close(fds[1]);
  SourceOptions options;
  options.loop = true;
  auto source = MustOpen("/proc/self/fd/" + std::to_string(fds[0]), options);
  close(fds[0]);  // the source holds its own descriptor
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(Drain(*source, 3, 7), (std::vector<std::string>{"p", "q", "p", "q", "p", "q", "p", "q",
                                                            "p"}));  // 3 batches of 3
  EXPECT_EQ(source->warning(), "");
}

TEST(TargetSourceTest, LoopOverEmptyInputEnds) {
  TempFile file("");
  SourceOptions options;
  options.loop = true;
  auto source = MustOpen(file.path(), options);
  std::vector<SourceLine> out;
  EXPECT_EQ(source->NextBatch(out, 10), TargetSource::Batch::kEnd);
}

// An input of only comments and blank lines has nothing to send: --loop must not hand out its
// skipped lines forever (the worker would spin without ever sending a request).
TEST(TargetSourceTest, LoopOverOnlyCommentsEnds) {
  SourceOptions options;
  options.loop = true;
  auto text = TargetSource::FromText("# one\n\n   \n# two\r\n", options);
  std::vector<std::string> from_text = Drain(*text, 256, 10000);
  EXPECT_EQ(from_text, (std::vector<std::string>{"# one", "", "   ", "# two\r"}));

  TempFile file("# only\n#comments\n\n");
  auto source = MustOpen(file.path(), options);
  EXPECT_EQ(Drain(*source, 2, 10000), (std::vector<std::string>{"# only", "#comments", ""}));
}

TEST(TargetSourceTest, LoopWithOneRequestAmongCommentsKeepsLooping) {
  SourceOptions options;
  options.loop = true;
  auto source = TargetSource::FromText("# c\nhttp://h/\n# d\n", options);
  EXPECT_EQ(Drain(*source, 3, 6),
            (std::vector<std::string>{"# c", "http://h/", "# d", "# c", "http://h/", "# d"}));
}

TEST(TargetSourceTest, LineOfExactlyMaxBytesIsNotOversized) {
  SourceOptions options;
  options.max_line_bytes = 8;
  auto source = TargetSource::FromText("12345678\n123456789\nok\n", options);
  std::vector<SourceLine> out;
  ASSERT_EQ(source->NextBatch(out, 10), TargetSource::Batch::kLines);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].text, "12345678");
  EXPECT_FALSE(out[0].oversized);
  EXPECT_EQ(out[1].text, "12345678");
  EXPECT_TRUE(out[1].oversized);
  EXPECT_EQ(out[2].text, "ok");
  EXPECT_FALSE(out[2].oversized);
}

// A line far longer than the read blocks: cut at max_line_bytes, marked, the rest skipped
// without being buffered, and the next line intact.
void ExpectOversizedLineCut(TargetSource& source) {
  std::vector<SourceLine> out;
  std::vector<SourceLine> all;
  while (NextWaiting(source, out, 2)) {
    for (SourceLine& line : out)
      all.push_back(line);
  }
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].text, "http://h/before");
  EXPECT_FALSE(all[0].oversized);
  EXPECT_EQ(all[1].text, "http://h/" + std::string(91, 'L'));
  EXPECT_TRUE(all[1].oversized);
  EXPECT_EQ(all[2].text, "http://h/after");
  EXPECT_FALSE(all[2].oversized);
  EXPECT_EQ(all[3].text, std::string(100, 'T'));  // an oversized last line without newline
  EXPECT_TRUE(all[3].oversized);
}

std::string OversizedInput() {
  return "http://h/before\nhttp://h/" + std::string(300'000, 'L') + "\nhttp://h/after\n" +
         std::string(200'000, 'T');
}

TEST(TargetSourceTest, OversizedLineInAFileIsCutAndTheRestSkipped) {
  TempFile file(OversizedInput());
  SourceOptions options;
  options.max_line_bytes = 100;
  auto source = MustOpen(file.path(), options);
  ExpectOversizedLineCut(*source);
}

TEST(TargetSourceTest, OversizedLineInTextIsCut) {
  SourceOptions options;
  options.max_line_bytes = 100;
  auto source = TargetSource::FromText(OversizedInput(), options);
  ExpectOversizedLineCut(*source);
}

TEST(TargetSourceTest, OversizedLineInAPipeIsCutAndTheRestSkipped) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::string input = OversizedInput();
  std::thread writer([&] {
    size_t at = 0;
    while (at < input.size()) {
      ssize_t n = write(fds[1], input.data() + at, std::min<size_t>(input.size() - at, 7000));
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    close(fds[1]);
  });
  SourceOptions options;
  options.max_line_bytes = 100;
  auto source = MustOpen("/proc/self/fd/" + std::to_string(fds[0]), options);
  close(fds[0]);
  if (source) ExpectOversizedLineCut(*source);
  writer.join();
}

TEST(TargetSourceTest, OversizedLinesAreCutOnEveryLoopPass) {
  SourceOptions options;
  options.loop = true;
  options.max_line_bytes = 4;
  auto source = TargetSource::FromText("abcdefgh\nok\n", options);
  std::vector<SourceLine> out;
  ASSERT_EQ(source->NextBatch(out, 4), TargetSource::Batch::kLines);
  ASSERT_EQ(out.size(), 4u);
  for (int pass = 0; pass < 2; ++pass) {
    EXPECT_EQ(out[static_cast<size_t>(2 * pass)].text, "abcd");
    EXPECT_TRUE(out[static_cast<size_t>(2 * pass)].oversized);
    EXPECT_EQ(out[static_cast<size_t>(2 * pass + 1)].text, "ok");
    EXPECT_FALSE(out[static_cast<size_t>(2 * pass + 1)].oversized);
  }
}

std::vector<std::string> Sorted(std::vector<std::string> lines) {
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(TargetSourceTest, ShuffleKeepsTheMultisetOfLines) {
  std::vector<std::string> lines = Numbered(500);
  for (int i = 0; i < 100; ++i)
    lines.push_back("http://h/duplicate");  // duplicates weight URLs and must all survive
  for (uint64_t seed : {1u, 2u, 3u, 42u}) {
    for (size_t window : {size_t{1}, size_t{2}, size_t{7}, size_t{100}, size_t{10000}}) {
      SourceOptions options;
      options.shuffle = true;
      options.shuffle_window = window;
      options.seed = seed;
      auto source = TargetSource::FromText(Joined(lines), options);
      std::vector<std::string> shuffled = Drain(*source, 64);
      ASSERT_EQ(Sorted(shuffled), Sorted(lines)) << "seed " << seed << " window " << window;
      EXPECT_EQ(source->lines_read(), lines.size());
    }
  }
}

TEST(TargetSourceTest, ShuffleChangesOrderDeterministicallyBySeed) {
  std::vector<std::string> lines = Numbered(200);
  auto shuffled = [&](uint64_t seed) {
    SourceOptions options;
    options.shuffle = true;
    options.seed = seed;
    auto source = TargetSource::FromText(Joined(lines), options);
    return Drain(*source, 50);
  };
  std::vector<std::string> a = shuffled(7);
  EXPECT_NE(a, lines);
  EXPECT_EQ(shuffled(7), a);  // same seed, same order
  EXPECT_NE(shuffled(8), a);
}

TEST(TargetSourceTest, ShuffleWindowOfOneKeepsInputOrder) {
  std::vector<std::string> lines = Numbered(50);
  SourceOptions options;
  options.shuffle = true;
  options.shuffle_window = 1;
  options.seed = 5;
  auto source = TargetSource::FromText(Joined(lines), options);
  EXPECT_EQ(Drain(*source, 8), lines);
}

// With a window of w lines, a line can move earlier by at most w - 1 places.
TEST(TargetSourceTest, ShuffleMovesLinesWithinTheWindow) {
  std::vector<std::string> lines = Numbered(1000, "");
  for (size_t window : {size_t{2}, size_t{10}, size_t{64}}) {
    SourceOptions options;
    options.shuffle = true;
    options.shuffle_window = window;
    options.seed = window;
    auto source = TargetSource::FromText(Joined(lines), options);
    std::vector<std::string> shuffled = Drain(*source, 33);
    ASSERT_EQ(shuffled.size(), lines.size());
    for (size_t position = 0; position < shuffled.size(); ++position) {
      size_t original = std::stoul(shuffled[position]);
      EXPECT_LE(original, position + window - 1) << "window " << window;
    }
  }
}

TEST(TargetSourceTest, ShuffleWithLoopKeepsGoing) {
  SourceOptions options;
  options.shuffle = true;
  options.loop = true;
  options.shuffle_window = 4;
  options.seed = 3;
  auto source = TargetSource::FromText("a\nb\nc\n", options);
  std::vector<std::string> lines = Drain(*source, 10, 30);
  ASSERT_EQ(lines.size(), 30u);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "a") +
                std::count(lines.begin(), lines.end(), "b") +
                std::count(lines.begin(), lines.end(), "c"),
            30);
}

TEST(TargetSourceTest, ConcurrentReadersShareTheLinesExactlyOnce) {
  std::vector<std::string> lines = Numbered(20000);
  auto source = TargetSource::FromText(Joined(lines), {});
  std::vector<std::vector<std::string>> got(4);
  std::vector<std::thread> readers;
  for (size_t t = 0; t < got.size(); ++t) {
    readers.emplace_back([&, t] { got[t] = Drain(*source, 17); });
  }
  for (std::thread& reader : readers)
    reader.join();
  std::vector<std::string> all;
  for (const auto& part : got)
    all.insert(all.end(), part.begin(), part.end());
  EXPECT_EQ(Sorted(all), Sorted(lines));
  EXPECT_EQ(source->lines_read(), lines.size());
}

// Resident set size in KiB, from /proc/self/status.
long ResidentKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Memory stays bounded whatever the input size: 2 million lines (~90 MB) fed through a pipe
// by a thread are read without the process growing by more than a few MiB.
TEST(TargetSourceTest, StreamingAHugeInputUsesBoundedMemory) {
  constexpr uint64_t kLines = 2'000'000;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::thread writer([fd = fds[1]] {
    // "http://127.0.0.1:8080/item/0000000000\n" with the number counted up in place.
    std::string line = "http://127.0.0.1:8080/item/0000000000\n";
    const size_t last_digit = line.size() - 2;
    std::string chunk;
    for (uint64_t i = 0; i < kLines; ++i) {
      chunk.append(line);
      for (size_t d = last_digit;; --d) {
        if (line[d] != '9') {
          ++line[d];
          break;
        }
        line[d] = '0';
      }
      if (chunk.size() >= 60000 || i + 1 == kLines) {
        size_t at = 0;
        while (at < chunk.size()) {
          ssize_t w = write(fd, chunk.data() + at, chunk.size() - at);
          if (w <= 0) break;
          at += static_cast<size_t>(w);
        }
        chunk.clear();
      }
    }
    close(fd);
  });
  auto source = MustOpen("/proc/self/fd/" + std::to_string(fds[0]), {});
  close(fds[0]);
  ASSERT_NE(source, nullptr);
  std::vector<SourceLine> out;
  ASSERT_TRUE(NextWaiting(*source, out, 256));  // warm up: buffers and batch storage exist
  const long before = ResidentKiB();
  uint64_t lines = out.size();
  uint64_t bytes = 0;
  std::string last;
  while (NextWaiting(*source, out, 256)) {
    lines += out.size();
    for (const SourceLine& line : out)
      bytes += line.text.size();
    last = out.back().text;
  }
  const long after = ResidentKiB();
  writer.join();
  EXPECT_EQ(lines, kLines);
  EXPECT_EQ(source->lines_read(), kLines);
  EXPECT_EQ(last, "http://127.0.0.1:8080/item/0001999999");
  EXPECT_GT(bytes, 70u << 20);  // the input really was large
  ASSERT_GT(before, 0);
  RecordProperty("rss_growth_kib", static_cast<int>(after - before));
  EXPECT_LT(after - before, 4 * 1024) << "RSS grew from " << before << " KiB to " << after
                                      << " KiB while streaming " << bytes << " bytes";
}

}  // namespace
}  // namespace hammer::load

namespace hammer::load {
namespace {

std::unique_ptr<TargetSource> MustOpenAll(const std::vector<std::string>& inputs,
                                          const SourceOptions& options) {
  Result<std::unique_ptr<TargetSource>> source = TargetSource::Open(inputs, options);
  EXPECT_TRUE(source.ok()) << source.status().message();
  return source.ok() ? std::move(*source) : nullptr;
}

TEST(TargetSourceInputsTest, UrlsAndFilesAreReadInTheirOrder) {
  TempFile a("http://h/a1\nhttp://h/a2\n");
  TempFile b("http://h/b1\n");
  auto source = MustOpenAll({"http://h/u1", a.path(), "HTTPS://h/u2", "http://h/u3", b.path()}, {});
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(Drain(*source),
            (std::vector<std::string>{"http://h/u1", "http://h/a1", "http://h/a2", "HTTPS://h/u2",
                                      "http://h/u3", "http://h/b1"}));
}

TEST(TargetSourceInputsTest, LoopRepeatsTheWholeSequence) {
  TempFile a("http://h/a\n");
  SourceOptions options;
  options.loop = true;
  auto source = MustOpenAll({"http://h/u", a.path()}, options);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(Drain(*source, 3, 6),
            (std::vector<std::string>{"http://h/u", "http://h/a", "http://h/u", "http://h/a",
                                      "http://h/u", "http://h/a"}));
}

TEST(TargetSourceInputsTest, AMissingFileIsAnErrorBeforeAnythingIsRead) {
  Result<std::unique_ptr<TargetSource>> source =
      TargetSource::Open(std::vector<std::string>{"http://h/u", "/nonexistent/urls.txt"}, {});
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.status().message().find("cannot open '/nonexistent/urls.txt'"),
            std::string::npos);
  SourceOptions loop;
  loop.loop = true;
  EXPECT_FALSE(TargetSource::Open(std::vector<std::string>{"-", "http://h/u"}, loop).ok());
}

TEST(TargetSourceInputsTest, SchemeColonSlashSlashMakesAUrl) {
  EXPECT_TRUE(TargetSource::IsUrl("http://h/"));
  EXPECT_TRUE(TargetSource::IsUrl("Https://h/"));
  EXPECT_TRUE(TargetSource::IsUrl("ftp://h/x"));  // sent, and counted as invalid_url
  EXPECT_FALSE(TargetSource::IsUrl("http://"));
  EXPECT_FALSE(TargetSource::IsUrl("urls.txt"));
  EXPECT_FALSE(TargetSource::IsUrl("./dir/urls.txt"));
  EXPECT_FALSE(TargetSource::IsUrl("-"));
  EXPECT_FALSE(TargetSource::IsUrl("://h/x"));
  EXPECT_FALSE(TargetSource::IsUrl("1http://h/x"));
}

// An idle pipe (its writer open) answers kNotYet at once, never blocking the reader; a line is
// handed out once it has arrived whole; waited() counts from the first kNotYet of a row to the
// next line, an open wait up to the time asked about; an interrupt ends the input.
TEST(TargetSourceInputsTest, AnIdlePipeAnswersNotYet) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const int saved_stdin = dup(STDIN_FILENO);
  ASSERT_EQ(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
  auto source = MustOpen("-", {});
  dup2(saved_stdin, STDIN_FILENO);
  close(saved_stdin);
  ASSERT_NE(source, nullptr);
  std::vector<SourceLine> out;
  EXPECT_EQ(source->NextBatch(out, 4), TargetSource::Batch::kNotYet);
  EXPECT_TRUE(out.empty());
  ASSERT_EQ(write(fds[1], "http://h/a", 10), 10);  // not whole yet
  EXPECT_EQ(source->NextBatch(out, 4), TargetSource::Batch::kNotYet);
  const MonoNanos now = MonoNow();
  EXPECT_EQ(source->waited(now + kSecond) - source->waited(now), kSecond);  // still waiting
  ASSERT_EQ(write(fds[1], "\nhttp://h/b\n", 12), 12);
  source->AwaitInput(-1);
  ASSERT_EQ(source->NextBatch(out, 4), TargetSource::Batch::kLines);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].text, "http://h/a");
  EXPECT_EQ(out[1].text, "http://h/b");
  const MonoNanos later = MonoNow();
  EXPECT_EQ(source->waited(later + kSecond), source->waited(later));  // the wait has ended
  EXPECT_EQ(source->NextBatch(out, 4), TargetSource::Batch::kNotYet);
  source->Interrupt();
  EXPECT_EQ(source->NextBatch(out, 4), TargetSource::Batch::kEnd);
  close(fds[0]);
  close(fds[1]);
}

// An endless line (/dev/zero) is skipped block by block; an interrupt ends it too.
TEST(TargetSourceInputsTest, InterruptEndsAnEndlessLine) {
  auto source = MustOpen("/dev/zero", {});
  ASSERT_NE(source, nullptr);
  std::vector<SourceLine> first;
  ASSERT_EQ(source->NextBatch(first, 1),
            TargetSource::Batch::kLines);  // the line's start, cut and marked
  EXPECT_TRUE(first[0].oversized);
  std::vector<SourceLine> out;
  bool more = true;
  std::thread reader([&] { more = source->NextBatch(out, 1) == TargetSource::Batch::kLines; });
  source->Interrupt();
  reader.join();
  EXPECT_FALSE(more);
}

}  // namespace
}  // namespace hammer::load
