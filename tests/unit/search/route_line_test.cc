#include "hammer/search/route_line.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "hammer/search/murmur3.h"

namespace hammer::search {
namespace {

BulkDocument Doc(std::string_view action, std::string_view source, std::string_view id) {
  BulkDocument d;
  d.action = action;
  d.source = source;
  d.has_source = !source.empty();
  if (!id.empty()) d.id = id;
  return d;
}

TEST(RouteLineTest, KeyLayout) {
  EXPECT_EQ(RouteKey(0, 12345, 1), 0);
  EXPECT_EQ(RouteKey(5, 12345, 1), 5);
  EXPECT_EQ(RouteKey(2, 7, 4), 2 * 4 + 3);
  EXPECT_EQ(RouteKey(2, 0xFFFFFFFFu, 4), 2 * 4 + 3);  // slot from the unsigned hash
  EXPECT_EQ(ShardOfRouteKey(11, 4), 2);
  EXPECT_EQ(ShardOfRouteKey(8, 4), 2);
  EXPECT_EQ(ShardOfRouteKey(kUnroutableRouteKey, 4), -1);
  for (int32_t shard = 0; shard < 6; ++shard) {
    for (uint32_t hash : {0u, 1u, 2u, 3u, 0x9e3779b9u}) {
      EXPECT_EQ(ShardOfRouteKey(RouteKey(shard, hash, 3), 3), shard);
    }
  }
}

TEST(RouteLineTest, SlotHashIsMurmur3OfTheIdWithHammersSeed) {
  const BulkDocument doc = Doc("{}", "{}", "doc-1");
  const std::string_view id = "doc-1";
  EXPECT_EQ(SlotHash(doc),
            Murmur3X86_32({reinterpret_cast<const uint8_t*>(id.data()), id.size()}, 0x68616d72));
  BulkDocument routed = Doc("{}", "{}", "");
  routed.routing = "r";
  EXPECT_EQ(SlotHash(routed),
            Murmur3X86_32({reinterpret_cast<const uint8_t*>("r"), 1}, 0x68616d72));
}

TEST(RouteLineTest, SlotsSpreadEvenly) {
  std::vector<int> per_slot(4);
  std::vector<std::string> ids;
  for (int i = 0; i < 4000; ++i)
    ids.push_back("id-" + std::to_string(i));
  for (const std::string& id : ids)
    ++per_slot[SlotHash(Doc("{}", "{}", id)) % 4];
  for (int n : per_slot)
    EXPECT_NEAR(n, 1000, 120);
}

TEST(RouteLineTest, PairPayloadIsActionTabSource) {
  std::string out;
  AppendRouteLine(&out, 3, Doc(R"({"index":{"_id":"a"}})", "{\"t\":\"a\\tb\"}", "a"),
                  InputFormat::kActionPairs);
  EXPECT_EQ(out, "3\t{\"index\":{\"_id\":\"a\"}}\t{\"t\":\"a\\tb\"}\n");
}

TEST(RouteLineTest, RawTabsInTheActionBecomeSpaces) {
  std::string out;
  AppendRouteLine(&out, -1, Doc("{\"index\":\t{}}", "{\"x\":\t1}", ""), InputFormat::kActionPairs);
  EXPECT_EQ(out, "-1\t{\"index\": {}}\t{\"x\":\t1}\n");
}

TEST(RouteLineTest, DeleteHasNoSource) {
  std::string out;
  AppendRouteLine(&out, 0, Doc(R"({"delete":{"_id":"a"}})", "", "a"), InputFormat::kActionPairs);
  EXPECT_EQ(out, "0\t{\"delete\":{\"_id\":\"a\"}}\n");
}

TEST(RouteLineTest, DocumentPayloadIsTheLineAsRead) {
  BulkDocument d = Doc(R"({"index":{"_id":"a"}})", "{\"id\":\"a\",\t\"x\":1}", "a");
  d.document_line = d.source;
  std::string out;
  AppendRouteLine(&out, 1, d, InputFormat::kDocuments);
  EXPECT_EQ(out, "1\t{\"id\":\"a\",\t\"x\":1}\n");
}

// hammer route → hammer bulk --from-route gives back the same documents, byte for byte.
class Collect : public BulkInputParser::Sink {
 public:
  void OnDocument(const BulkDocument& d) override {
    docs.push_back(std::string(d.action) + "|" + std::string(d.source) + "|" +
                   std::string(d.id.value_or("-")) + "|" +
                   std::to_string(d.route_key.value_or(-9)));
  }
  void OnRejected(InputRejection r) override { docs.push_back("rejected: " + r.reason); }
  std::vector<std::string> docs;
};

TEST(RouteLineTest, RoundTripThroughTheParser) {
  const std::vector<std::string> input = {
      "{\"index\":{\"_id\":\"\xf0\x9f\x98\x80\"}}", "{\"a\":\"\\t\",\t\"b\":2}",
      "{\"delete\":{\"_id\":\"x\"}}", "{\"create\":\t{}}", "{}"};
  BulkInputParser first({});
  Collect originals;
  std::string routed;
  class Router : public BulkInputParser::Sink {
   public:
    Router(std::string* out, Collect* originals) : out_(out), originals_(originals) {}
    void OnDocument(const BulkDocument& d) override {
      originals_->OnDocument(d);
      AppendRouteLine(out_, 7, d, InputFormat::kActionPairs);
    }
    void OnRejected(InputRejection) override { FAIL(); }
    std::string* out_;
    Collect* originals_;
  } router(&routed, &originals);
  uint64_t n = 0;
  for (const std::string& line : input)
    first.Feed(line, ++n, &router);
  first.Finish(&router);

  InputOptions from_route;
  from_route.from_route = true;
  BulkInputParser second(from_route);
  Collect again;
  size_t start = 0;
  while (start < routed.size()) {
    const size_t end = routed.find('\n', start);
    second.Feed(std::string_view(routed).substr(start, end - start), ++n, &again);
    start = end + 1;
  }
  ASSERT_EQ(again.docs.size(), 3u);
  // Same source bytes, same ids; only the action's raw TAB became a space.
  auto with_key = [](const std::string& doc) { return doc.substr(0, doc.rfind('|')) + "|7"; };
  EXPECT_EQ(again.docs[0], with_key(originals.docs[0]));
  EXPECT_EQ(again.docs[1], with_key(originals.docs[1]));
  EXPECT_EQ(again.docs[2], "{\"create\": {}}|{}|-|7");
}

}  // namespace
}  // namespace hammer::search
