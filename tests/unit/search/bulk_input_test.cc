#include "hammer/search/bulk_input.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "hammer/search/position_id.h"

namespace hammer::search {
namespace {

// What the sink saw, owned.
struct Seen {
  std::string kind;  // "doc" or "rejected"
  BulkOp op = BulkOp::kIndex;
  std::string action, source;
  bool has_source = false;
  std::optional<std::string> id, routing, index;
  bool id_unusable = false;
  std::optional<int64_t> key;
  std::string reason;
  uint64_t line = 0;
};

class Collect : public BulkInputParser::Sink {
 public:
  void OnDocument(const BulkDocument& d) override {
    Seen s;
    s.kind = "doc";
    s.op = d.op;
    s.action = std::string(d.action);
    s.source = std::string(d.source);
    s.has_source = d.has_source;
    if (d.id) s.id = std::string(*d.id);
    if (d.routing) s.routing = std::string(*d.routing);
    if (d.index) s.index = std::string(*d.index);
    s.id_unusable = d.id_unusable;
    s.key = d.route_key;
    s.line = d.line;
    seen.push_back(s);
  }
  void OnRejected(InputRejection r) override {
    Seen s;
    s.kind = "rejected";
    s.action = r.action;
    s.source = r.source;
    s.reason = r.reason;
    s.line = r.line;
    seen.push_back(s);
  }
  std::vector<Seen> seen;
};

std::vector<Seen> Parse(const InputOptions& options, const std::vector<std::string>& lines) {
  BulkInputParser parser(options);
  Collect sink;
  uint64_t n = 0;
  for (const std::string& line : lines)
    parser.Feed(line, ++n, &sink);
  parser.Finish(&sink);
  return sink.seen;
}

TEST(BulkInputTest, ActionSourcePairsAndDelete) {
  auto seen =
      Parse({}, {R"({"index":{"_id":"a\u00e9","routing":"r1"}})", R"({"n":1})",
                 R"({"delete":{"_id":"d","_index":"other"}})", "", R"({"create":{"_id":42}})",
                 R"({"n":2})", R"({"update":{"_id":"u"}})", R"({"doc":{"n":3}})"});
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].kind, "doc");
  EXPECT_EQ(seen[0].op, BulkOp::kIndex);
  EXPECT_EQ(seen[0].id, "a\xc3\xa9");  // JSON escapes resolved: the server hashes the string
  EXPECT_EQ(seen[0].routing, "r1");
  EXPECT_EQ(seen[0].source, R"({"n":1})");
  EXPECT_EQ(seen[0].line, 1u);
  EXPECT_EQ(seen[1].op, BulkOp::kDelete);
  EXPECT_FALSE(seen[1].has_source);
  EXPECT_EQ(seen[1].index, "other");
  EXPECT_EQ(seen[1].line, 3u);
  EXPECT_EQ(seen[2].op, BulkOp::kCreate);
  EXPECT_EQ(seen[2].id, "42");  // an integer id is its decimal text, as Jackson's text()
  EXPECT_EQ(seen[2].line, 5u);
  EXPECT_EQ(seen[3].op, BulkOp::kUpdate);
  EXPECT_EQ(seen[3].source, R"({"doc":{"n":3}})");
}

TEST(BulkInputTest, IdThatIsNotStringOrIntegerIsFlagged) {
  auto seen = Parse({}, {R"({"index":{"_id":1.5}})", "{}", R"({"index":{"_id":null}})", "{}"});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[0].id_unusable);
  EXPECT_FALSE(seen[0].id.has_value());
  EXPECT_FALSE(seen[1].id_unusable);
  EXPECT_FALSE(seen[1].id.has_value());
}

TEST(BulkInputTest, InvalidActionTakesTheNextLineAsItsSource) {
  auto seen = Parse(
      {}, {R"({"index":{"_id":"1"})", R"({"n":1})", R"({"index":{"_id":"2"}})", R"({"n":2})"});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].kind, "rejected");
  EXPECT_EQ(seen[0].source, R"({"n":1})");
  EXPECT_NE(seen[0].reason.find("invalid JSON"), std::string::npos) << seen[0].reason;
  EXPECT_EQ(seen[1].kind, "doc");
  EXPECT_EQ(seen[1].id, "2");
}

TEST(BulkInputTest, InvalidActionFollowedByAnActionIsRejectedAlone) {
  auto seen = Parse({}, {"garbage", R"({"delete":{"_id":"x"}})", R"({"index":{}})", "{}"});
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].kind, "rejected");
  EXPECT_EQ(seen[0].action, "garbage");
  EXPECT_EQ(seen[0].source, "");
  EXPECT_EQ(seen[1].kind, "doc");
  EXPECT_EQ(seen[1].op, BulkOp::kDelete);
  EXPECT_EQ(seen[2].kind, "doc");
  EXPECT_FALSE(seen[2].id.has_value());
}

TEST(BulkInputTest, UnknownOperationAndExtraKeysAreNotActions) {
  auto seen = Parse({}, {R"({"upsert":{}})", "{}", R"({"index":{},"x":1})", "{}"});
  ASSERT_EQ(seen.size(), 2u);
  for (const Seen& s : seen) {
    EXPECT_EQ(s.kind, "rejected");
    EXPECT_NE(s.reason.find("not a bulk action line"), std::string::npos);
  }
}

TEST(BulkInputTest, InvalidSourceRejectsThePair) {
  auto seen =
      Parse({}, {R"({"index":{"_id":"1"}})", R"({"n":)", R"({"index":{"_id":"2"}})", "[1,2]"});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].kind, "rejected");
  EXPECT_EQ(seen[0].action, R"({"index":{"_id":"1"}})");
  EXPECT_EQ(seen[0].source, R"({"n":)");
  EXPECT_NE(seen[0].reason.find("invalid JSON in source"), std::string::npos);
  EXPECT_EQ(seen[1].reason, "source is not a JSON object");
}

TEST(BulkInputTest, ActionWithoutSourceAtTheEnd) {
  auto seen = Parse({}, {R"({"index":{"_id":"1"}})"});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].kind, "rejected");
  EXPECT_EQ(seen[0].reason, "action line without its source line at the end of input");
}

TEST(BulkInputTest, DocumentsPerLineWithIdField) {
  InputOptions options;
  options.format = InputFormat::kDocuments;
  options.id_field = "user.id";
  options.routing_field = "tenant";
  auto seen = Parse(options, {R"({"user":{"id":"u\"1"},"tenant":"t"})", R"({"user":{"id":7}})",
                              R"({"user":{}})", R"({"user":{"id":1.5}})", "not json", "[1]",
                              R"({"user":{"id":"x"},"tenant":{"a":1}})"});
  ASSERT_EQ(seen.size(), 7u);
  EXPECT_EQ(seen[0].kind, "doc");
  EXPECT_EQ(seen[0].action, R"({"index":{"_id":"u\"1","routing":"t"}})");
  EXPECT_EQ(seen[0].id, "u\"1");
  EXPECT_EQ(seen[0].routing, "t");
  EXPECT_EQ(seen[0].source, R"({"user":{"id":"u\"1"},"tenant":"t"})");
  EXPECT_EQ(seen[1].action, R"({"index":{"_id":"7"}})");
  EXPECT_EQ(seen[2].reason, "missing id field \"user.id\"");
  EXPECT_EQ(seen[3].reason, "id field \"user.id\" is not a non-empty string or integer");
  EXPECT_NE(seen[4].reason.find("invalid JSON"), std::string::npos);
  EXPECT_EQ(seen[5].reason, "document is not a JSON object");
  EXPECT_EQ(seen[6].reason, "routing field \"tenant\" is not a string or integer");
}

TEST(BulkInputTest, CreateOpForDocuments) {
  InputOptions options;
  options.format = InputFormat::kDocuments;
  options.id_field = "id";
  options.document_op = BulkOp::kCreate;
  auto seen = Parse(options, {R"({"id":"a"})"});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].op, BulkOp::kCreate);
  EXPECT_EQ(seen[0].action, R"({"create":{"_id":"a"}})");
}

TEST(BulkInputTest, RouteLines) {
  InputOptions options;
  options.from_route = true;
  auto seen = Parse(options, {"3\t{\"index\":{\"_id\":\"a\"}}\t{\"t\":\t\"x\\ty\"}",
                              "-1\t{\"delete\":{\"_id\":\"b\"}}", "x\t{}", "-2\t{}\t{}",
                              "4\t{\"index\":{}}", "5\t{\"delete\":{}}\t{}"});
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[0].kind, "doc");
  EXPECT_EQ(seen[0].key, 3);
  EXPECT_EQ(seen[0].source, "{\"t\":\t\"x\\ty\"}");  // the source keeps its TABs
  EXPECT_EQ(seen[1].key, -1);
  EXPECT_EQ(seen[1].op, BulkOp::kDelete);
  EXPECT_FALSE(seen[1].has_source);
  EXPECT_EQ(seen[2].kind, "rejected");
  EXPECT_EQ(seen[3].kind, "rejected");
  EXPECT_EQ(seen[4].reason, "action without its source");
  EXPECT_EQ(seen[5].reason, "delete action followed by a source");
}

TEST(BulkInputTest, RouteLinesWithDocuments) {
  InputOptions options;
  options.from_route = true;
  options.format = InputFormat::kDocuments;
  options.id_field = "id";
  auto seen = Parse(options, {"0\t{\"id\":\"a\",\"t\":\"\\t\"}"});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].id, "a");
  EXPECT_EQ(seen[0].key, 0);
}

TEST(BulkInputTest, BlankLinesAreSkippedAndLineNumbersKept) {
  auto seen = Parse({}, {"", "  ", R"({"index":{"_id":"1"}})", "\r", "{}"});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].line, 3u);
}

TEST(BulkInputTest, IdFromPositionForActionsWithoutId) {
  InputOptions options;
  options.position_source = "part-00003.ndjson";
  auto seen = Parse(
      options, {R"({"index":{}})", R"({"n":1})", R"({ "create" : { "routing":"r" }})", R"({"n":2})",
                R"({"index":{"_id":"kept"}})", R"({"n":3})", "", R"({"update":{}})",
                R"({"doc":{}})", R"({"delete":{}})", R"({"index":{"_id":1.5}})", "{}"});
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[0].id, "part-00003.ndjson:1");
  EXPECT_EQ(seen[0].action, R"({"index":{"_id":"part-00003.ndjson:1"}})");
  EXPECT_EQ(seen[0].source, R"({"n":1})");
  EXPECT_EQ(seen[1].id, "part-00003.ndjson:3");
  EXPECT_EQ(seen[1].action, R"({ "create" : {"_id":"part-00003.ndjson:3", "routing":"r" }})");
  EXPECT_EQ(seen[1].routing, "r");
  // A document with an _id keeps it; update and delete, which need the document's real id,
  // and an unusable _id are left as they are.
  EXPECT_EQ(seen[2].id, "kept");
  EXPECT_EQ(seen[2].action, R"({"index":{"_id":"kept"}})");
  EXPECT_EQ(seen[3].op, BulkOp::kUpdate);
  EXPECT_EQ(seen[3].id, std::nullopt);
  EXPECT_EQ(seen[4].op, BulkOp::kDelete);
  EXPECT_EQ(seen[4].id, std::nullopt);
  EXPECT_TRUE(seen[5].id_unusable);
  EXPECT_EQ(seen[5].action, R"({"index":{"_id":1.5}})");
}

TEST(BulkInputTest, IdFromPositionIsTheSameInEveryRunAndDiffersAcrossSources) {
  InputOptions first;
  first.position_source = "hdfs://nn/docs.jsonl:0";
  InputOptions second_split = first;
  second_split.position_source = "hdfs://nn/docs.jsonl:134217728";
  const std::vector<std::string> input = {R"({"index":{}})", "{}", R"({"index":{}})", "{}"};
  auto run1 = Parse(first, input);
  auto run2 = Parse(first, input);
  auto other = Parse(second_split, input);
  ASSERT_EQ(run1.size(), 2u);
  ASSERT_EQ(other.size(), 2u);
  for (size_t i = 0; i < run1.size(); ++i) {
    EXPECT_EQ(run1[i].id, run2[i].id);
    EXPECT_EQ(run1[i].action, run2[i].action);
    EXPECT_NE(run1[i].id, other[i].id);
  }
  EXPECT_EQ(run1[1].id, "hdfs://nn/docs.jsonl:0:3");
  EXPECT_EQ(other[1].id, "hdfs://nn/docs.jsonl:134217728:3");
}

TEST(BulkInputTest, IdFromPositionForDocumentsWithoutTheIdField) {
  InputOptions options;
  options.format = InputFormat::kDocuments;
  options.id_field = "id";
  options.position_source = "docs.jsonl";
  auto seen = Parse(options, {R"({"id":"a"})", R"({"n":2})", R"({"id":null})", R"({"id":[1]})"});
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].action, R"({"index":{"_id":"a"}})");
  EXPECT_EQ(seen[1].kind, "doc");
  EXPECT_EQ(seen[1].id, "docs.jsonl:2");
  EXPECT_EQ(seen[1].action, R"({"index":{"_id":"docs.jsonl:2"}})");
  EXPECT_EQ(seen[1].source, R"({"n":2})");
  EXPECT_EQ(seen[2].id, "docs.jsonl:3");  // null is no id
  // An id field that holds something else is a data error, not a missing id.
  EXPECT_EQ(seen[3].reason, "id field \"id\" is not a non-empty string or integer");
}

TEST(BulkInputTest, IdFromPositionNeverExceedsTheIdLimit) {
  InputOptions options;
  options.position_source = std::string(kMaxIdBytes - 2, 's');  // "s…s:1" to "s…s:9": 512 bytes
  std::vector<std::string> input;
  for (int i = 0; i < 5; ++i) {
    input.push_back(R"({"index":{}})");
    input.push_back("{}");
  }
  auto seen = Parse(options, input);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[4].kind, "doc");
  EXPECT_EQ(seen[4].id->size(), kMaxIdBytes);
  EXPECT_EQ(seen[4].line, 9u);
  InputOptions longer = options;
  longer.position_source->push_back('s');
  auto rejected = Parse(longer, {R"({"index":{}})", "{}"});
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].kind, "rejected");
  EXPECT_EQ(rejected[0].source, "{}");
  EXPECT_NE(rejected[0].reason.find("longer than 512 bytes"), std::string::npos);
}

}  // namespace
}  // namespace hammer::search
