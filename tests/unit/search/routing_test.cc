#include "hammer/search/routing.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "hammer/search/murmur3.h"
#include "hammer/search/utf16.h"

#ifndef HAMMER_SOURCE_DIR
#error "HAMMER_SOURCE_DIR (the repository root) must be defined"
#endif

namespace hammer::search {
namespace {

constexpr int32_t kEs8Legacy = 8'10'04'99;                       // ES 8.10.4: routing_num_shards
constexpr int32_t kEsModulo = kElasticsearchModRoutingFunction;  // first modulo index version
constexpr int32_t kOpenSearch219 = 2'19'00'99 ^ kOpenSearchVersionMask;

// ---- the vector file ------------------------------------------------------------------------

struct VectorRow {
  int line = 0;
  std::string kind;  // "hash" or "shard"
  std::string input;
  std::string id;
  int32_t num_shards = 0;
  int32_t routing_num_shards = 0;
  int32_t partition_size = 0;
  int32_t expected = 0;
  std::string source;

  bool FromModRoutingFunction() const {
    return source.find("MOD_ROUTING_FUNCTION") != std::string::npos;
  }
};

int32_t ParseInt(const std::string& field) {
  int32_t value = 0;
  if (field.empty()) return 0;
  auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  EXPECT_TRUE(error == std::errc() && end == field.data() + field.size()) << "bad int " << field;
  return value;
}

std::vector<VectorRow> LoadVectors() {
  const std::string path = HAMMER_SOURCE_DIR "/tests/unit/search/testdata/es_routing_vectors.tsv";
  std::ifstream in(path);
  EXPECT_TRUE(in.is_open()) << path;
  std::vector<VectorRow> rows;
  std::string text;
  bool header_seen = false;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.empty() || text[0] == '#') continue;
    if (!header_seen) {
      EXPECT_EQ(text.rfind("kind\tinput\tid\t", 0), 0u) << "unexpected header: " << text;
      header_seen = true;
      continue;
    }
    std::vector<std::string> fields;
    size_t start = 0;
    for (size_t tab; (tab = text.find('\t', start)) != std::string::npos; start = tab + 1) {
      fields.push_back(text.substr(start, tab - start));
    }
    fields.push_back(text.substr(start));
    EXPECT_EQ(fields.size(), 8u) << "line " << line;
    if (fields.size() != 8) continue;
    VectorRow row;
    row.line = line;
    row.kind = fields[0];
    row.input = fields[1];
    row.id = fields[2];
    row.num_shards = ParseInt(fields[3]);
    row.routing_num_shards = ParseInt(fields[4]);
    row.partition_size = ParseInt(fields[5]);
    row.expected = ParseInt(fields[6]);
    row.source = fields[7];
    rows.push_back(row);
  }
  return rows;
}

const std::vector<VectorRow>& Vectors() {
  static const std::vector<VectorRow> rows = LoadVectors();
  return rows;
}

std::optional<std::string_view> Optional(const std::string& field) {
  if (field.empty()) return std::nullopt;
  return field;
}

ShardRouter MakeRouter(SearchDistribution distribution, int32_t version_created, int32_t shards,
                       std::optional<int32_t> routing_num_shards, int32_t partition_size = 1) {
  IndexRoutingSpec spec;
  spec.distribution = distribution;
  spec.version_created = version_created;
  spec.number_of_shards = shards;
  spec.routing_num_shards = routing_num_shards;
  spec.routing_partition_size = partition_size;
  Result<ShardRouter> router = ShardRouter::Create(spec);
  EXPECT_TRUE(router.ok()) << router.status().message();
  return *std::move(router);
}

int32_t ShardOf(const ShardRouter& router, std::optional<std::string_view> id,
                std::optional<std::string_view> routing) {
  Result<ShardRoute> route = router.Route(id, routing);
  EXPECT_TRUE(route.ok()) << route.status().message();
  if (!route.ok()) return -1;
  EXPECT_TRUE(route->routable());
  return route->routable() ? route->shard() : -1;
}

// ---- every row of the vector file -----------------------------------------------------------

TEST(RoutingVectorsTest, FileHasEveryRow) {
  int hash_rows = 0;
  int shard_rows = 0;
  for (const VectorRow& row : Vectors()) {
    if (row.kind == "hash") ++hash_rows;
    if (row.kind == "shard") ++shard_rows;
  }
  // es-routing.md §5: 16 hash rows; 99 + 16 + 24 + 24 + 2 + 7 shard rows.
  EXPECT_EQ(hash_rows, 16);
  EXPECT_EQ(shard_rows, 172);
  EXPECT_EQ(Vectors().size(), 188u);
}

TEST(RoutingVectorsTest, HashRows) {
  int checked = 0;
  for (const VectorRow& row : Vectors()) {
    if (row.kind != "hash") continue;
    SCOPED_TRACE(testing::Message() << "line " << row.line << " \"" << row.input << "\"");
    Result<int32_t> hash = HashRoutingValue(row.input);
    ASSERT_TRUE(hash.ok()) << hash.status().message();
    EXPECT_EQ(*hash, row.expected);

    // The streaming hash equals murmur3 over an explicit UTF-16LE byte buffer.
    Result<std::u16string> utf16 = Utf8ToUtf16(row.input);
    ASSERT_TRUE(utf16.ok());
    std::vector<uint8_t> bytes;
    for (char16_t unit : *utf16) {
      bytes.push_back(static_cast<uint8_t>(unit & 0xFF));
      bytes.push_back(static_cast<uint8_t>(unit >> 8));
    }
    EXPECT_EQ(static_cast<int32_t>(Murmur3X86_32(bytes, 0)), row.expected);
    ++checked;
  }
  EXPECT_EQ(checked, 16);
}

TEST(RoutingVectorsTest, ShardRowsOnElasticsearchAndOpenSearch) {
  int checked = 0;
  for (const VectorRow& row : Vectors()) {
    if (row.kind != "shard") continue;
    SCOPED_TRACE(testing::Message() << "line " << row.line << " routing \"" << row.input
                                    << "\" id \"" << row.id << "\" " << row.num_shards << "/"
                                    << row.routing_num_shards << "/" << row.partition_size);
    // As encoded (routing_num_shards formula), on both engines.
    for (auto [distribution, version] :
         {std::pair{SearchDistribution::kElasticsearch, kEs8Legacy},
          std::pair{SearchDistribution::kOpenSearch, kOpenSearch219}}) {
      const ShardRouter router = MakeRouter(distribution, version, row.num_shards,
                                            row.routing_num_shards, row.partition_size);
      EXPECT_EQ(ShardOf(router, Optional(row.id), Optional(row.input)), row.expected);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 172);
}

TEST(RoutingVectorsTest, ModRoutingRowsThroughVersionGate) {
  // The MOD_ROUTING_FUNCTION rows again, now with a 9_064_0_00 index and a routing_num_shards
  // unlike num_shards (the upstream shrunk test sets 8 for 4 shards): modulo must ignore it.
  int checked = 0;
  for (const VectorRow& row : Vectors()) {
    if (row.kind != "shard" || !row.FromModRoutingFunction()) continue;
    SCOPED_TRACE(testing::Message() << "line " << row.line);
    const ShardRouter router = MakeRouter(SearchDistribution::kElasticsearch, kEsModulo,
                                          row.num_shards, row.num_shards * 2, row.partition_size);
    EXPECT_EQ(router.function(), RoutingFunction::kModuloNumberOfShards);
    EXPECT_EQ(ShardOf(router, Optional(row.id), Optional(row.input)), row.expected);
    ++checked;
  }
  EXPECT_EQ(checked, 25);  // 24 testPartitionedIndexShrunk + 1 testSimpleRouting...ModRoutingChange
}

TEST(RoutingVectorsTest, UnpartitionedKeyAsRoutingOrAsId) {
  // testBWC uses each key either as _id or as routing with a random _id; both give the shard.
  int checked = 0;
  for (const VectorRow& row : Vectors()) {
    if (row.kind != "shard" || !row.input.empty() || row.partition_size != 1) continue;
    const ShardRouter router = MakeRouter(SearchDistribution::kElasticsearch, kEs8Legacy,
                                          row.num_shards, row.routing_num_shards);
    EXPECT_EQ(ShardOf(router, "some-other-id", row.id), row.expected) << "line " << row.line;
    EXPECT_EQ(ShardOf(router, std::nullopt, row.id), row.expected) << "line " << row.line;
    ++checked;
  }
  EXPECT_GE(checked, 99);
}

// ---- the formula's pieces -------------------------------------------------------------------

TEST(FloorModTest, MatchesJavaMathFloorMod) {
  EXPECT_EQ(FloorMod(-675079799, 640), 521);                  // "hello", es-routing.md §2
  EXPECT_EQ(static_cast<uint32_t>(-675079799) % 640u, 137u);  // the unsigned-remainder mistake
  EXPECT_EQ(FloorMod(-1, 5), 4);
  EXPECT_EQ(FloorMod(0, 7), 0);
  EXPECT_EQ(FloorMod(INT32_MIN, 640), 512);
  EXPECT_EQ(FloorMod(INT32_MIN, 1), 0);
  EXPECT_EQ(FloorMod(INT32_MAX, 640), 127);
  for (int64_t value :
       {int64_t{INT32_MIN}, int64_t{INT32_MIN} + 1, int64_t{-1000001}, int64_t{-7}, int64_t{-1},
        int64_t{0}, int64_t{1}, int64_t{123456789}, int64_t{INT32_MAX}}) {
    for (int64_t modulus : {1, 2, 3, 5, 6, 576, 640, 768, 960, 1024, 2048, INT32_MAX}) {
      const int64_t expected = ((value % modulus) + modulus) % modulus;
      EXPECT_EQ(FloorMod(static_cast<int32_t>(value), static_cast<int32_t>(modulus)), expected)
          << value << " mod " << modulus;
    }
  }
}

TEST(HashRoutingValueTest, NonAsciiIsHashedAsUtf16LittleEndian) {
  // U+1F642 is the surrogate pair D83D DE42, i.e. bytes 3D D8 42 DE.
  const uint8_t emoji_utf16le[] = {0x3D, 0xD8, 0x42, 0xDE};
  EXPECT_EQ(*HashRoutingValue("🙂"), static_cast<int32_t>(Murmur3X86_32(emoji_utf16le, 0)));
  // "é" is U+00E9: one code unit, bytes E9 00 (the UTF-8 bytes are C3 A9).
  const uint8_t e_acute_utf16le[] = {0xE9, 0x00};
  EXPECT_EQ(*HashRoutingValue("é"), static_cast<int32_t>(Murmur3X86_32(e_acute_utf16le, 0)));
  // "日" is U+65E5: bytes E5 65.
  const uint8_t nichi_utf16le[] = {0xE5, 0x65};
  EXPECT_EQ(*HashRoutingValue("日"), static_cast<int32_t>(Murmur3X86_32(nichi_utf16le, 0)));
}

TEST(HashRoutingValueTest, WideningUtf8BytesIsWrongBeyondAscii) {
  // The pitfall noted in es-routing.md §1: widening each UTF-8 byte to two bytes only works for
  // ASCII. The Greek vector (Murmur3HashFunctionTests parameters, -1913814338) shows it.
  const auto widened_hash = [](std::string_view utf8) {
    std::vector<uint8_t> bytes;
    for (char c : utf8) {
      bytes.push_back(static_cast<uint8_t>(c));
      bytes.push_back(0);
    }
    return static_cast<int32_t>(Murmur3X86_32(bytes, 0));
  };
  EXPECT_EQ(widened_hash("hello"), *HashRoutingValue("hello"));
  EXPECT_EQ(*HashRoutingValue("Γειά σου Κόσμε"), -1913814338);
  EXPECT_NE(widened_hash("Γειά σου Κόσμε"), -1913814338);
  // Hashing the UTF-8 bytes themselves is wrong even for ASCII.
  const std::string_view hello = "hello";
  EXPECT_NE(static_cast<int32_t>(
                Murmur3X86_32({reinterpret_cast<const uint8_t*>(hello.data()), hello.size()}, 0)),
            -675079799);
}

TEST(HashRoutingValueTest, InvalidUtf8IsAnError) {
  EXPECT_FALSE(HashRoutingValue("\xC3").ok());
  EXPECT_FALSE(HashRoutingValue("abc\xED\xA0\x80").ok());  // encoded surrogate
  EXPECT_FALSE(HashRoutingValue("\xC0\xAF").ok());         // overlong '/'
  EXPECT_EQ(HashRoutingValue("x\xFF").status().message(),
            "invalid UTF-8 at byte offset 1 (byte 0xFF)");
}

// ---- ShardRouter ----------------------------------------------------------------------------

TEST(ShardRouterTest, DefaultRoutingNumShardsWhenNotGiven) {
  const ShardRouter router =
      MakeRouter(SearchDistribution::kElasticsearch, 7'17'00'99, 5, std::nullopt);
  EXPECT_EQ(router.function(), RoutingFunction::kRoutingNumShards);
  EXPECT_EQ(router.routing_num_shards(), 640);
  EXPECT_EQ(router.routing_factor(), 128);
  // opensearch-go TestForRouting: "hello" → 4 with 5 shards / 640, "hell" → 1.
  EXPECT_EQ(ShardOf(router, std::nullopt, "hello"), 4);
  EXPECT_EQ(ShardOf(router, std::nullopt, "hell"), 1);

  const ShardRouter pre_seven =
      MakeRouter(SearchDistribution::kElasticsearch, 6'08'23'99, 5, std::nullopt);
  EXPECT_EQ(pre_seven.routing_num_shards(), 5);
  EXPECT_EQ(ShardOf(pre_seven, std::nullopt, "hello"), 1);  // TestForRouting 5/5
}

TEST(ShardRouterTest, DerivedExamplesWithDefaultRoutingNumShards) {
  // es-routing.md §3, derived (not upstream test rows): shard with the default routing_num_shards.
  const std::pair<int32_t, int32_t> id_one[] = {{2, 0}, {3, 2}, {5, 4}, {6, 4}, {10, 8}, {12, 8}};
  for (auto [shards, expected] : id_one) {
    const ShardRouter router =
        MakeRouter(SearchDistribution::kOpenSearch, kOpenSearch219, shards, std::nullopt);
    EXPECT_EQ(ShardOf(router, "1", std::nullopt), expected) << "_id 1, " << shards << " shards";
  }
  const std::pair<int32_t, int32_t> hello[] = {{3, 2}, {5, 4}, {6, 5}, {10, 8}, {12, 10}};
  for (auto [shards, expected] : hello) {
    const ShardRouter router =
        MakeRouter(SearchDistribution::kElasticsearch, kEs8Legacy, shards, std::nullopt);
    EXPECT_EQ(ShardOf(router, "hello", std::nullopt), expected) << "hello, " << shards;
  }
}

TEST(ShardRouterTest, VersionGatePicksTheFormula) {
  // IndexRoutingTests.testSimpleRoutingPreAndPostModRoutingChange: _id "1", 2 shards.
  const ShardRouter before = MakeRouter(SearchDistribution::kElasticsearch, 9'062'0'00, 2, 1024);
  EXPECT_EQ(ShardOf(before, "1", std::nullopt), 0);
  const ShardRouter after = MakeRouter(SearchDistribution::kElasticsearch, kEsModulo, 2, 1024);
  EXPECT_EQ(after.function(), RoutingFunction::kModuloNumberOfShards);
  EXPECT_EQ(after.routing_num_shards(), 2);
  EXPECT_EQ(ShardOf(after, "1", std::nullopt), 1);
  // Modulo needs no routing_num_shards at all.
  const ShardRouter no_rns =
      MakeRouter(SearchDistribution::kElasticsearch, kEsModulo, 2, std::nullopt);
  EXPECT_EQ(ShardOf(no_rns, "1", std::nullopt), 1);
}

TEST(ShardRouterTest, PartitionOffsetAddsWithInt32Wraparound) {
  // "wrap-12397485" hashes to 2147483586 (INT32_MAX - 61), found by a search over "wrap-N";
  // floorMod(hash("doc-1"), 1000) = 562, so the sum wraps as Java int addition does.
  const int32_t routing_hash = *HashRoutingValue("wrap-12397485");
  ASSERT_EQ(routing_hash, 2147483586);
  const int32_t offset = FloorMod(*HashRoutingValue("doc-1"), 1000);
  ASSERT_EQ(offset, 562);
  const int64_t wrapped = int64_t{routing_hash} + offset - (int64_t{1} << 32);
  ASSERT_EQ(wrapped, -2147483148);

  const ShardRouter router =
      MakeRouter(SearchDistribution::kElasticsearch, kEs8Legacy, 1024, std::nullopt, 1000);
  ASSERT_EQ(router.routing_num_shards(), 2048);
  const int64_t expected = (((wrapped % 2048) + 2048) % 2048) / 2;
  EXPECT_EQ(ShardOf(router, "doc-1", "wrap-12397485"), expected);
  EXPECT_EQ(router.ShardForHash(static_cast<int32_t>(wrapped)), expected);
}

TEST(ShardRouterTest, PartitionedShardsStayWithinThePartition) {
  // With p = 3 every _id of one routing value lands on one of at most 3 consecutive hash slots.
  const ShardRouter router =
      MakeRouter(SearchDistribution::kOpenSearch, kOpenSearch219, 12, std::nullopt, 3);
  const int32_t base = *HashRoutingValue("tenant-42");
  std::set<int32_t> allowed;
  for (int32_t offset = 0; offset < 3; ++offset) {
    allowed.insert(router.ShardForHash(static_cast<int32_t>(static_cast<uint32_t>(base) + offset)));
  }
  for (int i = 0; i < 200; ++i) {
    const std::string id = "doc-" + std::to_string(i);
    EXPECT_TRUE(allowed.count(ShardOf(router, id, "tenant-42"))) << id;
  }
}

TEST(ShardRouterTest, UnroutableDocuments) {
  const ShardRouter plain = MakeRouter(SearchDistribution::kElasticsearch, kEs8Legacy, 5, 640);
  EXPECT_EQ(*plain.Route(std::nullopt, std::nullopt),
            ShardRoute::Unroutable(UnroutableReason::kIdAssignedByServer));
  EXPECT_EQ(*plain.Route(std::nullopt, ""),
            ShardRoute::Unroutable(UnroutableReason::kIdAssignedByServer));
  // Routing alone is enough on an unpartitioned index, even without _id.
  EXPECT_EQ(*plain.Route(std::nullopt, "hello"), ShardRoute::ToShard(4));

  const ShardRouter partitioned =
      MakeRouter(SearchDistribution::kElasticsearch, kEs8Legacy, 6, 6, 2);
  EXPECT_EQ(*partitioned.Route("a_0", std::nullopt),
            ShardRoute::Unroutable(UnroutableReason::kRoutingRequired));
  EXPECT_EQ(*partitioned.Route(std::nullopt, std::nullopt),
            ShardRoute::Unroutable(UnroutableReason::kRoutingRequired));
  EXPECT_EQ(*partitioned.Route(std::nullopt, "a"),
            ShardRoute::Unroutable(UnroutableReason::kIdAssignedByServer));
  EXPECT_EQ(*partitioned.Route("a_0", "a"), ShardRoute::ToShard(3));  // testPartitionedIndexBWC

  IndexRoutingSpec time_series;
  time_series.version_created = kEs8Legacy;
  time_series.number_of_shards = 4;
  time_series.has_routing_path = true;
  const ShardRouter tsdb = *ShardRouter::Create(time_series);
  for (auto [id, routing] :
       {std::pair<std::optional<std::string_view>, std::optional<std::string_view>>{"1",
                                                                                    std::nullopt},
        {std::nullopt, "r"},
        {"1", "r"},
        {std::nullopt, std::nullopt}}) {
    Result<ShardRoute> route = tsdb.Route(id, routing);
    ASSERT_TRUE(route.ok());
    EXPECT_FALSE(route->routable());
    EXPECT_EQ(route->unroutable_reason(), UnroutableReason::kRoutingFromSource);
  }
  EXPECT_EQ(UnroutableReasonName(UnroutableReason::kRoutingFromSource), "routing_from_source");
  EXPECT_EQ(UnroutableReasonName(UnroutableReason::kIdAssignedByServer), "id_assigned_by_server");
  EXPECT_EQ(UnroutableReasonName(UnroutableReason::kRoutingRequired), "routing_required");
}

TEST(ShardRouterTest, EmptyRoutingIsNoRoutingAndEmptyIdIsAnError) {
  const ShardRouter router = MakeRouter(SearchDistribution::kElasticsearch, kEs8Legacy, 8, 8);
  EXPECT_EQ(*router.Route("sEERfFzPSI", ""), ShardRoute::ToShard(1));  // testBWC row
  Result<ShardRoute> empty_id = router.Route("", "x");
  ASSERT_FALSE(empty_id.ok());
  EXPECT_EQ(empty_id.status().message(), "if _id is specified it must not be empty");
}

TEST(ShardRouterTest, InvalidUtf8IsAnErrorNeverAGuess) {
  const ShardRouter router = MakeRouter(SearchDistribution::kElasticsearch, kEs8Legacy, 8, 8);
  Result<ShardRoute> bad_id = router.Route("id\xC3(", std::nullopt);
  ASSERT_FALSE(bad_id.ok());
  EXPECT_EQ(bad_id.status().message(), "_id: invalid UTF-8 at byte offset 2 (byte 0xC3)");
  Result<ShardRoute> bad_routing = router.Route("ok", "\xF8");
  ASSERT_FALSE(bad_routing.ok());
  EXPECT_EQ(bad_routing.status().message(), "routing: invalid UTF-8 at byte offset 0 (byte 0xF8)");
  // Also when the formula would not need the invalid value.
  EXPECT_FALSE(router.Route("\xFF", "fine").ok());
}

TEST(ShardRouterTest, CreateRejectsInvalidMetadata) {
  IndexRoutingSpec spec;
  spec.version_created = kEs8Legacy;
  spec.number_of_shards = 0;
  EXPECT_FALSE(ShardRouter::Create(spec).ok());
  spec.number_of_shards = 5;
  spec.routing_partition_size = 0;
  EXPECT_FALSE(ShardRouter::Create(spec).ok());
  spec.routing_partition_size = 1;
  spec.routing_num_shards = 1024;  // not a multiple of 5
  EXPECT_FALSE(ShardRouter::Create(spec).ok());
  spec.routing_num_shards = 0;
  EXPECT_FALSE(ShardRouter::Create(spec).ok());
  spec.routing_num_shards = -640;
  EXPECT_FALSE(ShardRouter::Create(spec).ok());
  spec.routing_num_shards = 640;
  EXPECT_TRUE(ShardRouter::Create(spec).ok());
  spec.version_created = 0;
  EXPECT_FALSE(ShardRouter::Create(spec).ok());
  spec.version_created = kOpenSearch219;  // with distribution left at Elasticsearch
  EXPECT_FALSE(ShardRouter::Create(spec).ok());
  spec.distribution = SearchDistribution::kOpenSearch;
  EXPECT_TRUE(ShardRouter::Create(spec).ok());
}

// ---- the seed's formula ---------------------------------------------------------------------

// Seed 002 (a Spark "ESShardPartitioner" for es-hadoop) computed
//   shardId = mod(Murmur3HashFunction.hash(key), numPrimaryShards)
// i.e. floorMod(hash, number_of_shards), ignoring routing_num_shards and partitioning. That is
// the pre-7.0 behaviour (and, by coincidence, Elasticsearch ≥ 9_064_0_00); for every index
// created on ES 7.0 .. 9.2 or on OpenSearch with the default routing_num_shards it is wrong.
int32_t SeedPartitionerShard(int32_t hash, int32_t number_of_shards) {
  return FloorMod(hash, number_of_shards);
}

TEST(SeedPartitionerTest, DisagreesWithTheServerOnVectors) {
  int disagreements = 0;
  for (const VectorRow& row : Vectors()) {
    if (row.kind != "shard" || row.partition_size != 1) continue;
    const std::string& key = row.input.empty() ? row.id : row.input;
    const int32_t seed = SeedPartitionerShard(*HashRoutingValue(key), row.num_shards);
    if (row.routing_num_shards == row.num_shards) {
      EXPECT_EQ(seed, row.expected) << "line " << row.line;  // agrees only when rns == n
    } else if (seed != row.expected) {
      ++disagreements;
    }
  }
  EXPECT_GE(disagreements, 3);

  // opensearch-go TestForRouting: "hello", 5 shards, routing_num_shards 640 (the default).
  const ShardRouter router = MakeRouter(SearchDistribution::kOpenSearch, kOpenSearch219, 5, 640);
  EXPECT_EQ(ShardOf(router, std::nullopt, "hello"), 4);
  EXPECT_EQ(SeedPartitionerShard(*HashRoutingValue("hello"), 5), 1);
}

}  // namespace
}  // namespace hammer::search
