#include "hammer/load/key_mapper.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace hammer::load {
namespace {

std::string KeyOf(const KeyMapper& mapper, std::string_view method, std::string_view url_text) {
  Result<http::Url> url = http::ParseUrl(url_text);
  EXPECT_TRUE(url.ok()) << url_text;
  std::string key = mapper.KeyFor(method, *url, url_text);
  std::string into = "stale text from an earlier, longer key";  // the buffer form replaces it
  mapper.KeyFor(method, *url, url_text, &into);
  EXPECT_EQ(into, key) << url_text;
  return key;
}

KeyMapper Make(KeyMode mode, const std::vector<std::string>& patterns = {}) {
  Result<KeyMapper> mapper = KeyMapper::Create(mode, patterns);
  EXPECT_TRUE(mapper.ok()) << mapper.status().message();
  return mapper.ok() ? *mapper : KeyMapper();
}

TEST(KeyMapperTest, Modes) {
  const char* url = "HTTP://Example.COM:80/item/42?q=1#frag";
  EXPECT_EQ(KeyOf(Make(KeyMode::kUrl), "GET", url), url);  // as written
  EXPECT_EQ(KeyOf(KeyMapper(), "GET", url), url);
  EXPECT_EQ(KeyOf(Make(KeyMode::kPath), "GET", url), "/item/42");
  EXPECT_EQ(KeyOf(Make(KeyMode::kMethodPath), "POST", url), "POST /item/42");
  EXPECT_EQ(KeyOf(Make(KeyMode::kHost), "GET", url), "example.com");
  EXPECT_EQ(KeyOf(Make(KeyMode::kHost), "GET", "https://[::1]:8443/"), "[::1]:8443");
  EXPECT_EQ(KeyOf(Make(KeyMode::kPath), "GET", "http://h"), "/");
}

TEST(KeyMapperTest, ModeNames) {
  for (KeyMode mode : {KeyMode::kUrl, KeyMode::kPath, KeyMode::kMethodPath, KeyMode::kHost}) {
    Result<KeyMode> parsed = ParseKeyMode(KeyModeName(mode));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, mode);
  }
  EXPECT_EQ(ParseKeyMode("URL").status().message(),
            "unknown key 'URL' (use url, path, method-path or host)");
}

TEST(KeyMapperTest, FirstMatchingPatternRenamesTheWholeKey) {
  KeyMapper mapper = Make(KeyMode::kPath, {"^/item/[0-9]+$=/item/:id", "/item/=/item/*",
                                           "^/user/([a-z]+)/.*=/user/\\1/...", "x=y"});
  EXPECT_EQ(KeyOf(mapper, "GET", "http://h/item/42"), "/item/:id");
  EXPECT_EQ(KeyOf(mapper, "GET", "http://h/item/42?x=1"), "/item/:id");  // the path has no query
  EXPECT_EQ(KeyOf(mapper, "GET", "http://h/item/42/reviews"), "/item/*");
  EXPECT_EQ(KeyOf(mapper, "GET", "http://h/shop/item/abc"), "/item/*");  // partial match
  EXPECT_EQ(KeyOf(mapper, "GET", "http://h/user/ada/x/y"), "/user/ada/...");
  EXPECT_EQ(KeyOf(mapper, "GET", "http://h/a"), "/a");  // no pattern matches
  EXPECT_EQ(KeyOf(mapper, "GET", "http://h/box"), "y");

  KeyMapper urls = Make(KeyMode::kUrl, {"[?&]q=[^&]*=search", "\\\\=backslash"});
  EXPECT_EQ(KeyOf(urls, "GET", "http://h/s?page=2&q=cats"), "search");  // '=' inside REGEX

  KeyMapper method_path = Make(KeyMode::kMethodPath, {"^(GET|HEAD) /static/=\\1 static"});
  EXPECT_EQ(KeyOf(method_path, "HEAD", "http://h/static/a.css"), "HEAD static");
  EXPECT_EQ(KeyOf(method_path, "POST", "http://h/static/a.css"), "POST /static/a.css");
  KeyMapper whole = Make(KeyMode::kHost, {"\\.example\\.com$=[\\0]"});
  EXPECT_EQ(KeyOf(whole, "GET", "http://a.b.example.com/"), "[.example.com]");
}

TEST(KeyMapperTest, BadPatterns) {
  auto error = [](const std::string& pattern) {
    Result<KeyMapper> mapper = KeyMapper::Create(KeyMode::kPath, {pattern});
    return mapper.ok() ? std::string("ok") : mapper.status().message();
  };
  EXPECT_EQ(error("/item/[0-9]+"), "--key-pattern '/item/[0-9]+': expected REGEX=NAME");
  EXPECT_EQ(error("=name"), "--key-pattern '=name': empty REGEX");
  EXPECT_EQ(error("/item/="), "--key-pattern '/item/=': empty NAME");
  EXPECT_EQ(error("/item/([0-9]+=x"),
            "--key-pattern '/item/([0-9]+=x': invalid REGEX: missing ): /item/([0-9]+");
  EXPECT_EQ(error("/item/([0-9]+)=\\2"),
            "--key-pattern '/item/([0-9]+)=\\2': invalid NAME: Rewrite schema requests 2 "
            "matches, but the regexp only has 1 parenthesized subexpressions.");
  EXPECT_EQ(error("a=b\\"),
            "--key-pattern 'a=b\\': invalid NAME: Rewrite schema error: '\\' not allowed at end.");
}

TEST(KeyMapperTest, CopiesShareThePatternsAcrossThreads) {
  KeyMapper mapper = Make(KeyMode::kPath, {"^/item/[0-9]+$=/item/:id"});
  Result<http::Url> url = http::ParseUrl("http://h/item/7");
  ASSERT_TRUE(url.ok());
  std::vector<std::thread> threads;
  std::vector<int> matches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t, copy = mapper] {
      for (int i = 0; i < 2000; ++i) {
        if (copy.KeyFor("GET", *url, "http://h/item/7") == "/item/:id") ++matches[t];
      }
    });
  }
  for (std::thread& thread : threads)
    thread.join();
  EXPECT_EQ(matches, std::vector<int>(4, 2000));
}

}  // namespace
}  // namespace hammer::load
