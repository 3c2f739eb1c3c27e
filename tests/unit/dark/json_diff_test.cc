// JsonDiff: the paths reported for status, header and JSON body differences, ignore prefixes
// and the work caps.
#include "hammer/dark/json_diff.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace hammer::dark {
namespace {

ResponseView Body(std::string_view body, int status = 200) {
  ResponseView view;
  view.status = status;
  view.body = body;
  return view;
}

std::vector<std::string> Paths(const DiffResult& result) {
  std::vector<std::string> paths;
  for (const FieldDifference& d : result.differences)
    paths.push_back(d.path);
  return paths;
}

using Strings = std::vector<std::string>;

TEST(JsonDiffTest, IdenticalAndEquivalentBodiesAreEqual) {
  JsonDiff diff;
  EXPECT_TRUE(diff.Compare(Body("{\"a\":1}"), Body("{\"a\":1}")).empty());
  EXPECT_TRUE(diff.Compare(Body(""), Body("")).empty());
  // Whitespace, key order and number spelling do not matter.
  EXPECT_TRUE(diff.Compare(Body(R"({"a": 1, "b": [true, null, "x"]})"),
                           Body(R"({"b":[true,null,"x"],"a":1.0})"))
                  .empty());
  EXPECT_TRUE(diff.Compare(Body("1e2"), Body("100")).empty());
}

TEST(JsonDiffTest, StatusDifferenceHidesTheRest) {
  JsonDiff diff;
  DiffResult result = diff.Compare(Body("{\"a\":1}", 200), Body("oops", 500));
  ASSERT_EQ(Paths(result), Strings{"status"});
  EXPECT_EQ(result.differences[0].left, "200");
  EXPECT_EQ(result.differences[0].right, "500");
}

TEST(JsonDiffTest, FieldPaths) {
  JsonDiff diff;
  DiffResult result =
      diff.Compare(Body(R"({"user":{"name":"ann","age":30,"tags":["a"]},"gone":1,"n":1,"t":true})"),
                   Body(R"({"user":{"name":"bob","age":"30","tags":{}},"new":2,"n":2,"t":false})"));
  EXPECT_EQ(Paths(result), (Strings{"body.gone", "body.n", "body.new", "body.t", "body.user.age",
                                    "body.user.name", "body.user.tags"}));
  EXPECT_EQ(result.Find("body.gone")->kind, DifferenceKind::kMissing);
  EXPECT_EQ(result.Find("body.gone")->left, "1");
  EXPECT_EQ(result.Find("body.gone")->right, "");
  EXPECT_EQ(result.Find("body.new")->kind, DifferenceKind::kExtra);
  EXPECT_EQ(result.Find("body.user.age")->kind, DifferenceKind::kType);
  EXPECT_EQ(result.Find("body.user.age")->right, "\"30\"");
  EXPECT_EQ(result.Find("body.user.name")->kind, DifferenceKind::kValue);
  EXPECT_EQ(result.Find("body.user.name")->left, "\"ann\"");
  EXPECT_EQ(result.Find("body.user.tags")->left, "array(1)");
  EXPECT_EQ(result.Find("body.user.tags")->right, "object(0)");
  EXPECT_FALSE(result.truncated);
}

TEST(JsonDiffTest, ArraysOfEqualLengthShareAnIndexlessPath) {
  JsonDiff diff;
  DiffResult result =
      diff.Compare(Body(R"({"items":[{"id":1,"price":5},{"id":2,"price":6},{"id":3,"price":7}]})"),
                   Body(R"({"items":[{"id":1,"price":9},{"id":2,"price":6},{"id":3,"price":8}]})"));
  ASSERT_EQ(Paths(result), Strings{"body.items[].price"});
  EXPECT_EQ(result.differences[0].occurrences, 2u);
}

TEST(JsonDiffTest, ArraysOfDifferentLengthsDifferInSize) {
  JsonDiff diff;
  DiffResult result = diff.Compare(Body("[1,2,3]"), Body("[1,2]"));
  ASSERT_EQ(Paths(result), Strings{"body"});
  EXPECT_EQ(result.differences[0].kind, DifferenceKind::kSize);
  EXPECT_EQ(result.differences[0].left, "size 3");
  EXPECT_EQ(result.differences[0].right, "size 2");
}

TEST(JsonDiffTest, SameElementsInAnotherOrderIsOneOrderDifference) {
  JsonDiff diff;
  DiffResult result = diff.Compare(Body(R"({"ids":["a","b",{"x":1,"y":[2]}]})"),
                                   Body(R"({"ids":[{"y":[2],"x":1.0},"b","a"]})"));
  ASSERT_EQ(Paths(result), Strings{"body.ids"});
  EXPECT_EQ(result.differences[0].kind, DifferenceKind::kOrder);
  // Not a permutation: element differences stay.
  result = diff.Compare(Body(R"({"ids":["a","b","c"]})"), Body(R"({"ids":["c","b","d"]})"));
  ASSERT_EQ(Paths(result), Strings{"body.ids[]"});
  EXPECT_EQ(result.differences[0].occurrences, 2u);
}

TEST(JsonDiffTest, NonJsonBodiesCompareAsBytes) {
  JsonDiff diff;
  DiffResult result = diff.Compare(Body("<html>a</html>"), Body("<html>b</html>"));
  ASSERT_EQ(Paths(result), Strings{"body"});
  EXPECT_EQ(result.differences[0].kind, DifferenceKind::kValue);
  result = diff.Compare(Body("{\"a\":1}"), Body("<html>error</html>"));
  ASSERT_EQ(Paths(result), Strings{"body"});
  EXPECT_EQ(result.differences[0].kind, DifferenceKind::kType);
  result = diff.Compare(Body("{\"a\":1}"), Body(""));
  EXPECT_EQ(result.differences[0].kind, DifferenceKind::kType);
  std::string long_text(1000, 'x');
  result = diff.Compare(Body(long_text), Body("y"));
  EXPECT_EQ(result.differences[0].left.size(), kMaxRenderedBytes);
}

TEST(JsonDiffTest, SelectedHeaders) {
  JsonDiff diff(JsonDiffOptions{{"Content-Type", "x-version", "ETag"}, {}});
  const http::Header left[] = {{"content-type", "application/json"},
                               {"X-Version", "1"},
                               {"x-version", "2"},
                               {"Date", "Mon"}};
  const http::Header right[] = {{"Content-Type", "application/json"},
                                {"X-Version", "1, 3"},
                                {"ETag", "\"abc\""},
                                {"Date", "Tue"}};
  ResponseView l = Body("{}");
  ResponseView r = Body("{}");
  l.headers = left;
  r.headers = right;
  DiffResult result = diff.Compare(l, r);
  ASSERT_EQ(Paths(result), (Strings{"header.x-version", "header.etag"}));  // Date not selected
  EXPECT_EQ(result.differences[0].left, "1, 2");
  EXPECT_EQ(result.differences[0].right, "1, 3");
  EXPECT_EQ(result.differences[1].kind, DifferenceKind::kExtra);
}

TEST(JsonDiffTest, IgnorePrefixesStopAtSegmentBoundaries) {
  JsonDiff diff(JsonDiffOptions{{}, {"body.meta", "body.items[].ts", "body[\"a.b\"]"}});
  DiffResult result = diff.Compare(
      Body(R"({"meta":{"generated_at":1},"metadata":1,"items":[{"ts":1,"v":1}],"a.b":1})"),
      Body(R"({"meta":{"generated_at":2},"metadata":2,"items":[{"ts":2,"v":2}],"a.b":2})"));
  EXPECT_EQ(Paths(result), (Strings{"body.items[].v", "body.metadata"}));
  EXPECT_TRUE(diff.IsIgnored("body.meta"));
  EXPECT_TRUE(diff.IsIgnored("body.meta.x"));
  EXPECT_TRUE(diff.IsIgnored("body.meta[]"));
  EXPECT_FALSE(diff.IsIgnored("body.metadata"));
  EXPECT_FALSE(diff.IsIgnored("body"));
}

TEST(JsonDiffTest, IgnoringStatusOrBody) {
  JsonDiff diff(JsonDiffOptions{{}, {"status", "body"}});
  EXPECT_TRUE(diff.Compare(Body("a", 200), Body("b", 404)).empty());
  EXPECT_TRUE(diff.Compare(Body("{\"a\":1}"), Body("{\"a\":2}")).empty());
}

TEST(JsonDiffTest, UnusualKeysAreQuoted) {
  JsonDiff diff;
  DiffResult result = diff.Compare(Body(R"({"a.b":1,"":1,"q\"\n":1,"ok_$@-1":1})"),
                                   Body(R"({"a.b":2,"":2,"q\"\n":2,"ok_$@-1":2})"));
  EXPECT_EQ(Paths(result),
            (Strings{"body[\"\"]", "body[\"a.b\"]", "body.ok_$@-1", "body[\"q\\\"\\u000a\"]"}));
}

TEST(JsonDiffTest, DuplicateKeysPairInOrder) {
  JsonDiff diff;
  EXPECT_TRUE(diff.Compare(Body(R"({"a":1,"a":2})"), Body(R"({"a":1,"a":2})")).empty());
  EXPECT_EQ(Paths(diff.Compare(Body(R"({"a":1,"a":2})"), Body(R"({"a":1})"))), Strings{"body.a"});
}

TEST(JsonDiffTest, NumbersCompareByValue) {
  JsonDiff diff;
  EXPECT_TRUE(diff.Compare(Body("[0, -0, 1.0, 18446744073709551615]"),
                           Body("[0.0, 0, 1, 18446744073709551615]"))
                  .empty());
  EXPECT_FALSE(diff.Compare(Body("[9007199254740993]"), Body("[9007199254740992]")).empty());
  EXPECT_FALSE(diff.Compare(Body("[-1]"), Body("[18446744073709551615]")).empty());
}

TEST(JsonDiffTest, NodeCapTruncates) {
  JsonDiffOptions options;
  options.max_nodes = 10;
  JsonDiff diff(options);
  std::string left = "[";
  std::string right = "[";
  for (int i = 0; i < 100; ++i) {
    left += (i ? "," : "") + std::to_string(i);
    right += (i ? "," : "") + std::to_string(i + 1);
  }
  DiffResult result = diff.Compare(Body(left + "]"), Body(right + "]"));
  EXPECT_TRUE(result.truncated);
  ASSERT_EQ(Paths(result), Strings{"body[]"});
  EXPECT_LT(result.differences[0].occurrences, 10u);
}

TEST(JsonDiffTest, DifferenceCapTruncates) {
  JsonDiffOptions options;
  options.max_differences = 3;
  JsonDiff diff(options);
  DiffResult result = diff.Compare(Body(R"({"a":1,"b":1,"c":1,"d":1,"e":1})"),
                                   Body(R"({"a":2,"b":2,"c":2,"d":2,"e":2})"));
  EXPECT_TRUE(result.truncated);
  EXPECT_EQ(Paths(result), (Strings{"body.a", "body.b", "body.c"}));
}

TEST(JsonDiffTest, TooDeepOrTooLargeBodiesCompareAsBytes) {
  JsonDiffOptions options;
  options.max_depth = 8;
  options.max_body_bytes = 64;
  JsonDiff diff(options);
  std::string deep_left = std::string(20, '[') + "1" + std::string(20, ']');
  std::string deep_right = std::string(20, '[') + "2" + std::string(20, ']');
  DiffResult result = diff.Compare(Body(deep_left), Body(deep_right));
  ASSERT_EQ(Paths(result), Strings{"body"});
  EXPECT_EQ(result.differences[0].kind, DifferenceKind::kValue);
  std::string shallow = std::string(4, '[') + "1" + std::string(4, ']');
  EXPECT_EQ(Paths(diff.Compare(Body(shallow), Body("[[[[2]]]]"))), Strings{"body[][][][]"});
  std::string big_left = "{\"a\":\"" + std::string(100, 'x') + "\"}";
  std::string big_right = "{\"a\":\"" + std::string(100, 'y') + "\"}";
  EXPECT_EQ(Paths(diff.Compare(Body(big_left), Body(big_right))), Strings{"body"});
}

TEST(JsonDiffTest, SymmetricPaths) {
  JsonDiff diff;
  const char* documents[] = {
      R"({"a":[1,2,{"b":null}],"c":"x","d":{"e":[true]}})",
      R"({"a":[1,2,{"b":0}],"c":"y","f":1})",
      R"({"a":[2,1,{"b":null}],"c":"x","d":{"e":[false,true]}})",
      R"([1,"2",[3]])",
      "not json",
  };
  for (const char* l : documents) {
    for (const char* r : documents) {
      DiffResult forward = diff.Compare(Body(l), Body(r));
      DiffResult backward = diff.Compare(Body(r), Body(l));
      auto a = Paths(forward);
      auto b = Paths(backward);
      EXPECT_EQ(std::set<std::string>(a.begin(), a.end()),
                std::set<std::string>(b.begin(), b.end()))
          << l << " vs " << r;
    }
  }
}

}  // namespace
}  // namespace hammer::dark

namespace hammer::dark {
namespace {

std::string Framed(std::string_view message) {
  std::string out(1, '\0');
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((message.size() >> shift) & 0xff));
  return out.append(message);
}

// Field 1 = "w", field 2 = {1: cents}: an item and its price.
std::string Item(char cents) {
  return std::string("\x0a\x01w\x12\x02\x08", 6) + cents;
}

TEST(JsonDiffTest, GrpcAnswersCompareTheirStatusThenTheirMessageFields) {
  JsonDiff diff;
  const http::Header ok[] = {{"content-type", "application/grpc"}, {"grpc-status", "0"}};
  const http::Header gone[] = {{"content-type", "application/grpc"}, {"grpc-status", "5"}};
  const std::string a = Framed(Item(100)), b = Framed(Item(90));
  ResponseView left{200, ok, a};
  EXPECT_TRUE(diff.Compare(left, ResponseView{200, ok, a}).empty());
  DiffResult price = diff.Compare(left, ResponseView{200, ok, b});
  ASSERT_EQ(Paths(price), Strings{"body.2.1"});
  EXPECT_EQ(price.differences[0].left, "100");
  EXPECT_EQ(price.differences[0].right, "90");
  DiffResult status = diff.Compare(left, ResponseView{200, gone, ""});
  ASSERT_EQ(Paths(status), Strings{"grpc-status"});
  EXPECT_EQ(status.differences[0].right, "5");
  // Two messages are an array; a body that is not whole messages is compared as bytes.
  const std::string two = a + a, two_changed = a + b;
  EXPECT_EQ(Paths(diff.Compare(ResponseView{200, ok, two}, ResponseView{200, ok, two_changed})),
            Strings{"body[].2.1"});
  EXPECT_EQ(Paths(diff.Compare(left, ResponseView{200, ok, a.substr(1)})), Strings{"body"});
  JsonDiffOptions options;
  options.ignore = {"body.2"};
  JsonDiff ignoring(options);
  EXPECT_TRUE(ignoring.Compare(left, ResponseView{200, ok, b}).empty());
}

TEST(JsonDiffTest, GrpcJsonMessagesAreComparedAsJson) {
  JsonDiff diff;
  const http::Header json[] = {{"content-type", "application/grpc+json"}, {"grpc-status", "0"}};
  const std::string a = Framed(R"({"name":"w","price":1})"),
                    b = Framed(R"({"name":"w","price":2})");
  EXPECT_EQ(Paths(diff.Compare(ResponseView{200, json, a}, ResponseView{200, json, b})),
            Strings{"body.price"});
}

}  // namespace
}  // namespace hammer::dark
