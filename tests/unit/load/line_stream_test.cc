#include "hammer/load/line_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace hammer::load {
namespace {

struct Line {
  std::string text;
  uint64_t number;
  bool operator==(const Line&) const = default;
};

std::vector<Line> ReadAll(LineStream& stream) {
  std::vector<Line> out;
  std::string_view line;
  while (true) {
    Result<bool> more = stream.Next(&line);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    out.push_back({std::string(line), stream.line_number()});
  }
  return out;
}

TEST(LineStreamTest, SplitsLinesAndStripsCarriageReturns) {
  LineStream stream = LineStream::FromString("a\r\n\nb\rc\nlast", "x", 100);
  EXPECT_EQ(ReadAll(stream), (std::vector<Line>{{"a", 1}, {"", 2}, {"b\rc", 3}, {"last", 4}}));
  LineStream trailing = LineStream::FromString("a\n", "x", 100);
  EXPECT_EQ(ReadAll(trailing), (std::vector<Line>{{"a", 1}}));
  LineStream empty = LineStream::FromString("", "x", 100);
  EXPECT_TRUE(ReadAll(empty).empty());
}

TEST(LineStreamTest, LineLimitIncludesExactlyMaxBytes) {
  LineStream ok = LineStream::FromString("abcd\nabcd\r\n", "x", 4);
  EXPECT_EQ(ReadAll(ok), (std::vector<Line>{{"abcd", 1}, {"abcd", 2}}));
  LineStream bad = LineStream::FromString("abcd\nabcde\n", "x", 4);
  std::string_view line;
  ASSERT_TRUE(*bad.Next(&line));
  Result<bool> more = bad.Next(&line);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().message(), "x:2: line longer than 4 bytes");
  Result<bool> after = bad.Next(&line);
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(*after);
}

TEST(LineStreamTest, ReadsFilesLargerThanABlockWithBoundedLines) {
  char name[] = "/tmp/hammer_line_stream_XXXXXX";
  int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string expected_long(LineStream::kBlockBytes + 123, 'z');
  {
    std::ofstream out(name);
    for (int i = 0; i < 50000; ++i)
      out << "line " << i << "\n";
    out << expected_long << "\n";
    out << "end";
  }
  Result<LineStream> stream = LineStream::Open(name, 2 * LineStream::kBlockBytes);
  ASSERT_TRUE(stream.ok());
  std::vector<Line> all = ReadAll(*stream);
  unlink(name);
  ASSERT_EQ(all.size(), 50002u);
  EXPECT_EQ(all[0], (Line{"line 0", 1}));
  EXPECT_EQ(all[49999], (Line{"line 49999", 50000}));
  EXPECT_EQ(all[50000], (Line{expected_long, 50001}));
  EXPECT_EQ(all[50001], (Line{"end", 50002}));

  // The same file with a smaller limit stops at the long line.
  std::ofstream(name) << "a\n" << expected_long << "\n";
  Result<LineStream> limited = LineStream::Open(name, 1000);
  ASSERT_TRUE(limited.ok());
  std::string_view line;
  ASSERT_TRUE(*limited->Next(&line));
  Result<bool> more = limited->Next(&line);
  unlink(name);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().message(), std::string(name) + ":2: line longer than 1000 bytes");
}

TEST(LineStreamTest, OpenErrorsAndMove) {
  Result<LineStream> missing = LineStream::Open("/nonexistent/x", 10);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "open /nonexistent/x: No such file or directory");

  LineStream a = LineStream::FromString("1\n2\n", "a", 10);
  std::string_view line;
  ASSERT_TRUE(*a.Next(&line));
  LineStream b = std::move(a);
  ASSERT_TRUE(*b.Next(&line));
  EXPECT_EQ(line, "2");
  EXPECT_EQ(b.line_number(), 2u);
  EXPECT_EQ(b.name(), "a");
}

}  // namespace
}  // namespace hammer::load
