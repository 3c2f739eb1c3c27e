#include "hammer/load/har.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace hammer::load {
namespace {

// An entry as Chrome writes it (trimmed to what the reader looks at, plus some noise).
std::string Entry(const std::string& started, const std::string& method, const std::string& url,
                  const std::string& headers, const std::string& extra = "", int status = 200) {
  return R"({"_initiator":{"type":"other"},"_priority":"High","_resourceType":"fetch",)"
         R"("cache":{},"connection":"443","pageref":"page_1","startedDateTime":")" +
         started + R"(","time":12.5,"request":{"method":")" + method + R"(","url":")" + url +
         R"(","httpVersion":"http/2.0","headers":[)" + headers +
         R"(],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0)" + extra +
         R"(},"response":{"status":)" + std::to_string(status) +
         R"(,"statusText":"","httpVersion":"http/2.0","headers":[],"cookies":[],)"
         R"("content":{"size":0,"mimeType":"x-unknown"},"redirectURL":"","headersSize":-1,)"
         R"("bodySize":-1,"_transferSize":0},"timings":{"blocked":1,"dns":-1,"ssl":-1,)"
         R"("connect":-1,"send":0,"wait":10,"receive":1}})";
}

std::string Har(const std::string& entries) {
  return R"({"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},)"
         R"("pages":[],"entries":[)" +
         entries + "]}}";
}

TEST(HarTest, ReadsRequestsHeadersBodiesAndOffsets) {
  std::string har =
      Har(Entry("2024-05-01T10:00:00.250Z", "GET", "https://example.com/app?x=1",
                R"({"name":":method","value":"GET"},{"name":":authority","value":"example.com"},)"
                R"({"name":":path","value":"/app?x=1"},{"name":"accept","value":"text/html"},)"
                R"({"name":"accept-encoding","value":"gzip, br"},{"name":"cookie","value":"s=1"},)"
                R"({"name":"user-agent","value":"Mozilla/5.0"})") +
          "," +
          Entry("2024-05-01T12:00:01.500+02:00", "POST", "https://example.com/api/items",
                R"({"name":"Host","value":"example.com"},{"name":"Content-Length","value":"9"},)"
                R"({"name":"Connection","value":"keep-alive"},{"name":"Content-Type",)"
                R"("value":"application/json"},{"name":"X-Req","value":"1"})",
                R"(,"postData":{"mimeType":"application/json","text":"{\"a\":\"b\"}"})") +
          "," +
          Entry("2024-05-01T10:00:03Z", "PUT", "http://127.0.0.1:8080/upload", "",
                R"(,"postData":{"mimeType":"text/plain","text":"aGk=","encoding":"base64"})"));
  Result<HarReadResult> result = ParseHar(har, "cap.har");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->skipped.empty());
  ASSERT_EQ(result->requests.size(), 3u);

  const RequestSpec& get = result->requests[0];
  EXPECT_EQ(get.method, "GET");
  EXPECT_EQ(get.url, "https://example.com/app?x=1");
  EXPECT_EQ(get.headers,
            (http::HeaderList{
                {"accept", "text/html"}, {"cookie", "s=1"}, {"user-agent", "Mozilla/5.0"}}));
  EXPECT_EQ(get.body, "");
  EXPECT_EQ(get.offset, 0);
  EXPECT_EQ(get.where, "cap.har:entry 1");

  const RequestSpec& post = result->requests[1];
  EXPECT_EQ(post.method, "POST");
  EXPECT_EQ(post.headers, (http::HeaderList{{"Content-Type", "application/json"}, {"X-Req", "1"}}));
  EXPECT_EQ(post.body, "{\"a\":\"b\"}");
  EXPECT_EQ(post.offset, 1250 * kMillisecond);  // 12:00:01.5+02:00 is 10:00:01.5Z

  const RequestSpec& put = result->requests[2];
  EXPECT_EQ(put.body, "hi");
  EXPECT_EQ(put.headers, (http::HeaderList{{"Content-Type", "text/plain"}}));  // from mimeType
  EXPECT_EQ(put.offset, 2750 * kMillisecond);
  EXPECT_EQ(put.where, "cap.har:entry 3");
}

TEST(HarTest, SkipsWhatCannotBeReplayedAndCountsWhy) {
  std::string har =
      Har(Entry("2024-05-01T10:00:05.000Z", "GET", "data:image/png;base64,iVBOR", "") + "," +
          Entry("2024-05-01T10:00:00.000Z", "GET", "blob:https://example.com/1234", "") + "," +
          Entry("2024-05-01T10:00:00.000Z", "GET", "wss://example.com/socket", "") + "," +
          Entry("2024-05-01T10:00:00.000Z", "GET", "chrome-extension://abc/x.js", "") + "," +
          Entry("2024-05-01T10:00:00.000Z", "GET", "DATA:text/plain,x", "") + "," +
          R"({"startedDateTime":"2024-05-01T10:00:00Z","_fromCache":"memory",)"
          R"("request":{"method":"GET","url":"https://example.com/cached.js","headers":[]},)"
          R"("response":{"status":200}},)" +
          Entry("2024-05-01T10:00:00.000Z", "GET", "https://ads.example.com/x", "", "", 0) + "," +
          Entry("2024-05-01T10:00:00.000Z", "GET", "https://user@example.com/", "") + "," +
          Entry("2024-05-01T10:00:00.000Z", "GET", "not a url", "") + "," +
          Entry("2024-05-01T10:00:00.000Z", "G ET", "https://example.com/", "") + "," +
          Entry("2024-05-01T10:00:00.000Z", "GET", "https://example.com/",
                R"({"name":"x","value":"a\r\nb"})") +
          "," +
          Entry("2024-05-01T10:00:00.000Z", "POST", "https://example.com/", "",
                R"(,"postData":{"text":"!!","encoding":"base64"})") +
          R"(,7,{"request":{"url":"https://example.com/"}},{"request":"x"},)" +
          R"({"request":{"method":"GET","url":"https://example.com/","headers":{}}},)" +
          Entry("2024-05-01T10:00:10.000Z", "GET", "https://example.com/kept", ""));
  Result<HarReadResult> result = ParseHar(har, "cap.har");
  ASSERT_TRUE(result.ok()) << result.status().message();
  std::map<std::string, uint64_t> expected = {
      {"data: URL", 2},         {"blob: URL", 1},
      {"wss: URL", 1},          {"chrome-extension: URL", 1},
      {"served from cache", 1}, {"no response", 1},
      {"invalid URL", 2},       {"invalid method", 1},
      {"invalid header", 1},    {"invalid body", 1},
      {"malformed entry", 4}};
  EXPECT_EQ(result->skipped, expected);
  ASSERT_EQ(result->requests.size(), 1u);
  EXPECT_EQ(result->requests[0].url, "https://example.com/kept");
  EXPECT_EQ(result->requests[0].offset, 0);  // the earliest of the requests returned
  EXPECT_EQ(result->requests[0].where, "cap.har:entry 17");

  HarOptions keep;
  keep.keep_unanswered = true;
  Result<HarReadResult> kept = ParseHar(har, "cap.har", keep);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->skipped.count("no response"), 0u);
  ASSERT_EQ(kept->requests.size(), 2u);
  EXPECT_EQ(kept->requests[0].url, "https://ads.example.com/x");
  EXPECT_EQ(kept->requests[1].offset, 10 * kSecond);
}

TEST(HarTest, MissingOrBadTimesGiveNoOffset) {
  std::string har = Har(Entry("yesterday", "GET", "http://h/a", "") + "," +
                        R"({"request":{"method":"GET","url":"http://h/b"}},)" +
                        Entry("2024-02-29T23:59:59.999999999-00:30", "GET", "http://h/c", "") +
                        "," + Entry("2024-03-01T00:30:00.000000001Z", "GET", "http://h/d", ""));
  Result<HarReadResult> result = ParseHar(har, "x");
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->requests.size(), 4u);
  EXPECT_EQ(result->requests[0].offset, -1);
  EXPECT_EQ(result->requests[1].offset, -1);
  EXPECT_EQ(result->requests[1].headers.size(), 0u);
  EXPECT_EQ(result->requests[2].offset, 0);
  EXPECT_EQ(result->requests[3].offset, 2);
}

TEST(HarTest, DocumentErrors) {
  EXPECT_EQ(ParseHar("", "x.har").status().message().rfind("x.har: invalid JSON: ", 0), 0u);
  EXPECT_EQ(ParseHar("{\"log\":{", "x.har").status().message().rfind("x.har: invalid JSON: ", 0),
            0u);
  EXPECT_EQ(ParseHar("{\"log\":{}}", "x.har").status().message(),
            "x.har: not a HAR file (no log.entries array)");
  EXPECT_EQ(ParseHar("[1]", "x.har").status().message(),
            "x.har: not a HAR file (no log.entries array)");
  HarOptions small;
  small.max_bytes = 1 << 20;
  EXPECT_EQ(ParseHar(std::string((1 << 20) + 1, ' '), "x.har", small).status().message(),
            "x.har: larger than 1 MiB, the limit for a HAR file");
  Result<HarReadResult> empty = ParseHar("\xEF\xBB\xBF{\"log\":{\"entries\":[]}}", "x.har");
  ASSERT_TRUE(empty.ok()) << empty.status().message();  // a BOM is allowed
  EXPECT_TRUE(empty->requests.empty());
}

TEST(HarTest, ReadHarFromFile) {
  char name[] = "/tmp/hammer_har_XXXXXX";
  int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(name) << Har(Entry("2024-05-01T10:00:00Z", "GET", "http://h/a", ""));
  Result<HarReadResult> result = ReadHar(name);
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->requests.size(), 1u);
  EXPECT_EQ(result->requests[0].where, std::string(name) + ":entry 1");
  HarOptions small;
  small.max_bytes = 100;
  EXPECT_EQ(ReadHar(name, small).status().message(),
            std::string(name) + ": larger than 0 MiB, the limit for a HAR file");
  unlink(name);
  EXPECT_EQ(ReadHar(name).status().message(),
            "open " + std::string(name) + ": No such file or directory");
}

TEST(HarTest, IsoTimestamps) {
  int64_t t = 0;
  ASSERT_TRUE(ParseIsoTimestamp("1970-01-01T00:00:00Z", &t));
  EXPECT_EQ(t, 0);
  ASSERT_TRUE(ParseIsoTimestamp("2024-05-01T10:00:00.123Z", &t));
  EXPECT_EQ(t, 1714557600123000000);
  ASSERT_TRUE(ParseIsoTimestamp("2024-05-01T12:00:00.123+02:00", &t));
  EXPECT_EQ(t, 1714557600123000000);
  ASSERT_TRUE(ParseIsoTimestamp("2024-05-01T05:30:00.123-0430", &t));
  EXPECT_EQ(t, 1714557600123000000);
  ASSERT_TRUE(ParseIsoTimestamp("2024-05-01T11:00:00.123+01", &t));
  EXPECT_EQ(t, 1714557600123000000);
  ASSERT_TRUE(ParseIsoTimestamp("2024-05-01 10:00:00.1234567891234", &t));  // no zone: UTC
  EXPECT_EQ(t, 1714557600123456789);
  ASSERT_TRUE(ParseIsoTimestamp("1969-12-31T23:59:59.5Z", &t));
  EXPECT_EQ(t, -500000000);
  ASSERT_TRUE(ParseIsoTimestamp("2000-02-29T00:00:00Z", &t));
  EXPECT_EQ(t, 951782400LL * kSecond);
  for (const char* bad :
       {"", "2024-05-01", "2024-05-01T10:00", "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
        "2024-04-31T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T10:60:00Z",
        "2024-05-01T10:00:60Z", "2024-05-01T10:00:00.Z", "2024-05-01T10:00:00+1:00",
        "2024-05-01T10:00:00+01:0", "2024-05-01T10:00:00 Z", "2024-05-01T10:00:00ZZ",
        "1600-01-01T00:00:00Z", "2300-01-01T00:00:00Z", "2024-5-01T10:00:00Z",
        "2024-05-01T10:00:00+24:00", "+024-05-01T10:00:00Z"}) {
    EXPECT_FALSE(ParseIsoTimestamp(bad, &t)) << bad;
  }
}

}  // namespace
}  // namespace hammer::load
