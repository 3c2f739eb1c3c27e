#include "hammer/load/jsonl_targets.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hammer/base/base64.h"

namespace hammer::load {
namespace {

std::vector<RequestSpec> ReadAll(const std::string& text) {
  JsonTargetReader reader = JsonTargetReader::FromString(text, "t.jsonl");
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
  JsonTargetReader reader = JsonTargetReader::FromString(text, "t.jsonl");
  RequestSpec spec;
  while (true) {
    Result<bool> more = reader.Next(&spec);
    if (!more.ok()) return more.status().message();
    if (!*more) return "";
  }
}

TEST(JsonTargetsTest, ReadsVegetaJsonTargets) {
  // As `vegeta encode` writes them: header values are arrays, the body is base64.
  std::vector<RequestSpec> all = ReadAll(
      R"({"method":"POST","url":"http://127.0.0.1:8080/users","body":"eyJuYW1lIjoiYWRhIn0=",)"
      R"("header":{"Content-Type":["application/json"],"X-Multi":["1","2"]}})"
      "\n\n   \n"
      R"({"method":"GET","url":"https://example.com/a?b=c","header":null,"body":null,"x":[1]})"
      "\r\n"
      R"({"url":"http://h/","method":"DELETE","header":{},"body":""})");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].method, "POST");
  EXPECT_EQ(all[0].url, "http://127.0.0.1:8080/users");
  EXPECT_EQ(all[0].body, "{\"name\":\"ada\"}");
  EXPECT_EQ(
      all[0].headers,
      (http::HeaderList{{"Content-Type", "application/json"}, {"X-Multi", "1"}, {"X-Multi", "2"}}));
  EXPECT_EQ(all[0].where, "t.jsonl:1");
  EXPECT_EQ(all[0].offset, -1);
  EXPECT_EQ(all[1].method, "GET");
  EXPECT_EQ(all[1].url, "https://example.com/a?b=c");
  EXPECT_TRUE(all[1].headers.empty());
  EXPECT_EQ(all[1].body, "");
  EXPECT_EQ(all[1].where, "t.jsonl:4");
  EXPECT_EQ(all[2].method, "DELETE");
  EXPECT_EQ(all[2].where, "t.jsonl:5");
}

TEST(JsonTargetsTest, BinaryBodiesAndEscapedStrings) {
  std::vector<RequestSpec> all = ReadAll(R"({"method":"PUT","url":"http:\/\/h\/x","body":"AAH/",)"
                                         R"("header":{"X-Name":["caf\u00e9"]}})");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].url, "http://h/x");
  EXPECT_EQ(all[0].body, std::string("\x00\x01\xff", 3));
  EXPECT_EQ(all[0].headers, (http::HeaderList{{"X-Name", "caf\xc3\xa9"}}));
}

TEST(JsonTargetsTest, ErrorsNameLineAndProblem) {
  EXPECT_EQ(ErrorOf(R"({"method":"PUT","url":"http://h/\u00e9"})"),
            "t.jsonl:1: bad URL 'http://h/\xc3\xa9': URL contains a non-ASCII byte");
  EXPECT_EQ(ErrorOf("\n{\"method\":\"GET\"}\n"), "t.jsonl:2: 'url' is missing");
  EXPECT_EQ(ErrorOf(R"({"url":"http://h/"})"), "t.jsonl:1: 'method' is missing");
  EXPECT_EQ(ErrorOf(R"({"method":1,"url":"http://h/"})"), "t.jsonl:1: 'method' must be a string");
  EXPECT_EQ(ErrorOf(R"({"method":"G T","url":"http://h/"})"), "t.jsonl:1: bad method 'G T'");
  EXPECT_EQ(ErrorOf(R"({"method":"GET","url":"h"})"),
            "t.jsonl:1: bad URL 'h': missing scheme (expected http:// or https://)");
  EXPECT_EQ(ErrorOf(R"({"method":"GET","url":"http://h/","header":{"A":"1"}})"),
            "t.jsonl:1: header 'A' must be an array of strings");
  EXPECT_EQ(ErrorOf(R"({"method":"GET","url":"http://h/","header":{"A":[1]}})"),
            "t.jsonl:1: header 'A' must be an array of strings");
  EXPECT_EQ(ErrorOf(R"({"method":"GET","url":"http://h/","header":[]})"),
            "t.jsonl:1: 'header' must be an object of arrays of strings");
  EXPECT_EQ(ErrorOf(R"({"method":"GET","url":"http://h/","header":{"A B":["1"]}})"),
            "t.jsonl:1: bad header name 'A B'");
  EXPECT_EQ(ErrorOf(R"({"method":"GET","url":"http://h/","header":{"A":["1\r\nB: 2"]}})"),
            "t.jsonl:1: control character in the value of header 'A'");
  EXPECT_EQ(ErrorOf(R"({"method":"GET","url":"http://h/","body":"not base64!"})"),
            "t.jsonl:1: 'body' is not base64: " + Base64Decode("not base64!").status().message());
  EXPECT_EQ(ErrorOf("[1,2]"), "t.jsonl:1: expected a JSON object");
  EXPECT_TRUE(ErrorOf("{\"method\":\"GET\",\n").starts_with("t.jsonl:1: invalid JSON: "));
  EXPECT_TRUE(ErrorOf("{} {}\n").starts_with("t.jsonl:1: invalid JSON: "));
  EXPECT_TRUE(ErrorOf("\xff\n").starts_with("t.jsonl:1: invalid JSON: "));
  // Without its newline a last line that is JSON but a wrong target is still an error.
  EXPECT_EQ(ErrorOf("{\"url\":\"http://h/\"}"), "t.jsonl:1: 'method' is missing");
}

TEST(JsonTargetsTest, ACutLastLineIsDroppedAndSaid) {
  // What kill -9 leaves of a capture: whole lines, then the start of one without its newline.
  JsonTargetReader reader = JsonTargetReader::FromString(
      "{\"method\":\"GET\",\"url\":\"http://h/1\"}\n{\"method\":\"POST\",\"url\":\"http://h/",
      "capture.jsonl");
  RequestSpec spec;
  Result<bool> more = reader.Next(&spec);
  ASSERT_TRUE(more.ok() && *more);
  EXPECT_EQ(spec.url, "http://h/1");
  more = reader.Next(&spec);
  ASSERT_TRUE(more.ok()) << more.status().message();
  EXPECT_FALSE(*more);
  EXPECT_EQ(reader.cut_short(),
            "capture.jsonl:2: the last line ends without its newline and is not whole JSON (a "
            "writer killed mid-write?): dropped");
}

}  // namespace
}  // namespace hammer::load
