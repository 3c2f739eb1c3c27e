// AccessLogReader: nginx/Apache combined and common log lines as a request file.
#include "hammer/load/access_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hammer::load {
namespace {

constexpr const char* kOrigin = "http://127.0.0.1:8080";

std::vector<RequestSpec> ReadAll(AccessLogReader& reader) {
  std::vector<RequestSpec> all;
  RequestSpec spec;
  while (true) {
    Result<bool> more = reader.Next(&spec);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    all.push_back(spec);
  }
  return all;
}

TEST(ParseLogTimeTest, ZoneIsApplied) {
  // Apache's documentation example: 10/Oct/2000:13:55:36 -0700 is 20:55:36 UTC.
  Result<int64_t> t = ParseLogTime("10/Oct/2000:13:55:36 -0700");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(*t, 971211336);
  EXPECT_EQ(*ParseLogTime("10/Oct/2000:20:55:36 +0000"), 971211336);
  EXPECT_EQ(*ParseLogTime("11/Oct/2000:02:25:36 +0530"), 971211336);
  EXPECT_EQ(*ParseLogTime("29/Feb/2024:00:00:00 +0000"), 1709164800);
}

TEST(ParseLogTimeTest, BadTimesNameTheText) {
  for (const char* bad : {"10/Oct/2000:13:55:36", "10/Foo/2000:13:55:36 +0000",
                          "31/Feb/2000:13:55:36 +0000", "10/Oct/2000:25:00:00 +0000",
                          "10/Oct/2000:13:55:36 +07", "1/Oct/2000:13:55:36 +0000", ""}) {
    Result<int64_t> t = ParseLogTime(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.status().message().find("expected a time like"), std::string::npos);
  }
}

TEST(AccessLogReaderTest, CombinedAndCommonLinesBecomeRequestsOnTheOrigin) {
  auto reader = AccessLogReader::FromString(
      "10.0.0.1 - frank [07/Dec/2026:18:00:00 +0000] \"GET /a?x=1 HTTP/1.1\" 200 612 "
      "\"https://ref.example/\" \"curl/8.5.0\"\n"
      "\n"
      "10.0.0.2 - - [07/Dec/2026:18:00:01 +0000] \"HEAD /b HTTP/1.0\" 304 -\n",
      "access.log", kOrigin);
  std::vector<RequestSpec> all = ReadAll(reader);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].method, "GET");
  EXPECT_EQ(all[0].url, "http://127.0.0.1:8080/a?x=1");
  EXPECT_EQ(all[0].timestamp_us, 1796666400LL * 1'000'000);
  EXPECT_EQ(all[0].client, "10.0.0.1");
  EXPECT_EQ(all[0].where, "access.log:1");
  EXPECT_TRUE(all[0].headers.empty());
  EXPECT_TRUE(all[0].body.empty());
  EXPECT_EQ(all[1].method, "HEAD");
  EXPECT_EQ(all[1].url, "http://127.0.0.1:8080/b");
  EXPECT_EQ(all[1].timestamp_us, 1796666401LL * 1'000'000);
  EXPECT_EQ(all[1].where, "access.log:3");
  EXPECT_TRUE(reader.skipped().empty());
}

TEST(AccessLogReaderTest, EscapedRequestIsUnescaped) {
  auto reader = AccessLogReader::FromString(
      "::1 - - [07/Dec/2026:18:00:00 +0000] \"GET /q\\x3Fa=\\\"b\\\" HTTP/1.1\" 200 1 \"-\" "
      "\"a \\\"quoted\\\" agent\"\n",
      "access.log", kOrigin);
  std::vector<RequestSpec> all = ReadAll(reader);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].url, "http://127.0.0.1:8080/q?a=\"b\"");
  EXPECT_EQ(all[0].client, "::1");
}

TEST(AccessLogReaderTest, OtherMethodsAndUnparsedRequestsAreSkippedAndCounted) {
  auto reader = AccessLogReader::FromString(
      "1.2.3.4 - - [07/Dec/2026:18:00:00 +0000] \"POST /form HTTP/1.1\" 201 0 \"-\" \"-\"\n"
      "1.2.3.4 - - [07/Dec/2026:18:00:00 +0000] \"PUT /x HTTP/1.1\" 201 0 \"-\" \"-\"\n"
      "1.2.3.4 - - [07/Dec/2026:18:00:00 +0000] \"-\" 400 0 \"-\" \"-\"\n"
      "1.2.3.4 - - [07/Dec/2026:18:00:00 +0000] \"\\x16\\x03\\x01\\x02\\x00\" 400 157 \"-\" "
      "\"-\"\n"
      "1.2.3.4 - - [07/Dec/2026:18:00:00 +0000] \"GET http://abs.example/ HTTP/1.1\" 400 0\n"
      "1.2.3.4 - - [07/Dec/2026:18:00:01 +0000] \"GET /kept HTTP/1.1\" 200 2\n",
      "access.log", kOrigin);
  std::vector<RequestSpec> all = ReadAll(reader);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].url, "http://127.0.0.1:8080/kept");
  ASSERT_EQ(reader.skipped().size(), 2u);
  uint64_t methods = 0;
  uint64_t unparsed = 0;
  for (const auto& [reason, n] : reader.skipped()) {
    if (reason.starts_with("a method other than GET and HEAD")) methods = n;
    if (reason.starts_with("a request that is not 'METHOD /target'")) unparsed = n;
  }
  EXPECT_EQ(methods, 2u);
  EXPECT_EQ(unparsed, 3u);
}

TEST(AccessLogReaderTest, MalformedLineIsAnErrorWithItsLineAndTheReaderEnds) {
  struct Case {
    const char* line;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"1.2.3.4 - - 07/Dec/2026:18:00:00 \"GET / HTTP/1.1\" 200 1",
            "expected '[' and the time after the user"},
           {"1.2.3.4 - - [07/Dec/2026:18:00:00 +0000 \"GET / HTTP/1.1\" 200 1",
            "expected ']' after the time"},
           {"1.2.3.4 - - [07/Dec/2026:18:00:00] \"GET / HTTP/1.1\" 200 1", "expected a time like"},
           {"1.2.3.4 - - [07/Dec/2026:18:00:00 +0000] GET / 200 1", "expected the quoted request"},
           {"1.2.3.4 - - [07/Dec/2026:18:00:00 +0000] \"GET / HTTP/1.1\" OK 1",
            "expected the 3-digit status"},
           {"1.2.3.4 - - [07/Dec/2026:18:00:00 +0000] \"GET / HTTP/1.1\" 200 many",
            "expected the size sent"},
           {"just-a-word", "expected 'ADDRESS IDENT USER [TIME]'"},
       }) {
    auto reader = AccessLogReader::FromString(
        std::string("1.2.3.4 - - [07/Dec/2026:18:00:00 +0000] \"GET /ok HTTP/1.1\" 200 1\n") +
            c.line + "\n",
        "access.log", kOrigin);
    RequestSpec spec;
    ASSERT_TRUE(*reader.Next(&spec));
    Result<bool> bad = reader.Next(&spec);
    ASSERT_FALSE(bad.ok()) << c.line;
    EXPECT_TRUE(bad.status().message().starts_with("access.log:2: ")) << bad.status().message();
    EXPECT_NE(bad.status().message().find(c.message), std::string::npos) << bad.status().message();
    Result<bool> after = reader.Next(&spec);
    ASSERT_TRUE(after.ok());
    EXPECT_FALSE(*after);
  }
}

}  // namespace
}  // namespace hammer::load
