// Output files: an existing file is truncated as it is opened, so that it never holds the end of
// an earlier output after the new one (nor only the earlier output's end once the writer is
// killed); errors name the flag and the path.
#include "hammer/base/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace hammer {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/hammer_output_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string dir_;
};

// Each write replaces the whole file, shorter or longer than it was.
TEST_F(OutputFileTest, AnOldFileEndsWhereTheNewTextDoes) {
  const std::string path = dir_ + "/report.html";
  for (const std::string& text :
       {std::string(100'000, 'a'), std::string("short"), std::string(), std::string(70'000, 'b')}) {
    ASSERT_TRUE(WriteOutputFile("--html", path, text).ok());
    EXPECT_EQ(ReadFile(path), text) << text.size();
  }
}

// Opened, and before a byte is written, an existing file is empty: a writer killed then leaves
// nothing of the earlier output.
TEST_F(OutputFileTest, AnExistingFileIsEmptyOnceOpened) {
  const std::string path = dir_ + "/summary.json";
  ASSERT_TRUE(WriteOutputFile("--summary-json", path, std::string(50'000, 'x')).ok());
  Result<int> fd = OpenOutputFile("--summary-json", path);
  ASSERT_TRUE(fd.ok()) << fd.status().message();
  struct stat st {};
  ASSERT_EQ(fstat(*fd, &st), 0);
  EXPECT_EQ(st.st_size, 0);
  close(*fd);
  EXPECT_EQ(ReadFile(path), "");
}

TEST_F(OutputFileTest, ErrorsNameTheFlagAndThePath) {
  const std::string path = dir_ + "/missing/summary.json";
  Status written = WriteOutputFile("--summary-json", path, "{}");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.message().find("--summary-json: cannot write '" + path + "'"),
            std::string::npos)
      << written.message();
}

// /dev/full takes no byte (ENOSPC): the write's error comes back named.
TEST_F(OutputFileTest, AFailedWriteIsNamed) {
  Status written = WriteOutputFile("--html", "/dev/full", "<html>");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.message().find("--html: cannot write '/dev/full'"), std::string::npos)
      << written.message();
}

}  // namespace
}  // namespace hammer
