// JsonWriter prints exactly what nlohmann's dump prints for the same document: pretty and
// compact, empty and nested containers, escapes, bytes that are not UTF-8, doubles, and when
// it goes on inside a container nlohmann opened.
#include "hammer/stats/report/json_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "hammer/stats/key_stats.h"
#include "hammer/stats/report/json.h"
#include "one_line_reference.h"

namespace hammer::stats {
namespace {

using Json = nlohmann::ordered_json;

// Writes `j` through the writer, value by value.
void Write(JsonWriter& writer, const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      writer.BeginObject();
      for (const auto& [name, value] : j.items()) {
        writer.KeyText(name);
        Write(writer, value);
      }
      writer.EndObject();
      break;
    case Json::value_t::array:
      writer.BeginArray();
      for (const Json& value : j)
        Write(writer, value);
      writer.EndArray();
      break;
    case Json::value_t::string:
      writer.String(j.get_ref<const std::string&>());
      break;
    case Json::value_t::number_unsigned:
      writer.Uint(j.get<uint64_t>());
      break;
    case Json::value_t::number_integer:
      writer.Int(j.get<int64_t>());
      break;
    case Json::value_t::number_float:
      writer.Double(j.get<double>());
      break;
    case Json::value_t::boolean:
      writer.Bool(j.get<bool>());
      break;
    default:
      writer.Null();
  }
}

std::string Dump(const Json& j, bool pretty) {
  return j.dump(pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace);
}

Json Document() {
  Json j;
  j["schema"] = "hammer.summary.v1";
  j["empty_object"] = Json::object();
  j["empty_array"] = Json::array();
  j["nothing"] = nullptr;
  j["yes"] = true;
  j["no"] = false;
  j["count"] = uint64_t{18446744073709551615u};
  j["negative"] = int64_t{-9223372036854775807 - 1};
  j["doubles"] = Json::array({0.0, -0.0, 1.0, 100.0, 13.666666666666666, 1e20, 1.5e-7, 0.0001,
                              123456789012345678.0, std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::infinity()});
  j["strings"] = Json::array({"", "plain /path?q=1&x", "quote \" back \\ slash",
                              "controls \b\f\n\r\t\x01\x1f del \x7f", "utf-8 \xc3\xa9\xe2\x82\xac",
                              "not utf-8 \xff\xfe end", "truncated \xe2\x82"});
  j["nested"] = {{"a", {{"b", Json::array({Json::object(), Json::array({1, 2}), "c"})}}},
                 {"d", Json::array({Json::array()})}};
  Json deep = Json::array({1, 2});  // indentation past the writer's ready-made separators
  for (int i = 0; i < 40; ++i)
    deep = Json::object({{"level", i}, {"inner", std::move(deep)}});
  j["deep"] = std::move(deep);
  return j;
}

TEST(JsonWriterTest, PrintsWhatNlohmannPrints) {
  const Json j = Document();
  for (bool pretty : {true, false}) {
    std::string out;
    JsonWriter writer(&out, pretty);
    Write(writer, j);
    writer.Finish();
    EXPECT_EQ(out, Dump(j, pretty)) << "pretty " << pretty;
  }
}

TEST(JsonWriterTest, WritesContainersFromADepthOnOneLine) {
  {
    std::string out;
    JsonWriter writer(&out, /*pretty=*/true);
    writer.OneLineFrom(1);
    writer.BeginObject();
    writer.Key("a");
    writer.BeginArray();
    writer.Int(int64_t{1});
    writer.BeginObject();
    writer.Key("b");
    writer.Int(int64_t{2});
    writer.EndObject();
    writer.BeginArray();
    writer.EndArray();
    writer.EndArray();
    writer.Key("c");
    writer.Int(int64_t{3});
    writer.EndObject();
    writer.Finish();
    EXPECT_EQ(out, "{\n  \"a\": [1, {\"b\": 2}, []],\n  \"c\": 3\n}");
  }
  const Json j = Document();
  for (size_t from = 0; from <= 4; ++from) {
    std::string out;
    JsonWriter writer(&out, /*pretty=*/true);
    writer.OneLineFrom(from);
    Write(writer, j);
    writer.Finish();
    EXPECT_EQ(out, OneLineReference(j, 0, from)) << "from " << from;
    EXPECT_EQ(Json::parse(out), Json::parse(Dump(j, false)));
  }
  // The reference itself, with no container on one line, is nlohmann's dump(2).
  EXPECT_EQ(OneLineReference(j, 0, 1000), Dump(j, true));
  // Compact text has no lines to keep: OneLineFrom changes nothing.
  std::string compact;
  JsonWriter writer(&compact, /*pretty=*/false);
  writer.OneLineFrom(1);
  Write(writer, j);
  writer.Finish();
  EXPECT_EQ(compact, Dump(j, false));
}

TEST(JsonWriterTest, GoesOnInsideAnObjectNlohmannOpened) {
  Json head;
  head["schema"] = "hammer.summary.v1";
  head["n"] = 1;
  Json whole = head;
  whole["keys"] = Json::array({{{"key", "a"}, {"x", Json::object()}}, {{"key", "b"}}});
  whole["last"] = Json::object();
  for (bool pretty : {true, false}) {
    std::string out = Dump(head, pretty);
    out.resize(out.size() - (pretty ? 2 : 1));  // its closing "\n}" or "}"
    JsonWriter writer(&out, pretty, /*depth=*/1, /*continuing=*/true);
    writer.Key("keys");
    Write(writer, whole["keys"]);
    writer.Key("last");
    Write(writer, whole["last"]);
    writer.Finish();
    out += pretty ? "\n}" : "}";
    EXPECT_EQ(out, Dump(whole, pretty)) << "pretty " << pretty;
  }
}

// The writer makes room in the string ahead of its text: a long document (many times the room
// made at a time, with strings longer than it) comes out whole, and a writer that ends without
// Finish leaves exactly its text.
TEST(JsonWriterTest, LongDocumentsComeOutWhole) {
  Json rows = Json::array();
  for (int i = 0; i < 3000; ++i) {
    rows.push_back({{"key", "/item/" + std::to_string(i)},
                    {"n", i},
                    {"mean", i / 7.0},
                    {"long", std::string(static_cast<size_t>(i % 5 == 0 ? 9000 : 3), 'x')}});
  }
  for (bool pretty : {true, false}) {
    std::string out = "prefix ";
    {
      JsonWriter writer(&out, pretty);
      Write(writer, rows);
    }
    EXPECT_EQ(out, "prefix " + Dump(rows, pretty)) << "pretty " << pretty;
  }
}

// After Finish the string is the caller's again: text appended to it directly stays, and the
// writer goes on after it.
TEST(JsonWriterTest, GoesOnAfterTextAppendedBetweenFinishes) {
  std::string out;
  {
    JsonWriter writer(&out, /*pretty=*/false);
    writer.BeginArray();
    writer.Uint(uint64_t{1});
    writer.Finish();
    EXPECT_EQ(out, "[1");
    out += ",\"by hand\"";
    writer.Uint(uint64_t{2});
    writer.EndArray();
    writer.Finish();
    writer.Finish();  // twice is once
    EXPECT_EQ(out, R"([1,"by hand",2])");
    out += "\n";
  }
  EXPECT_EQ(out, "[1,\"by hand\",2]\n");  // the writer's end leaves the appended text
}

// Strings and member names are checked eight bytes at a time: a byte that needs escaping (or
// is not ASCII) is found at every offset of a word and of the tail, and bytes just inside the
// printable range pass as they are.
TEST(JsonWriterTest, EscapesEveryByteThatNeedsItWhereverItIs) {
  const std::string plain = "abcdefghijklmnopqrst";  // two words and a tail of four
  for (int byte = 0; byte < 256; ++byte) {
    for (size_t at = 0; at < plain.size(); ++at) {
      std::string text = plain;
      text[at] = static_cast<char>(byte);
      std::string out;
      JsonWriter writer(&out, /*pretty=*/false);
      writer.String(text);
      writer.Finish();
      ASSERT_EQ(out, Dump(Json(text), false)) << "byte " << byte << " at " << at;
      // As a member name, in both layouts.
      for (bool pretty : {true, false}) {
        Json object = Json::object();
        object[text] = nullptr;
        out.clear();
        JsonWriter names(&out, pretty);
        names.BeginObject();
        names.KeyText(text);
        names.Null();
        names.EndObject();
        names.Finish();
        ASSERT_EQ(out, Dump(object, pretty)) << "byte " << byte << " at " << at;
      }
    }
  }
}

// Doubles take nlohmann's conversion directly: integral values get ".0", others the shortest
// text that reads back, very large and small ones an exponent.
TEST(JsonWriterTest, PrintsDoublesAsNlohmannDoes) {
  std::vector<double> values = {5735.0,   0.5,  1.0 / 3, 2.0 / 3, 1e-300, 1.7976931348623157e308,
                                4.9e-324, 1e16, 1e17,    123.456, -0.1,   9007199254740993.0};
  for (int i = 1; i < 2000; ++i)
    values.push_back(static_cast<double>(i * 7919 % 100003) / (i % 97 + 1));
  // Integral values take a shortcut up to 10^15, where nlohmann's format takes an exponent.
  for (double value : {0.0, -0.0, 1.0, -1.0, 7.0, 2671.0, 1e14, 999999999999999.0, 1e15, 1e15 + 2,
                       9007199254740992.0, 1e15 - 0.5, 0.5, -2671.0})
    values.push_back(value);
  for (int i = 0; i < 2000; ++i)
    values.push_back(static_cast<double>(int64_t{i} * 48271 * 48271 % 1'000'000'000'000'000));
  for (double value : values) {
    std::string out;
    JsonWriter writer(&out, /*pretty=*/false);
    writer.Double(value);
    writer.Finish();
    ASSERT_EQ(out, Dump(Json(value), false)) << value;
  }
}

// A name checked by the compiler (JsonName) prints as the same name checked at run time, as a
// first and a later member, at every depth, past the writer's ready-made indentation too.
TEST(JsonWriterTest, CompiledNamesPrintAsRunTimeNames) {
  for (bool pretty : {true, false}) {
    std::string compiled;
    std::string run_time;
    JsonWriter a(&compiled, pretty);
    JsonWriter b(&run_time, pretty);
    for (int depth = 0; depth < 40; ++depth) {
      a.BeginObject();
      b.BeginObject();
      a.Key("p99_9_us");
      b.KeyText("p99_9_us");
      a.Uint(uint64_t{7});
      b.Uint(uint64_t{7});
      a.Key("inner");
      b.KeyText("inner");
    }
    a.Null();
    b.Null();
    for (int depth = 0; depth < 40; ++depth) {
      a.EndObject();
      b.EndObject();
    }
    a.Finish();
    b.Finish();
    EXPECT_EQ(compiled, run_time) << "pretty " << pretty;
    EXPECT_TRUE(Json::accept(compiled));
  }
  constexpr JsonName kLongest = "abcdefghijklmnopqrstuvwxyz012345";  // JsonName::kMaxSize bytes
  EXPECT_EQ(kLongest.quoted(false), "\"abcdefghijklmnopqrstuvwxyz012345\":");
  EXPECT_EQ(kLongest.quoted(true), "\"abcdefghijklmnopqrstuvwxyz012345\": ");
}

// OutcomeJson is WriteOutcome's text parsed: both print the same.
TEST(JsonWriterTest, OutcomeMembersMatchOutcomeJson) {
  KeyStats stats;
  EXPECT_EQ(OutcomeJson(stats).dump(), R"({"requests":0,"succeeded":0,"failed":0,"failures":{},)"
                                       R"("latency":null})");
  for (int64_t micros : {3, 12, 40, 40, 2'000'000})
    stats.RecordSuccess(micros);
  stats.RecordFailure(Failure::kTimeout);
  stats.RecordFailure(std::nullopt);
  std::string out;
  JsonWriter writer(&out, /*pretty=*/true);
  writer.BeginObject();
  WriteOutcome(writer, stats);
  writer.EndObject();
  writer.Finish();
  EXPECT_EQ(out, OutcomeJson(stats).dump(2));
  const Json parsed = Json::parse(out);
  EXPECT_EQ(parsed["requests"], 7);
  EXPECT_EQ(parsed["failures"]["timeout"], 1);
  EXPECT_EQ(parsed["failures"]["untyped"], 1);
  EXPECT_EQ(parsed["latency"]["min_us"], 3);
  EXPECT_EQ(parsed["latency"]["max_us"], 2'000'000);
  EXPECT_EQ(parsed["latency"]["p50_us"], 40);
  EXPECT_DOUBLE_EQ(parsed["latency"]["mean_us"].get<double>(), 2'000'095.0 / 5);
}

}  // namespace
}  // namespace hammer::stats
