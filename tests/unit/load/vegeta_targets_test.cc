#include "hammer/load/vegeta_targets.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace hammer::load {
namespace {

// A temporary directory, removed (with the files written through it) after the test.
class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/hammer_vegeta_XXXXXX";
    EXPECT_NE(mkdtemp(name), nullptr);
    path_ = name;
  }
  ~TempDir() {
    for (const std::string& file : files_)
      unlink(file.c_str());
    rmdir(path_.c_str());
  }
  std::string Write(const std::string& name, const std::string& content) {
    std::string file = path_ + "/" + name;
    std::ofstream(file, std::ios::binary) << content;
    files_.push_back(file);
    return file;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

std::vector<RequestSpec> ReadAll(VegetaTargetReader& reader) {
  std::vector<RequestSpec> out;
  RequestSpec spec;
  while (true) {
    Result<bool> more = reader.Next(&spec);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    out.push_back(spec);
  }
  return out;
}

std::string ErrorOf(const std::string& text) {
  VegetaTargetReader reader = VegetaTargetReader::FromString(text, "t.txt", "/nonexistent");
  RequestSpec spec;
  while (true) {
    Result<bool> more = reader.Next(&spec);
    if (!more.ok()) return more.status().message();
    if (!*more) return "";
  }
}

TEST(VegetaTargetsTest, ReadsTargetsWithHeadersAndBodies) {
  TempDir dir;
  dir.Write("body.json", "{\"name\":\"ada\"}");
  std::string path = dir.Write("targets.txt",
                               "# users API\n"
                               "GET http://127.0.0.1:8080/users/1\n"
                               "X-Account-ID: 8675309\n"
                               "Authorization:  Bearer abc \n"
                               "X-Account-ID: 2\n"
                               "\n"
                               "\n"
                               "POST http://127.0.0.1:8080/users\r\n"
                               "Content-Type: application/json\r\n"
                               "@body.json\r\n"
                               "\r\n"
                               "DELETE http://127.0.0.1:8080/users/1\n");
  Result<VegetaTargetReader> reader = VegetaTargetReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  std::vector<RequestSpec> all = ReadAll(*reader);
  ASSERT_EQ(all.size(), 3u);

  EXPECT_EQ(all[0].method, "GET");
  EXPECT_EQ(all[0].url, "http://127.0.0.1:8080/users/1");
  http::HeaderList expected = {
      {"X-Account-ID", "8675309"}, {"Authorization", "Bearer abc"}, {"X-Account-ID", "2"}};
  EXPECT_EQ(all[0].headers, expected);
  EXPECT_EQ(all[0].body, "");
  EXPECT_EQ(all[0].offset, -1);
  EXPECT_EQ(all[0].where, path + ":2");

  EXPECT_EQ(all[1].method, "POST");
  EXPECT_EQ(all[1].headers, (http::HeaderList{{"Content-Type", "application/json"}}));
  EXPECT_EQ(all[1].body, "{\"name\":\"ada\"}");
  EXPECT_EQ(all[1].where, path + ":8");

  EXPECT_EQ(all[2].method, "DELETE");
  EXPECT_TRUE(all[2].headers.empty());
  EXPECT_EQ(all[2].where, path + ":12");
}

TEST(VegetaTargetsTest, BodyPathsAreRelativeToTheTargetsFileOrAbsolute) {
  TempDir dir;
  std::string body = dir.Write("b.bin", std::string("\x00\x01\xff", 3));
  VegetaTargetReader reader = VegetaTargetReader::FromString(
      "PUT http://h/a\n@b.bin\n\nPUT http://h/b\n@ " + body + "\n", "t.txt", dir.path());
  std::vector<RequestSpec> all = ReadAll(reader);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].body, std::string("\x00\x01\xff", 3));
  EXPECT_EQ(all[1].body, std::string("\x00\x01\xff", 3));
}

TEST(VegetaTargetsTest, RequestLineWithoutBlankLineStartsTheNextTarget) {
  VegetaTargetReader reader = VegetaTargetReader::FromString(
      "GET http://h/1\nGET http://h/2\nAccept: */*\nHEAD http://h/3\n# c\n  \t\n", "t", ".");
  std::vector<RequestSpec> all = ReadAll(reader);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].url, "http://h/1");
  EXPECT_TRUE(all[0].headers.empty());
  EXPECT_EQ(all[1].url, "http://h/2");
  EXPECT_EQ(all[1].headers, (http::HeaderList{{"Accept", "*/*"}}));
  EXPECT_EQ(all[1].where, "t:2");
  EXPECT_EQ(all[2].method, "HEAD");
  EXPECT_EQ(all[2].where, "t:4");
}

TEST(VegetaTargetsTest, CommentsBetweenHeadersAndEmptyInput) {
  VegetaTargetReader reader =
      VegetaTargetReader::FromString("GET http://h/\n# note\nA: 1\n  # indented\nB:\n", "t", ".");
  std::vector<RequestSpec> all = ReadAll(reader);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].headers, (http::HeaderList{{"A", "1"}, {"B", ""}}));

  VegetaTargetReader empty = VegetaTargetReader::FromString("\n# only comments\n\n", "t", ".");
  EXPECT_TRUE(ReadAll(empty).empty());
  VegetaTargetReader nothing = VegetaTargetReader::FromString("", "t", ".");
  EXPECT_TRUE(ReadAll(nothing).empty());
}

TEST(VegetaTargetsTest, ErrorsNameFileAndLine) {
  EXPECT_EQ(ErrorOf("Host: x\n"), "t.txt:1: expected 'METHOD URL', got 'Host: x'");
  EXPECT_EQ(ErrorOf("\n\nhttp://h/\n"), "t.txt:3: expected 'METHOD URL', got 'http://h/'");
  EXPECT_EQ(ErrorOf("get http://h/\n"), "t.txt:1: expected 'METHOD URL', got 'get http://h/'");
  EXPECT_EQ(ErrorOf("GET\n"), "t.txt:1: expected 'METHOD URL', got 'GET'");
  EXPECT_EQ(ErrorOf("GET ftp://h/\n"), "t.txt:1: bad URL 'ftp://h/': unsupported scheme 'ftp'");
  EXPECT_EQ(ErrorOf("GET http://h/\nA: 1\nno colon here\n"),
            "t.txt:3: expected 'Name: value' or '@body-file', got 'no colon here'");
  EXPECT_EQ(ErrorOf("GET http://h/\nBad Name: 1\n"), "t.txt:2: bad header name 'Bad Name'");
  EXPECT_EQ(ErrorOf("GET http://h/\n: 1\n"), "t.txt:2: bad header name ''");
  EXPECT_EQ(ErrorOf("GET http://h/\nA: x\x01y\n"),
            "t.txt:2: control character in the value of header 'A'");
  EXPECT_EQ(ErrorOf("POST http://h/\n@\n"), "t.txt:2: '@' without a body file name");
  EXPECT_EQ(ErrorOf("POST http://h/\n@missing.json\n"),
            "t.txt:2: body file 'missing.json': open /nonexistent/missing.json: No such file or "
            "directory");
  // A header after the body line belongs to no target.
  TempDir dir;
  dir.Write("b", "x");
  VegetaTargetReader reader =
      VegetaTargetReader::FromString("POST http://h/\n@b\nA: 1\n", "t.txt", dir.path());
  RequestSpec spec;
  Result<bool> first = reader.Next(&spec);
  ASSERT_TRUE(first.ok() && *first);
  Result<bool> second = reader.Next(&spec);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(), "t.txt:3: expected 'METHOD URL', got 'A: 1'");
  // After an error the reader is at its end.
  Result<bool> third = reader.Next(&spec);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(*third);
}

TEST(VegetaTargetsTest, BodyFilesMustBeRegularAndSmallEnough) {
  EXPECT_EQ(ErrorOf("POST http://h/\n@/dev/null\n"),
            "t.txt:2: body file '/dev/null': /dev/null is not a regular file");
  EXPECT_EQ(ErrorOf("POST http://h/\n@/tmp\n"),
            "t.txt:2: body file '/tmp': /tmp is not a regular file");
  TempDir dir;
  dir.Write("big", std::string(11, 'x'));
  VegetaTargetOptions options;
  options.max_body_bytes = 10;
  VegetaTargetReader reader =
      VegetaTargetReader::FromString("POST http://h/\n@big\n", "t.txt", dir.path(), options);
  RequestSpec spec;
  Result<bool> more = reader.Next(&spec);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().message(), "t.txt:2: body file 'big': larger than 10 bytes");
}

TEST(VegetaTargetsTest, OverlongLineIsAnError) {
  VegetaTargetOptions options;
  options.max_line_bytes = 32;
  VegetaTargetReader reader = VegetaTargetReader::FromString(
      "GET http://h/\nX: " + std::string(100, 'a') + "\n", "t.txt", ".", options);
  RequestSpec spec;
  Result<bool> more = reader.Next(&spec);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().message(), "t.txt:2: line longer than 32 bytes");
}

TEST(VegetaTargetsTest, OpenReportsMissingFile) {
  Result<VegetaTargetReader> reader = VegetaTargetReader::Open("/nonexistent/targets.txt");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(), "open /nonexistent/targets.txt: No such file or directory");
}

TEST(VegetaTargetsTest, StreamsLargeFilesAcrossBlocks) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += "GET http://127.0.0.1:8080/item/" + std::to_string(i) + "\nX-N: " + std::to_string(i) +
            "\n\n";
  }
  std::string path = dir.Write("big.txt", text);
  Result<VegetaTargetReader> reader = VegetaTargetReader::Open(path);
  ASSERT_TRUE(reader.ok());
  RequestSpec spec;
  int n = 0;
  while (true) {
    Result<bool> more = reader->Next(&spec);
    ASSERT_TRUE(more.ok()) << more.status().message();
    if (!*more) break;
    ASSERT_EQ(spec.url, "http://127.0.0.1:8080/item/" + std::to_string(n));
    ASSERT_EQ(spec.headers, (http::HeaderList{{"X-N", std::to_string(n)}}));
    ++n;
  }
  EXPECT_EQ(n, 20000);
}

}  // namespace
}  // namespace hammer::load
