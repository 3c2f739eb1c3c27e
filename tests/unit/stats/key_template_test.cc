#include "hammer/stats/key_template.h"

#include <gtest/gtest.h>

#include <string>

namespace hammer::stats {
namespace {

TEST(EndpointKeyTest, StopsAtASegmentPastTheLimit) {
  // The segment that starts before 256 bytes is templated whole, then the key is cut.
  std::string long_segments;
  for (int i = 0; i < 100; ++i)
    long_segments += "/12345";
  std::string expected = "GET ";
  for (int i = 0; i < 51; ++i)
    expected += "/{id}";
  EXPECT_EQ(EndpointKey("GET", long_segments), expected.substr(0, 256));
  EXPECT_EQ(EndpointKey("GET", "/x" + std::string(300, 'y') + "/7"),
            ("GET /x" + std::string(300, 'y')).substr(0, 256));
}

TEST(EndpointKeyTest, NormalizesIdentifiers) {
  EXPECT_EQ(EndpointKey("GET", "/items/7?verbose=1"), "GET /items/{id}");
  EXPECT_EQ(EndpointKey("GET", "/users/42/orders/123456"), "GET /users/{id}/orders/{id}");
  EXPECT_EQ(EndpointKey("GET", "/u/3f2504e0-4f89-11d3-9a0c-0305e82c3301/x"), "GET /u/{id}/x");
  EXPECT_EQ(EndpointKey("GET", "/blob/0123456789abcdef0123"), "GET /blob/{id}");
  EXPECT_EQ(EndpointKey("GET", "/v2/search"), "GET /v2/search");
  EXPECT_EQ(EndpointKey("POST", "http://host:8080/a/1?x"), "POST /a/{id}");
  EXPECT_EQ(EndpointKey("GET", "http://host"), "GET /");
  EXPECT_EQ(EndpointKey("GET", ""), "GET /");
  EXPECT_EQ(EndpointKey("GET", "/a//b/"), "GET /a//b/");
  EXPECT_EQ(EndpointKey("GET", "*"), "GET *");
  EXPECT_LE(EndpointKey("GET", "/" + std::string(1000, 'a')).size(), 256u);
}

TEST(KeyTemplateTest, UrlsKeepOriginAndLoseIdentifiersAndQueryValues) {
  EXPECT_EQ(KeyTemplate("http://127.0.0.1:8080/item/81237?ref=abc&x"),
            "http://127.0.0.1:8080/item/{id}?ref={id}&x");
  EXPECT_EQ(KeyTemplate("https://h/u/3f2504e0-4f89-11d3-9a0c-0305e82c3301/orders/7"),
            "https://h/u/{id}/orders/{id}");
  EXPECT_EQ(KeyTemplate("http://h/img/12345.jpg#top"), "http://h/img/{id}.jpg");
  EXPECT_EQ(KeyTemplate("http://h/v2/search?q=shoes&page=2"),
            "http://h/v2/search?q={id}&page={id}");
  EXPECT_EQ(KeyTemplate("http://h/?123456"), "http://h/?{id}");
  EXPECT_EQ(KeyTemplate("http://h"), "http://h");
  EXPECT_EQ(KeyTemplate("http://h?id=7"), "http://h?id={id}");
}

TEST(KeyTemplateTest, EveryKeyModeAndNames) {
  EXPECT_EQ(KeyTemplate("GET /json/42"), "GET /json/{id}");            // method-path
  EXPECT_EQ(KeyTemplate("/item/42?a=1"), "/item/{id}?a={id}");         // path
  EXPECT_EQ(KeyTemplate("127.0.0.1:8080"), "127.0.0.1:8080");          // host
  EXPECT_EQ(KeyTemplate("/item/:id"), "/item/:id");                    // a --key-pattern name
  EXPECT_EQ(KeyTemplate("not a url \\x00..."), "not a url \\x00...");  // an invalid line
  EXPECT_EQ(KeyTemplate("GET http://h/a/1"), "GET http://h/a/{id}");
  EXPECT_EQ(KeyTemplate("name?ref=a/b&x=1"), "name?ref=a/b&x=1");  // no path before the query
}

TEST(KeyTemplateTest, OddPaths) {
  EXPECT_EQ(KeyTemplate("http://h//7//"), "http://h//{id}//");             // empty segments stay
  EXPECT_EQ(KeyTemplate("http://h/a/%2F12/%20"), "http://h/a/%2F12/%20");  // escapes are text
  EXPECT_EQ(KeyTemplate("http://h/a/" + std::string(300, '9') + "/b"), "http://h/a/{id}/b");
  EXPECT_EQ(KeyTemplate("http://h/caf\xc3\xa9/12/\xe2\x82\xac"),
            "http://h/caf\xc3\xa9/{id}/\xe2\x82\xac");  // UTF-8 bytes stay
  EXPECT_EQ(KeyTemplate("http://h/0123456789abcde"), "http://h/0123456789abcde");  // 15 hex
  EXPECT_EQ(KeyTemplate("http://h/0123456789ABCDEF"), "http://h/{id}");            // 16 hex
  EXPECT_EQ(KeyTemplate("http://h/" + std::string(36, 'a')), "http://h/" + std::string(36, 'a'));
  EXPECT_EQ(KeyTemplate("http://h/" + std::string(36, '1')), "http://h/{id}");
  EXPECT_EQ(KeyTemplate("http://h/3F2504E0-4F89-11D3-9A0C-0305E82C3301.json"),
            "http://h/{id}.json");
  EXPECT_EQ(KeyTemplate("http://h/3f2504e0-4f89-11d3-9a0c-0305e82c330g"),
            "http://h/3f2504e0-4f89-11d3-9a0c-0305e82c330g");
  EXPECT_EQ(KeyTemplate("http://h/12.tar.gz"), "http://h/12.tar.gz");  // the stem is "12.tar"
  EXPECT_EQ(KeyTemplate("http://h/1.2"), "http://h/{id}.2");
  EXPECT_EQ(KeyTemplate("http://h/.12"), "http://h/.12");  // an extension without a stem
  EXPECT_EQ(KeyTemplate("http://h/.x"), "http://h/.x");
  EXPECT_EQ(KeyTemplate("http://h/12."), "http://h/{id}.");
  EXPECT_EQ(KeyTemplate("http://h/a#1/2?x=3"), "http://h/a");  // the fragment goes whole
}

TEST(KeyTemplateTest, OddQueries) {
  EXPECT_EQ(KeyTemplate("http://h/a?"), "http://h/a?");
  EXPECT_EQ(KeyTemplate("http://h/a?x&y&7"), "http://h/a?x&y&{id}");       // names without values
  EXPECT_EQ(KeyTemplate("http://h/a?x=&y="), "http://h/a?x={id}&y={id}");  // empty values too
  EXPECT_EQ(KeyTemplate("http://h/a?=1&&=&"), "http://h/a?={id}&&={id}&");
  EXPECT_EQ(KeyTemplate("http://h/a?x=1=2&y=a/b?c"), "http://h/a?x={id}&y={id}");
  EXPECT_EQ(KeyTemplate("http://h/a?q=caf%C3%A9#top"), "http://h/a?q={id}");
  EXPECT_EQ(KeyTemplate("http://h/a?12.jpg&0123456789abcdef0"), "http://h/a?{id}.jpg&{id}");
  EXPECT_EQ(KeyTemplate("http://h/a?/7/"), "http://h/a?/7/");  // a bare parameter is one segment
  EXPECT_EQ(KeyTemplate("http://h/a?" + std::string(100, '5')), "http://h/a?{id}");
  EXPECT_EQ(KeyTemplate("/?\xc3\xa9=\xc3\xa9&\xc3\xa9"), "/?\xc3\xa9={id}&\xc3\xa9");
}

TEST(KeyTemplateTest, IsIdempotent) {
  // The last two: a '/' only in a query value is no path (the key is its own template), else
  // its template, where that value is "{id}", would find a path elsewhere (after the space).
  for (const char* key :
       {"http://h/item/81237?ref=abc&x", "GET /json/42", "/a/1.png?7", "http://h/a//b/",
        "/x/0123456789abcdef0123/y?k=v&k2=&k3", "name?ref=a/b& x=1&c/d/7", "name#a/1"}) {
    std::string once = KeyTemplate(key);
    EXPECT_EQ(KeyTemplate(once), once) << key;
  }
}

TEST(KeyTemplateTest, IntoABufferReplacesWhatItHeld) {
  std::string buffer = "left over from a much longer previous key, /x/1?y=2";
  for (const char* key : {"http://h/item/81237?ref=abc&x", "no-path", "GET /json/42", ""}) {
    KeyTemplate(key, &buffer);
    EXPECT_EQ(buffer, KeyTemplate(key)) << key;
  }
}

// KeyTemplater remembers where the last key's path started and keeps its buffer: whatever came
// before (longer or shorter), each key gets exactly KeyTemplate's answer.
TEST(KeyTemplaterTest, AgreesWithKeyTemplateWhateverCameBefore) {
  const char* keys[] = {"http://h/a/1",
                        "http://h/b/2?x=3",
                        "http://h:8080/c/4",
                        "http://h",
                        "http://h/",
                        "http://h?q=5",
                        "http://h/d/6#f",
                        "GET /x/7",
                        "GET /y/8",
                        "GET http://h/x/9",
                        "GET http://h/y/10",
                        "/a/11",
                        "/b/12",
                        "x y/13",
                        "x y/14",
                        "host:80",
                        "GET /z/15",
                        "http://h/e/16",
                        "https://h/e/17",
                        "/",
                        "http://h//18/19",
                        "(other)",
                        "GET  /w/20",
                        "GET /w/21",
                        "http://h/a?x=&y",
                        "http://h//0123456789abcdef/%41?=7#x",
                        "GET /caf\xc3\xa9/22?a",
                        "http://h/a/long/path/0123456789abcdef0123/of/segments?and=a&query=1"};
  for (const char* first : keys) {
    for (const char* second : keys) {
      KeyTemplater templater;
      std::string out;
      templater.Template(first, &out);
      EXPECT_EQ(out, KeyTemplate(first)) << first;
      templater.Template(second, &out);
      EXPECT_EQ(out, KeyTemplate(second)) << second << " after " << first;
    }
  }
}

// KeyTemplater copies the last template for a key of the last key's shape: keys of one endpoint
// that differ in what their templates replaced, or in what they kept, by a byte or a delimiter,
// each after each other one, each get exactly KeyTemplate's answer.
TEST(KeyTemplaterTest, KeysOfTheLastKeysShapeAndAlmostOfIt) {
  const std::string keys[] = {
      "http://h/item/1?ref=2",
      "http://h/item/81237?ref=571234",
      "http://h/item/0123456789abcdef?ref=2",
      "http://h/item/3f2504e0-4f89-11d3-9a0c-0305e82c3301?ref=2",
      "http://h/item/" + std::string(40, '7') + "?ref=" + std::string(40, 'x'),
      "http://h/item/x?ref=2",
      "http://h/item/?ref=2",
      "http://h/item/12?ref=",
      "http://h/item/12?ref=a=b/c?d",
      "http://h/item/12?ref=2#frag",
      "http://h/item/12?ref=2&x",
      "http://h/item/12?ref=2&x=3",
      "http://h/item/12?ref",
      "http://h/item/12?2?ref=3",
      "http://h/item/12/x?ref=2",
      "http://h/item/12.jpg?ref=2",
      "http://h/item/12#?ref=2",
      "http://h/item/12",
      "http://h/item/12/",
      "http://h/item/12?",
      "http://h/items/12?ref=2",
      "http://h/item/12?reg=2",
      "http://h/item/12?ref=2&",
      "http://h/item/caf\xc3\xa9?ref=\xc3\xa9",
      "http://h/item/%31?ref=%32",
      "http://h/1/2/3/4/5/6/7/8/9?a=1&b=2",
      "http://h/1/2/3/4/5/6/7/8/9?a=1&b=3",
      "http://h/1/2/3/4/5/6/7/8?a=1&b=2",
      "http://h//item/12?ref=2",
      "http://g/item/12?ref=2",
      "GET /item/12?ref=2",
      "/item/12?ref=2",
  };
  for (const std::string& first : keys) {
    for (const std::string& second : keys) {
      KeyTemplater templater;
      std::string out;
      for (const std::string& key : {first, second, first, second}) {
        templater.Template(key, &out);
        EXPECT_EQ(out, KeyTemplate(key)) << key << " after " << first << ", " << second;
      }
    }
  }
}

}  // namespace
}  // namespace hammer::stats
