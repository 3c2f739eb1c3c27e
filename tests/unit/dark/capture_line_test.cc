#include "hammer/dark/capture_line.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "hammer/base/base64.h"
#include "hammer/load/jsonl_targets.h"

namespace hammer::dark {
namespace {

CapturedExchange Exchange(std::string head, std::string body = "") {
  CapturedExchange e;
  e.arrival_us = 1765100000123456;
  e.protocol = "HTTP/1.1";
  e.authority = "api.example:8080";
  e.head = std::move(head);
  e.body = std::move(body);
  e.body_size = e.body.size();
  e.status = 201;
  e.latency_us = 1834;
  return e;
}

std::string Line(const CapturedExchange& e, const CaptureRedaction& redaction = {}) {
  std::string out;
  AppendCaptureLine(out, e, redaction);
  return out;
}

TEST(CaptureLineTest, WritesTheTargetsFieldsAndTheExchange) {
  CapturedExchange e = Exchange(
      "POST /users?page=2 HTTP/1.1\r\nContent-Type: application/json\r\nHost: up:9001\r\n"
      "Content-Length: 7\r\nX-Forwarded-For: 10.0.0.1\r\nAccept: a\r\naccept: b\r\n\r\n",
      "{\"n\":1}");
  std::string line = Line(e);
  ASSERT_EQ(line.back(), '\n');
  ASSERT_EQ(line.find('\n'), line.size() - 1);  // one line
  EXPECT_EQ(line,
            "{\"method\":\"POST\",\"url\":\"http://api.example:8080/users?page=2\","
            "\"header\":{\"Content-Type\":[\"application/json\"],\"Accept\":[\"a\",\"b\"]},"
            "\"body\":\"eyJuIjoxfQ==\",\"ts\":1765100000123456,\"protocol\":\"HTTP/1.1\","
            "\"status\":201,\"latency_us\":1834}\n");
}

TEST(CaptureLineTest, HammerLoadReadsItBack) {
  CapturedExchange e =
      Exchange("PUT /a%20b?x=1 HTTP/1.1\r\nX-Quote: say \"hi\"\\\r\nHost: h\r\n\r\n", "bytes");
  e.https = true;
  load::JsonTargetReader reader = load::JsonTargetReader::FromString(Line(e), "c.jsonl");
  load::RequestSpec spec;
  Result<bool> got = reader.Next(&spec);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_TRUE(*got);
  EXPECT_EQ(spec.method, "PUT");
  EXPECT_EQ(spec.url, "https://api.example:8080/a%20b?x=1");
  ASSERT_EQ(spec.headers.size(), 1u);
  EXPECT_EQ(spec.headers[0].first, "X-Quote");
  EXPECT_EQ(spec.headers[0].second, "say \"hi\"\\");
  EXPECT_EQ(spec.body, "bytes");
}

TEST(CaptureLineTest, RedactsTheDefaultSecrets) {
  CapturedExchange e = Exchange(
      "GET /p?a=1&token=t0k&KEY=k&password=pw&sig=s&keep=v HTTP/1.1\r\n"
      "Authorization: Bearer abc\r\nproxy-authorization: Basic x\r\nCookie: sid=1\r\n"
      "Set-Cookie: a=b\r\nX-Api-Key: secret\r\nX-Other: visible\r\n\r\n");
  std::string line = Line(e);
  for (std::string_view secret :
       {"abc", "Basic", "sid=1", "a=b", "secret", "t0k", "=k&", "pw", "sig=s"}) {
    EXPECT_EQ(line.find(secret), std::string::npos) << secret << " in " << line;
  }
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["url"],
            "http://api.example:8080/p?a=1&token=REDACTED&KEY=REDACTED&"
            "password=REDACTED&sig=REDACTED&keep=v");
  EXPECT_EQ(j["header"]["Authorization"][0], "REDACTED");
  EXPECT_EQ(j["header"]["proxy-authorization"][0], "REDACTED");
  EXPECT_EQ(j["header"]["Cookie"][0], "REDACTED");
  EXPECT_EQ(j["header"]["Set-Cookie"][0], "REDACTED");
  EXPECT_EQ(j["header"]["X-Api-Key"][0], "REDACTED");
  EXPECT_EQ(j["header"]["X-Other"][0], "visible");
}

TEST(CaptureLineTest, RedactionAddsAndKeepsNames) {
  CaptureRedaction redaction({"x-session", "Session"}, {"cookie", "TOKEN"});
  EXPECT_TRUE(redaction.RedactsHeader("X-Session"));
  EXPECT_TRUE(redaction.RedactsParameter("session"));
  EXPECT_FALSE(redaction.RedactsHeader("Cookie"));
  EXPECT_FALSE(redaction.RedactsParameter("token"));
  EXPECT_TRUE(redaction.RedactsHeader("Authorization"));
  EXPECT_EQ(redaction.RedactTarget("/q?token=1&session=2&key=3#frag"),
            "/q?token=1&session=REDACTED&key=REDACTED#frag");
  EXPECT_EQ(redaction.RedactTarget("/q?key&=x&&key="), "/q?key&=x&&key=REDACTED");
  EXPECT_EQ(redaction.RedactTarget("/plain"), "/plain");
}

TEST(CaptureLineTest, MarksBinaryAndTruncatedBodies) {
  std::string grpc("\0\0\0\0\x03\x08\x96\x01", 8);
  CapturedExchange e = Exchange(
      "POST /pkg.Svc/Call HTTP/1.1\r\ncontent-type: application/grpc\r\nte: trailers\r\n\r\n",
      grpc);
  e.protocol = "HTTP/2";
  nlohmann::json j = nlohmann::json::parse(Line(e));
  EXPECT_EQ(j["body"], Base64Encode(grpc));
  EXPECT_EQ(j["body_binary"], true);
  EXPECT_EQ(j["protocol"], "HTTP/2");
  EXPECT_FALSE(j["header"].contains("te"));
  EXPECT_FALSE(j.contains("body_truncated"));

  e = Exchange("POST /up HTTP/1.1\r\nContent-Type: text/plain\r\n\r\n", "first");
  e.body_size = 100000;
  e.body_truncated = true;
  j = nlohmann::json::parse(Line(e));
  EXPECT_EQ(j["body"], Base64Encode("first"));
  EXPECT_FALSE(j.contains("body_binary"));
  EXPECT_EQ(j["body_truncated"], true);
  EXPECT_EQ(j["body_size"], 100000);
}

TEST(CaptureLineTest, BinaryIsToldByTypeOrBytes) {
  EXPECT_TRUE(IsBinaryBody("application/grpc+proto", "x"));
  EXPECT_TRUE(IsBinaryBody("Application/Octet-Stream; a=b", "x"));
  EXPECT_TRUE(IsBinaryBody("image/png", ""));
  EXPECT_FALSE(IsBinaryBody("application/json", "{\"é\":\"\xe2\x82\xac\"}\r\n\t"));
  EXPECT_TRUE(IsBinaryBody("", std::string("a\0b", 3)));
  EXPECT_TRUE(IsBinaryBody("text/plain", "\xff\xfe"));
  EXPECT_TRUE(IsBinaryBody("text/plain", "\xe2\x82"));  // cut sequence
}

TEST(CaptureLineTest, EveryLineIsValidJsonWhateverTheBytes) {
  CapturedExchange e =
      Exchange("GET /x HTTP/1.1\r\nX-Latin: caf\xe9\x01\x7f\r\nX-Utf8: \xe2\x82\xac\r\n\r\n");
  e.authority.clear();
  nlohmann::json j = nlohmann::json::parse(Line(e));
  EXPECT_EQ(j["header"]["X-Latin"][0], "caf\xc3\xa9\x01\x7f");
  EXPECT_EQ(j["header"]["X-Utf8"][0], "\xe2\x82\xac");
  EXPECT_EQ(j["url"], "http://localhost/x");
}

}  // namespace
}  // namespace hammer::dark
