// Output files appear whole or not at all: written beside their path and renamed over it on
// Commit, so a writer that fails or is stopped leaves the path as it was; special files are
// written in place; errors name the flag and the path.
#include "hammer/base/output_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

  // The names in the directory, hidden ones included.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    DIR* dir = opendir(dir_.c_str());
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
  }

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
  EXPECT_EQ(Names(), std::vector<std::string>{"report.html"});
}

// Until Commit the path keeps the earlier output whole; the new bytes are in a hidden file.
TEST_F(OutputFileTest, ThePathChangesOnlyOnCommit) {
  const std::string path = dir_ + "/summary.json";
  ASSERT_TRUE(WriteOutputFile("--summary-json", path, "old").ok());
  Result<OutputFile> file = OutputFile::Open("--summary-json", path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_TRUE(file->Write("new").ok());
  EXPECT_EQ(ReadFile(path), "old");
  EXPECT_EQ(Names().size(), 2u);
  EXPECT_EQ(Names()[0][0], '.');
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(ReadFile(path), "new");
  EXPECT_EQ(Names(), std::vector<std::string>{"summary.json"});
}

// A writer that stops before Commit (an error elsewhere, an early return) leaves nothing: no
// file at the path, no temporary beside it.
TEST_F(OutputFileTest, AnUncommittedFileLeavesNothing) {
  const std::string path = dir_ + "/r.html";
  {
    Result<OutputFile> file = OutputFile::Open("--html", path);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(file->Write(std::string(10'000, 'x')).ok());
  }
  EXPECT_TRUE(Names().empty());
}

TEST_F(OutputFileTest, ErrorsNameTheFlagAndThePath) {
  const std::string path = dir_ + "/missing/summary.json";
  Status written = WriteOutputFile("--summary-json", path, "{}");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.message().find("--summary-json: cannot write '" + path + "'"),
            std::string::npos)
      << written.message();
}

// /dev/full is written in place (nothing is created in /dev) and takes no byte: ENOSPC comes
// back named, from Write and again from Commit.
TEST_F(OutputFileTest, AFullDeviceIsAnErrorNamed) {
  Result<OutputFile> file = OutputFile::Open("--html", "/dev/full");
  ASSERT_TRUE(file.ok()) << file.status().message();
  Status written = file->Write("<html>");
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.message(), "--html: cannot write '/dev/full': No space left on device");
  EXPECT_EQ(file->Commit().message(), written.message());
}

// A symbolic link is written through, not replaced by the rename.
TEST_F(OutputFileTest, ASymbolicLinkIsWrittenThrough) {
  const std::string target = dir_ + "/target.json";
  const std::string link = dir_ + "/link.json";
  ASSERT_TRUE(WriteOutputFile("--summary-json", target, "old").ok());
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  ASSERT_TRUE(WriteOutputFile("--summary-json", link, "new").ok());
  EXPECT_EQ(ReadFile(target), "new");
  char buffer[256];
  EXPECT_GT(readlink(link.c_str(), buffer, sizeof(buffer)), 0);
}

}  // namespace
}  // namespace hammer
