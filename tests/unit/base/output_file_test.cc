// WriteOutputFile: a whole text or pieces handed over as they are made land in the file in
// order; errors name the flag and the path, and a failed piece ends the output.
#include "hammer/base/output_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
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
  std::string dir_;
};

TEST_F(OutputFileTest, PiecesLandInOrder) {
  const std::string path = dir_ + "/summary.json";
  ASSERT_TRUE(WriteOutputFile("--summary-json", path, "old text, longer than the new").ok());
  int calls = 0;
  Status written = WriteOutputFile("--summary-json", path, [&](const OutputPieces& write) {
    for (const char* piece : {"{", "\"a\": 1", ""}) {
      ++calls;
      if (Status s = write(piece); !s.ok()) return s;
    }
    // Several at once, an empty one among them.
    const std::string_view together[] = {", ", "", "\"b\"", ": 2}\n"};
    ++calls;
    return write(together);
  });
  ASSERT_TRUE(written.ok()) << written.message();
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(ReadFile(path), "{\"a\": 1, \"b\": 2}\n");  // the old text's end is gone
}

// An existing file is written over and cut to the new length, shorter or longer than it was.
TEST_F(OutputFileTest, AnOldFileEndsWhereTheNewTextDoes) {
  const std::string path = dir_ + "/report.html";
  for (const std::string& text :
       {std::string(100'000, 'a'), std::string("short"), std::string(), std::string(70'000, 'b')}) {
    ASSERT_TRUE(WriteOutputFile("--html", path, text).ok());
    EXPECT_EQ(ReadFile(path), text) << text.size();
  }
}

// Many pieces in one call (more than one writev takes) land whole and in order.
TEST_F(OutputFileTest, ManyPiecesAtOnceLandInOrder) {
  const std::string path = dir_ + "/many.txt";
  std::vector<std::string> texts;
  std::string expected;
  for (int i = 0; i < 3000; ++i) {
    texts.push_back(std::to_string(i) + (i % 7 == 0 ? "" : ","));
    expected += texts.back();
  }
  const std::vector<std::string_view> pieces(texts.begin(), texts.end());
  ASSERT_TRUE(WriteOutputFile("--summary-json", path, [&](const OutputPieces& write) {
                return write(pieces);
              }).ok());
  EXPECT_EQ(ReadFile(path), expected);
}

TEST_F(OutputFileTest, ErrorsNameTheFlagAndThePath) {
  const std::string path = dir_ + "/missing/summary.json";
  bool produced = false;
  Status written = WriteOutputFile("--summary-json", path, [&](const OutputPieces&) {
    produced = true;
    return Status::Ok();
  });
  ASSERT_FALSE(written.ok());
  EXPECT_FALSE(produced);  // nothing is made for a file that cannot be opened
  EXPECT_NE(written.message().find("--summary-json: cannot write '" + path + "'"),
            std::string::npos)
      << written.message();
}

// /dev/full takes no byte (ENOSPC): the first piece fails, its error ends the output and comes
// back named.
TEST_F(OutputFileTest, AFailedPieceEndsTheOutput) {
  int pieces = 0;
  Status written = WriteOutputFile("--html", "/dev/full", [&](const OutputPieces& write) {
    for (int i = 0; i < 3; ++i) {
      ++pieces;
      if (Status s = write("piece"); !s.ok()) return s;
    }
    return Status::Ok();
  });
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(pieces, 1);
  EXPECT_NE(written.message().find("--html: cannot write '/dev/full'"), std::string::npos)
      << written.message();
}

}  // namespace
}  // namespace hammer
